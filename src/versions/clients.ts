import { Type, type TSchema } from '@sinclair/typebox'
import { ClaimSchema, ClientDetailsSchema, ClientSchema, ContactSchema, PersonSchema, type IncludeMode } from '../schemas/client.js'
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
const V1Id = Nullable(Type.Integer({ description: 'the version 1 integer id' }))

/** A 4.0 record's fields as version 1 answers them: its integer id, no GUID, no legacyId. */
function v1Fields<P extends { id: unknown, legacyId?: unknown }> (properties: P): Omit<P, 'id' | 'legacyId'> {
  const { id: _id, legacyId: _legacyId, ...fields } = properties
  return fields
}

const { allowCrossSell: _allowCrossSell, clientType: _clientType, mainContacts: _mainContacts, ...detailFields } = v1Fields(ClientDetailsSchema.properties)

/** Version 1 client read model: the 4.0 groups' fields, with integer ids. */
export const V1ClientSchema = Type.Object(
  {
    id: Type.Integer({ description: 'the client number' }),
    allowCrossSell: Nullable(Type.Boolean()),
    clientType: Nullable(Type.String()),
    details: Type.Object({
      ...detailFields,
      mainContacts: Type.Array(Nullable(Type.Integer()), { description: 'the main contacts, by their version 1 ids' })
    }, { ...open, title: 'ClientDetailsV1' }),
    people: Type.Array(Type.Object({ id: V1Id, ...v1Fields(PersonSchema.properties) }, { ...open, title: 'PersonV1' })),
    contacts: Type.Array(Type.Object({
      id: V1Id,
      ...v1Fields(ContactSchema.properties),
      personId: Nullable(Type.Integer({ description: "the person's version 1 id; null for a contact of the client" }))
    }, { ...open, title: 'ContactV1' })),
    claims: Type.Array(Type.Object({ id: V1Id, ...v1Fields(ClaimSchema.properties) }, { ...open, title: 'ClaimV1' })),
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
