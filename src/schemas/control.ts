import { Type } from '@sinclair/typebox'
import { Guid } from './common.js'

/** Schemas of the control plane (/_sandbox). */

export const AgencyIdParams = Type.Object({ agencyId: Type.Integer({ minimum: 1, maximum: 2147483647 }) })

export const AgencyPatchBody = Type.Object(
  {
    connected: Type.Optional(Type.Boolean({ description: 'false: writes are saved (202); true: pending writes are applied now' })),
    active: Type.Optional(Type.Boolean({ description: 'false: the agency is no longer an active customer (403)' })),
    supportsIncludes: Type.Optional(Type.Boolean({ description: 'false: version 3.0 ignores include' })),
    defaultOfficeId: Type.Optional(Type.Integer({ minimum: 1 }))
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
  clientNumber: Type.Optional(Type.Integer({ minimum: 1 }))
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

export const AttachmentParams = Type.Object({
  agencyId: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  refId: Guid
})
