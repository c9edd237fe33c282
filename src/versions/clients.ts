import { Type, type TSchema } from '@sinclair/typebox'
import { ClientSchema, type IncludeMode } from '../schemas/client.js'
import { Nullable } from '../schemas/common.js'
import type { ApiVersion } from './index.js'
import { toV1Policy, V1PolicySchema } from './v1-policy.js'

/**
 * Clients per version. The domain stores the 4.0 read model; 3.0 answers it as is, and version 1
 * is mapped down: `id` for `clientNumber`, `allowCrossSell` and `clientType` at the top level,
 * integer (legacy) ids on sub-records, policies in the version 1 shape (src/versions/v1-policy.ts),
 * no include parameter and no invoices.
 */

/** A stored client, as far as version 1 reads it (each group the stored JSON text). */
export interface StoredClient {
  clientNumber: number
  details: string
  people: string
  contacts: string
  claims: string
  policies: string
}

type Rec = Record<string, unknown>
const legacy = (r: Rec | undefined): number | null => (typeof r?.legacyId === 'number' ? r.legacyId : null)

/** Version 1 shape of a sub-record: its integer legacy id as `id`. */
function v1Record (r: Rec): Rec {
  const { id: _id, legacyId, ...rest } = r
  return { id: typeof legacyId === 'number' ? legacyId : null, ...rest }
}

/** The version 1 client (a plain object; version 1 is not a hot path). */
export function toV1Client (row: StoredClient): Rec {
  const { id: _id, allowCrossSell, clientType, mainContacts, ...details } = JSON.parse(row.details) as Rec
  const people = JSON.parse(row.people) as Rec[]
  const policies = JSON.parse(row.policies) as Rec[]
  const personLegacy = new Map(people.map((p) => [String(p.id).toLowerCase(), legacy(p)]))
  const peopleByGuid = new Map(people.map((p) => [String(p.id).toLowerCase(), p]))
  const byGuid = (map: Map<string, number | null>, guid: unknown) => (typeof guid === 'string' ? map.get(guid.toLowerCase()) ?? null : null)
  return {
    id: row.clientNumber,
    allowCrossSell: allowCrossSell ?? null,
    clientType: clientType ?? null,
    details: { ...details, mainContacts: Array.isArray(mainContacts) ? mainContacts.map((g) => byGuid(personLegacy, g)) : [] },
    people: people.map(v1Record),
    contacts: (JSON.parse(row.contacts) as Rec[]).map((c) => ({ ...v1Record(c), personId: byGuid(personLegacy, c.personId) })),
    claims: (JSON.parse(row.claims) as Rec[]).map(v1Record),
    policies: policies.map((p) => toV1Policy(p, peopleByGuid))
  }
}

const open = { additionalProperties: true }
const V1Record = Type.Object({ id: Nullable(Type.Integer()) }, open)

/** Version 1 client read model. */
export const V1ClientSchema = Type.Object(
  {
    id: Type.Integer({ description: 'the client number' }),
    allowCrossSell: Nullable(Type.Boolean()),
    clientType: Nullable(Type.String()),
    details: Type.Object({
      modified: Type.String(),
      agencyNum: Type.Optional(Nullable(Type.String({ description: 'a string (never a JSON number)' }))),
      officeId: Type.Integer({ format: 'int32' }),
      mainContacts: Type.Array(Nullable(Type.Integer()))
    }, open),
    people: Type.Array(V1Record),
    contacts: Type.Array(Type.Object({ id: Nullable(Type.Integer()), personId: Nullable(Type.Integer()) }, open)),
    claims: Type.Array(V1Record),
    policies: Type.Array(V1PolicySchema)
  },
  { title: 'ClientV1', additionalProperties: false }
)

/**
 * A version's clients: its schema, how it reads `include`, and how it converts the domain's client
 * (the stored 4.0 read model) to its own shape; without a conversion the stored 4.0 JSON is the
 * answer as it is, joined without parsing (the domain's encoded answers, see src/read-model).
 */
export interface ClientShape {
  /** Response schema of one client. */
  schema: TSchema
  include: IncludeMode
  convert?: (client: StoredClient) => Record<string, unknown>
}

export const clientShapes: Record<ApiVersion, ClientShape> = {
  '4.0': { schema: ClientSchema, include: 'honoured' },
  // includes are a preview in 3.0: an agency without include support gets every granted group
  '3.0': { schema: ClientSchema, include: 'preview' },
  // eslint-disable-next-line @stylistic/quote-props -- '1' stays a string key, like the version it names
  '1': { schema: V1ClientSchema, include: 'none', convert: toV1Client }
}
