import { Type, type Static } from '@sinclair/typebox'

/**
 * Schemas of the examiner: sessions that record one test run of one integration, the mirror
 * a partner declares after its sync, and the report that judges the run rule by rule.
 */

/** Most requests recorded per session; beyond it recording stops and the session is marked capped. */
export const SESSION_REQUEST_CAP = 200_000
/** Examples kept per finding. */
export const EXAMPLES_PER_FINDING = 5
/** Client numbers listed per sync set (the count is always whole). */
export const CLIENT_NUMBERS_PER_SET = 100
/** Most client numbers in one posted mirror. */
export const MIRROR_CLIENTS_MAX = 100_000

export const SessionIdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) })

export const SessionStartBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a label for the run, e.g. "nightly sync"' })),
    clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the Client Id whose requests are recorded (absent: every integration)' }))
  },
  { additionalProperties: false }
)
export type SessionStart = Static<typeof SessionStartBody>

export const SessionSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    clientId: Type.Union([Type.String(), Type.Null()], { description: 'null: requests of every integration are recorded' }),
    startedAt: Type.String({ description: 'sandbox clock, ISO 8601' }),
    endedAt: Type.Optional(Type.String({ description: 'sandbox clock, ISO 8601; absent while the session is open' })),
    endedBy: Type.Optional(Type.Union([Type.Literal('end'), Type.Literal('reset')], {
      description: 'what ended it: asked to (end), or a reset of its world while it was open (reset); absent while open'
    })),
    recorded: Type.Integer({ description: 'requests recorded' }),
    capped: Type.Boolean({ description: `true: the session reached ${SESSION_REQUEST_CAP} requests and stopped recording` })
  },
  { title: 'Session' }
)
export type Session = Static<typeof SessionSchema>

export const MirrorBody = Type.Object(
  {
    agencyId: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    clients: Type.Array(
      Type.Object(
        {
          clientNumber: Type.Integer({ minimum: 1, maximum: 2147483647 }),
          modified: Type.String({ description: 'the client\'s modified time as the partner stored it (ISO 8601)' })
        },
        { additionalProperties: false }
      ),
      { maxItems: MIRROR_CLIENTS_MAX, description: 'every client the partner has stored for the agency' }
    ),
    upTo: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'compare only client numbers up to this value (a partial mirror)' }))
  },
  { additionalProperties: false, title: 'Mirror' }
)
export type Mirror = Static<typeof MirrorBody>

export const MirrorAcceptedSchema = Type.Object({
  agencyId: Type.Integer(),
  clients: Type.Integer({ description: 'client numbers stored for the comparison' })
})

export const SEVERITIES = ['error', 'warning', 'info'] as const
export type Severity = (typeof SEVERITIES)[number]
export const SeveritySchema = Type.Union(SEVERITIES.map((s) => Type.Literal(s)))

/** no-evidence: the session saw no request of its Client Id, or no sync (no changed-clients listing, no client read). */
export const VERDICTS = ['pass', 'warn', 'fail', 'no-evidence'] as const
export type Verdict = (typeof VERDICTS)[number]
export const VerdictSchema = Type.Union(VERDICTS.map((v) => Type.Literal(v)))

export const ExampleSchema = Type.Object({
  journalId: Type.Integer({ description: 'id of the request in the journal (GET /_sandbox/requests); 0 when the journal did not keep it (SANDBOX_JOURNAL_SIZE=0)' }),
  method: Type.String(),
  path: Type.String(),
  status: Type.Integer({ description: '0: the connection was dropped' }),
  detail: Type.Optional(Type.String({ description: 'what this request did wrong, e.g. "sent 2 s after a 429 asking for 10 s"' }))
})
export type Example = Static<typeof ExampleSchema>

export const FindingSchema = Type.Object(
  {
    rule: Type.String({ description: 'stable rule id, see RULES' }),
    severity: SeveritySchema,
    count: Type.Integer({ description: 'occurrences' }),
    message: Type.String({ description: 'what was seen in this session' }),
    fix: Type.String(),
    examples: Type.Array(ExampleSchema, { maxItems: EXAMPLES_PER_FINDING })
  },
  { title: 'Finding' }
)
export type Finding = Static<typeof FindingSchema>

/** Some client numbers: how many, and the first CLIENT_NUMBERS_PER_SET of them ascending. */
export const ClientSetSchema = Type.Object({
  count: Type.Integer(),
  clientNumbers: Type.Array(Type.Integer(), { maxItems: CLIENT_NUMBERS_PER_SET })
})
export type ClientSet = Static<typeof ClientSetSchema>

export const SyncCheckSchema = Type.Object(
  {
    agencyId: Type.Integer(),
    source: Type.Union([Type.Literal('declared'), Type.Literal('inferred')], {
      description: 'declared: compared with the mirror the partner posted; inferred: from the requests it made'
    }),
    upTo: Type.Optional(Type.Integer({ description: 'declared: only client numbers up to this value were compared' })),
    asOf: Type.Optional(Type.String({ description: 'inferred: the truth compared is the agency as of the last changed-clients call' })),
    missing: ClientSetSchema,
    stale: ClientSetSchema,
    deletedKept: ClientSetSchema,
    unknown: ClientSetSchema
  },
  { title: 'SyncCheck' }
)
export type SyncCheck = Static<typeof SyncCheckSchema>

/** Statuses a go-live checklist or coverage table names. */
export const COVERAGE_OUTCOMES = [200, 202, 400, 401, 403, 404, 409, 429] as const

export const OperationCoverageSchema = Type.Object({
  version: Type.String(),
  operation: Type.String({ description: 'operation id, e.g. getClient' }),
  outcomes: Type.Record(Type.String({ pattern: '^\\d{1,3}$' }), Type.Integer(), { description: 'status → requests answered with it (0: dropped connection)' })
})
export type OperationCoverage = Static<typeof OperationCoverageSchema>

export const CHECKLIST_ITEMS = ['202-handled', '429-handled', '403-handled'] as const
export type ChecklistItem = (typeof CHECKLIST_ITEMS)[number]

export const ChecklistEntrySchema = Type.Object({
  item: Type.Union(CHECKLIST_ITEMS.map((c) => Type.Literal(c))),
  title: Type.String(),
  exercised: Type.Boolean(),
  journalId: Type.Optional(Type.Integer({ description: 'a request that exercised it' }))
})
export type ChecklistEntry = Static<typeof ChecklistEntrySchema>

export const CoverageSchema = Type.Object({
  operations: Type.Array(OperationCoverageSchema, { description: 'every operation of each version the session used, in table order' }),
  notExercised: Type.Array(Type.Object({ version: Type.String(), operation: Type.String() })),
  checklist: Type.Array(ChecklistEntrySchema)
})
export type Coverage = Static<typeof CoverageSchema>

/** What one rule came to: pass, fail (an error finding), warn (a warning), or not-exercised (the run gave it nothing to judge). */
export const RULE_OUTCOMES = ['pass', 'fail', 'warn', 'not-exercised'] as const
export type RuleOutcomeName = (typeof RULE_OUTCOMES)[number]

/**
 * The version of the rules' meaning: raised whenever a rule is added, removed, or judges
 * otherwise (a test holds the catalogue to the version it was last raised for).
 */
export const RULES_VERSION = 2

export const RuleResultSchema = Type.Object({
  id: Type.String({ description: 'the rule\'s id (RULES)' }),
  severity: SeveritySchema,
  outcome: Type.Union(RULE_OUTCOMES.map((o) => Type.Literal(o)), {
    description: 'pass; fail (error) or warn (warning) with a finding; not-exercised: nothing in the run gave the rule something to judge (and the go-live checklist\'s items not exercised)'
  }),
  count: Type.Integer({ description: 'occurrences found (0: none)' })
}, { title: 'RuleResult' })
export type RuleResult = Static<typeof RuleResultSchema>

export const JudgedBySchema = Type.Object({
  version: Type.String({ description: 'the version of agency-sandbox that judged the session' }),
  build: Type.String({ description: 'the code that judged: git:<commit> (a clean checkout), sha256:<hex> of the built bundle, or unknown (not built)' }),
  rulesVersion: Type.Integer({ description: 'the version of the rules\' meaning (RULES_VERSION)' }),
  rules: Type.Array(RuleResultSchema, { description: 'every rule evaluated, in catalogue order, with its outcome' })
}, { title: 'JudgedBy' })
export type JudgedBy = Static<typeof JudgedBySchema>

export const EvidenceSchema = Type.Object({
  requests: Type.Integer({ description: 'requests recorded of the session\'s Client Id (of any, for a session of every integration)' }),
  listings: Type.Integer({ description: 'changed-clients listings answered 200' }),
  clientReads: Type.Integer({ description: 'client reads (one client or a batch) answered 200' })
}, { title: 'Evidence', description: 'what the run gave to judge: without a request, or without a listing or a client read, the verdict is no-evidence' })
export type Evidence = Static<typeof EvidenceSchema>

export const ReportWorldSchema = Type.Object({
  id: Type.String({ description: 'the world the session belongs to (default: the default world)' }),
  name: Type.String(),
  tenant: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()], { description: 'the tenant that owns the world (null: the administrator\'s)' }),
  startDigest: Type.String({ description: 'SHA-256 (hex) of what the world\'s data was loaded from: the fixture file (the default world), the fixture posted, or the snapshot a world in memory began as' })
}, { title: 'ReportWorld' })
export type ReportWorld = Static<typeof ReportWorldSchema>

export const SignerSchema = Type.Object({
  keyId: Type.String({ description: 'the signing key\'s id (as signature.keyId)' }),
  name: Type.String({ description: 'who holds the key (SANDBOX_SIGNER_NAME)' })
}, { title: 'Signer' })
export type Signer = Static<typeof SignerSchema>

/**
 * The signature of an ended session's report, when the sandbox has a signing key
 * (SANDBOX_SIGNING_KEY): over the canonical JSON (RFC 8785) of the whole report, this block
 * included but for its `value` (src/domain/examiner/signature.ts). These members and no others.
 */
export const ReportSignatureSchema = Type.Object(
  {
    algorithm: Type.Literal('Ed25519'),
    keyId: Type.String({ description: 'SHA-256 of the public key in DER (SubjectPublicKeyInfo), lower-case hex; GET /_sandbox/signing-keys lists the keys' }),
    signedAt: Type.String({ description: 'when this copy was signed: real time, not the sandbox clock (ISO 8601)' }),
    final: Type.Literal(true, { description: 'the report the session ended with, kept: only those are signed' }),
    value: Type.String({ description: 'base64 Ed25519 signature of the UTF-8 canonical JSON (RFC 8785) of the report without signature.value' })
  },
  { title: 'ReportSignature', additionalProperties: false }
)
export type ReportSignature = Static<typeof ReportSignatureSchema>

export const ReportSchema = Type.Object(
  {
    session: SessionSchema,
    verdict: VerdictSchema,
    evidence: EvidenceSchema,
    findings: Type.Array(FindingSchema, { description: 'errors first, then warnings, then info; by rule order within a severity' }),
    sync: Type.Array(SyncCheckSchema),
    coverage: CoverageSchema,
    judgedBy: JudgedBySchema,
    world: ReportWorldSchema,
    signer: Type.Optional(SignerSchema),
    signature: Type.Optional(ReportSignatureSchema)
  },
  { title: 'Report' }
)
export type Report = Static<typeof ReportSchema>

/** What ending a session answers: the verdict and the findings without examples. */
export const ReportSummarySchema = Type.Object(
  {
    session: SessionSchema,
    verdict: VerdictSchema,
    evidence: EvidenceSchema,
    counts: Type.Object({ error: Type.Integer(), warning: Type.Integer(), info: Type.Integer() }, { description: 'findings per severity' }),
    findings: Type.Array(Type.Object({ rule: Type.String(), severity: SeveritySchema, count: Type.Integer(), message: Type.String() }))
  },
  { title: 'ReportSummary' }
)
export type ReportSummary = Static<typeof ReportSummarySchema>

/** The public key the sandbox signs ended sessions' reports with (GET /_sandbox/signing-key; one entry of GET /_sandbox/signing-keys). */
export const SigningKeySchema = Type.Object(
  {
    algorithm: Type.Literal('Ed25519'),
    keyId: Type.String({ description: 'SHA-256 of the public key in DER (SubjectPublicKeyInfo), lower-case hex: the keyId of the reports it signs' }),
    publicKey: Type.String({ description: 'the public key, PEM (BEGIN PUBLIC KEY)' }),
    signer: Type.String({ description: 'who holds the key (SANDBOX_SIGNER_NAME), as signed reports name their signer' })
  },
  { title: 'SigningKey' }
)
export type SigningKeyView = Static<typeof SigningKeySchema>

/** Every public key a report of this sandbox may be signed with: the current one and those before it (GET /_sandbox/signing-keys). */
export const SigningKeysSchema = Type.Object(
  {
    signer: Type.String({ description: 'who holds the keys (SANDBOX_SIGNER_NAME)' }),
    current: Type.Union([Type.String(), Type.Null()], { description: 'the id of the key that signs now (null: the sandbox signs no more reports)' }),
    keys: Type.Array(Type.Object({
      algorithm: Type.Literal('Ed25519'),
      keyId: Type.String(),
      publicKey: Type.String({ description: 'PEM (BEGIN PUBLIC KEY)' }),
      status: Type.Union([Type.Literal('current'), Type.Literal('previous')], { description: 'previous: signed reports before the current key (SANDBOX_SIGNING_KEYS_PREVIOUS)' })
    }), { description: 'the current key first' })
  },
  { title: 'SigningKeys' }
)
export type SigningKeysView = Static<typeof SigningKeysSchema>

export const SigningKeyQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('pem')], { description: 'pem: the public key alone, as a .pem file' }))
})

export const ReportQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('junit'), Type.Literal('html')])),
  final: Type.Optional(Type.Boolean({ description: 'true: only the report the session ended with; a session still open is a 409 (its report so far is provisional)' }))
})

export interface RuleDefinition {
  /** Stable id, used in reports, JUnit test case names and --fail-on. */
  id: string
  severity: Severity
  /** One line: what the integration did. */
  title: string
  fix: string
}

/** The rule catalogue, in report order. */
export const RULES: readonly RuleDefinition[] = [
  { id: 'retry-after-ignored', severity: 'error', title: 'A request was repeated before the Retry-After of its 429 had passed.', fix: 'After a 429, wait at least the Retry-After seconds before sending the same request again.' },
  { id: 'write-resent-after-202', severity: 'error', title: 'A write answered 202 (saved for later) was sent again with the same content under a new RefId.', fix: 'Treat 202 as success: the write is applied when the agency connects; sending it again gives the agency duplicates.' },
  { id: 'write-retried-new-refid', severity: 'error', title: 'The same write content was sent again under a new RefId after a 200 or a dropped connection.', fix: 'Generate the RefId once per write and reuse it on every retry; the service answers a repeated RefId without applying it twice.' },
  { id: 'refid-conflict', severity: 'error', title: 'A RefId was reused with a different body.', fix: 'Use a new RefId for each distinct write; reuse a RefId only to retry exactly the same write.' },
  { id: 'n-plus-one-reads', severity: 'warning', title: '20 or more single-client reads of one agency within a minute where a batch read would do.', fix: 'Read clients in batches of up to 200 with POST /vendor/agency/{agencyId}/clients.' },
  { id: 'batch-over-limit', severity: 'error', title: 'A batch read asked for more than 200 clients.', fix: 'Split batch reads into chunks of at most 200 client numbers.' },
  { id: 'full-sync-repeated', severity: 'warning', title: 'Changed clients were listed without asOf again for an agency already fully listed in the session.', fix: 'After the first full listing, pass asOf = the time of the previous sync to get only the clients changed since.' },
  { id: 'deleted-never-synced', severity: 'error', title: 'The agency has deleted clients and the session never asked for them.', fix: 'List deleted clients (GET /vendor/agency/{agencyId}/clients?deleted=true&asOf=…) and remove them from your mirror.' },
  { id: 'create-rate-exceeded', severity: 'warning', title: 'Create-client calls were refused with 429 for exceeding the creation rate.', fix: 'Pace client creations under the documented rate and honour Retry-After.' },
  { id: 'auth-failed', severity: 'error', title: 'Requests were refused with 401 (missing or wrong credentials).', fix: 'Send Basic credentials of the integration (Client Id and secret) on every request; check the secret configured for this environment.' },
  { id: 'agency-not-listed', severity: 'warning', title: 'Requests went to agencies the session never got from the agencies call.', fix: 'Call GET /vendor/agencies first and work only with the agencies it returns; subscriptions change.' },
  { id: 'unknown-fields', severity: 'warning', title: 'Body keys or query parameters the service ignores were sent.', fix: 'Remove or correct the named keys; a misspelt key is ignored silently by the live service.' },
  { id: 'mirror-missing', severity: 'error', title: 'The declared mirror lacks clients the agency has.', fix: 'Read every client id returned by the changed-clients call and store each client.' },
  { id: 'mirror-stale', severity: 'error', title: 'The declared mirror holds clients older than their latest change.', fix: 'Sync with asOf = the start time of the previous sync and re-read every changed client.' },
  { id: 'mirror-deleted-kept', severity: 'error', title: 'The declared mirror keeps clients the agency has deleted.', fix: 'List deleted clients with deleted=true and remove them from your mirror.' },
  { id: 'mirror-unknown', severity: 'error', title: 'The declared mirror holds client numbers the agency never had.', fix: 'Store only client numbers returned by the service for that agency.' },
  { id: 'sync-missed', severity: 'error', title: 'Clients listed by the changed-clients call were never read.', fix: 'Read every client id the changed-clients call returns (batches of up to 200).' },
  { id: 'sync-stale', severity: 'error', title: 'Clients were last read before their latest change, which a later listing reported.', fix: 'Pass asOf = the start time of the previous sync and re-read the clients it returns.' },
  { id: 'deletion-missed', severity: 'error', title: 'Clients deleted before the last listing were never observed as deleted.', fix: 'List deleted clients (deleted=true with asOf) on every sync and remove them from your mirror.' },
  { id: 'checklist-incomplete', severity: 'info', title: 'Go-live checklist items were not exercised (a 202, a 429 or a 403 handled).', fix: 'Inject the answers with fault rules or agency settings (disconnected agency, rate limits, revoked scopes) and run the integration through them.' }
]

export const RULE_IDS = RULES.map((r) => r.id)
export type RuleId = (typeof RULES)[number]['id']
