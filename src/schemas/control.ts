import { Type } from '@sinclair/typebox'
import { Guid, ScopeSchema } from './common.js'

/** Schemas of the control plane (/_sandbox). */

/** Longest glob the control API accepts (journal `path` query, fault `match.path`; src/domain/glob.ts). */
export const MAX_GLOB_LENGTH = 256

/**
 * An id in a control path or query: 1 to 2147483647. Integers in paths and queries are checked
 * as plain digits within their schema's range before validation (src/plugins/plain-integers.ts).
 */
const Id = () => Type.Integer({ minimum: 1, maximum: 2147483647 })

export const AgencyIdParams = Type.Object({ agencyId: Id() })

export const AgencyPatchBody = Type.Object(
  {
    connected: Type.Optional(Type.Boolean({ description: 'false: writes are saved (202); true: pending writes are applied now' })),
    active: Type.Optional(Type.Boolean({ description: 'false: the agency is no longer an active customer (403)' })),
    supportsIncludes: Type.Optional(Type.Boolean({ description: 'false: version 3.0 ignores include' })),
    defaultOfficeId: Type.Optional(Type.Integer({ minimum: 0, description: 'an office of the agency that is not archived (0 is the agency-level office)' }))
  },
  { additionalProperties: false, minProperties: 1 }
)

export const AgencyStateSchema = Type.Object({
  agencyId: Type.Integer(),
  name: Type.String(),
  active: Type.Boolean(),
  connected: Type.Boolean(),
  supportsIncludes: Type.Boolean(),
  defaultOfficeId: Type.Integer(),
  appliedPendingWrites: Type.Integer({ description: 'pending writes applied by this call' })
})

export const WRITE_KINDS = ['log', 'attachment', 'receipt', 'client'] as const

export const WritesQuery = Type.Object({
  kind: Type.Optional(Type.Union(WRITE_KINDS.map((k) => Type.Literal(k)))),
  status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('applied')])),
  clientNumber: Type.Optional(Id())
})

export const WriteViewSchema = Type.Object({
  seq: Type.Integer({ description: 'arrival order' }),
  refId: Type.String(),
  kind: Type.String(),
  status: Type.String(),
  clientNumber: Type.Integer(),
  integration: Type.String({ description: 'Client Id that sent it' }),
  version: Type.String(),
  receivedAt: Type.String(),
  appliedAt: Type.Union([Type.String(), Type.Null()]),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'the decoded fields, task included' })
})

export const AttachmentParams = Type.Object({ agencyId: Id(), refId: Guid })

export const ClientNumberParams = Type.Object({ agencyId: Id(), clientNumber: Id() })
export const OfficeParams = Type.Object({ agencyId: Id(), officeId: Id() })
export const UserParams = Type.Object({ agencyId: Id(), userId: Id() })
export const IntegrationParams = Type.Object({ clientId: Type.String({ minLength: 1 }) })
export const SubscriptionParams = Type.Object({ clientId: Type.String({ minLength: 1 }), agencyId: Id() })

export const SubscriptionPatchBody = Type.Object(
  {
    scopes: Type.Optional(Type.Array(ScopeSchema, { uniqueItems: true })),
    optedOut: Type.Optional(Type.Boolean())
  },
  { additionalProperties: false, minProperties: 1 }
)

export const ClientSearchQuery = Type.Object({
  q: Type.Optional(Type.String({ description: 'text in a name, an address, a policy number, or the client number' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 }))
})

/** A client in read-model form (PUT): as in fixtures, `clientNumber` and `details.modified` optional. */
export const ClientPutBody = Type.Object(
  { clientNumber: Type.Optional(Type.Integer({ minimum: 1 })), details: Type.Object({}, { additionalProperties: true }) },
  { additionalProperties: true, description: 'a client of the read model (see fixtures/schema.json); details.modified defaults to the sandbox clock' }
)

export const ClientPatchBody = Type.Object(
  {
    details: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'merged key by key into the stored details' })),
    people: Type.Optional(Type.Array(Type.Unknown())),
    contacts: Type.Optional(Type.Array(Type.Unknown())),
    claims: Type.Optional(Type.Array(Type.Unknown())),
    policies: Type.Optional(Type.Array(Type.Unknown())),
    invoices: Type.Optional(Type.Array(Type.Unknown())),
    deleted: Type.Optional(Type.Boolean())
  },
  { additionalProperties: false, minProperties: 1, description: 'groups given replace the stored ones; modified moves to the sandbox clock' }
)

export const ClockSchema = Type.Object({ now: Type.String(), frozen: Type.Boolean() })
/** The clock after PUT: `movedBackwards: true` when it now reads earlier than it did before the call. */
export const ClockSetSchema = Type.Object({
  now: Type.String(),
  frozen: Type.Boolean(),
  movedBackwards: Type.Optional(Type.Boolean({ description: 'present (true) only when the clock was set earlier than it read' }))
})
export const ClockPutBody = Type.Object(
  {
    now: Type.Optional(Type.String({ description: 'ISO 8601 date-time (no zone means UTC)' })),
    frozen: Type.Optional(Type.Boolean({ description: 'true: time stands still until advanced' }))
  },
  { additionalProperties: false, minProperties: 1 }
)
/** The clock after an advance; with a clock-time simulator, what the advance's catch-up made. */
export const ClockAdvancedSchema = Type.Object({
  now: Type.String(),
  frozen: Type.Boolean(),
  simulator: Type.Optional(Type.Object({
    changes: Type.Integer({ description: 'changes the simulator made for the period, spread over it' }),
    skipped: Type.Integer({ description: 'changes the period would have seen past the cap of 10,000 per advance (0 within it)' })
  }, { description: 'present while a clock-time simulator runs' }))
})
export const ClockAdvanceBody = Type.Object(
  { seconds: Type.Number({ exclusiveMinimum: 0, maximum: 315_360_000, description: 'how far to move the clock forward' }) },
  { additionalProperties: false }
)

export const RequestsQuery = Type.Object({
  method: Type.Optional(Type.String()),
  path: Type.Optional(Type.String({ maxLength: MAX_GLOB_LENGTH, description: `path glob: * within a segment, ** across, ? one character (at most ${MAX_GLOB_LENGTH} characters)` })),
  agencyId: Type.Optional(Id()),
  status: Type.Optional(Type.Integer({ minimum: 0, maximum: 599, description: 'the answer\'s status; 0 for a dropped connection' })),
  since: Type.Optional(Type.String({ description: 'an entry id (entries after it) or an ISO time' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000 }))
})

export const FaultInputBody = Type.Object(
  {
    match: Type.Optional(Type.Object(
      {
        method: Type.Optional(Type.String()),
        path: Type.Optional(Type.String({ maxLength: MAX_GLOB_LENGTH, description: `glob over the path: * within a segment, ** across, ? one character (e.g. /vendor/agency/*/client; at most ${MAX_GLOB_LENGTH} characters)` })),
        version: Type.Optional(Type.Union([Type.Literal('4.0'), Type.Literal('3.0'), Type.Literal('1')])),
        clientId: Type.Optional(Type.String()),
        agencyId: Type.Optional(Type.Integer())
      },
      { additionalProperties: false }
    )),
    effect: Type.Object(
      {
        status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
        body: Type.Optional(Type.Unknown()),
        headers: Type.Optional(Type.Record(Type.String(), Type.String())),
        delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 120_000 })),
        drop: Type.Optional(Type.Boolean({ description: 'close the connection without answering (the request is not handled)' })),
        dropAnswer: Type.Optional(Type.Boolean({
          description: 'handle the request (a write is applied), then close the connection instead of sending the answer: the answer a flaky network loses'
        }))
      },
      { additionalProperties: false }
    ),
    times: Type.Optional(Type.Integer({ minimum: 1, description: 'affect at most this many requests' })),
    every: Type.Optional(Type.Integer({ minimum: 1, description: 'affect every Nth matching request' })),
    probability: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    seed: Type.Optional(Type.Integer({ description: 'seed of the probability draws (default 1)' }))
  },
  { additionalProperties: false }
)
export const FaultIdParams = Type.Object({ id: Type.String() })

export const SimulatorBody = Type.Object(
  {
    ratePerMinute: Type.Number({ exclusiveMinimum: 0, maximum: 60000, description: 'changes per minute' }),
    seed: Type.Integer({ description: 'the same seed makes the same changes' }),
    agencies: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { description: 'agencies to change (default: every active agency)' })),
    clockTime: Type.Optional(Type.Boolean({ description: 'true: changes happen only when the clock is advanced (POST /_sandbox/clock/advance)' }))
  },
  { additionalProperties: false }
)
