import { Type, type TSchema } from '@sinclair/typebox'
import type { ClientRow } from '../db/store.js'
import type { Grant } from '../domain/access.js'
import type { Clients } from '../domain/clients.js'
import { namedGroups, parseInclude, resolveGroups, type IncludeResult } from '../domain/includes.js'
import { ClientSchema, DEFAULT_GROUPS, GROUP_KEYS, type ClientGroup } from '../schemas/client.js'
import { Nullable } from '../schemas/common.js'
import type { ApiVersion } from './index.js'

/**
 * Client reads per version. The domain stores the 4.0 read model; 3.0 answers it as is (its
 * includes are a preview: an agency without include support gets every granted group), and
 * version 1 is mapped down: `id` for `clientNumber`, `allowCrossSell` and `clientType` at the
 * top level, integer (legacy) ids on sub-records, no include parameter and no invoices.
 */

/** A 3.0/4.0 client: `{"clientNumber":N,"details":…,…}` joined from the stored JSON, never parsed. */
export function renderClient(row: ClientRow, groups: readonly ClientGroup[]): string {
  let out = '{"clientNumber":' + row.clientNumber
  for (const g of groups) {
    const key = GROUP_KEYS[g]
    out += ',"' + key + '":' + row[key]
  }
  return out + '}'
}

type Rec = Record<string, unknown>
const legacy = (r: Rec | undefined): number | null => (typeof r?.legacyId === 'number' ? r.legacyId : null)

/** Version 1 shape of a sub-record: its integer legacy id as `id`. */
function v1Record(r: Rec): Rec {
  const { id: _id, legacyId, ...rest } = r
  return { id: typeof legacyId === 'number' ? legacyId : null, ...rest }
}

/** The version 1 client (a plain object; version 1 is not a hot path). */
export function toV1Client(row: ClientRow): Rec {
  const { id: _id, allowCrossSell, clientType, mainContacts, ...details } = JSON.parse(row.details) as Rec
  const people = JSON.parse(row.people) as Rec[]
  const policies = JSON.parse(row.policies) as Rec[]
  const personLegacy = new Map(people.map((p) => [String(p.id).toLowerCase(), legacy(p)]))
  const byGuid = (map: Map<string, number | null>, guid: unknown) => (typeof guid === 'string' ? map.get(guid.toLowerCase()) ?? null : null)
  return {
    id: row.clientNumber,
    allowCrossSell: allowCrossSell ?? null,
    clientType: clientType ?? null,
    details: { ...details, mainContacts: Array.isArray(mainContacts) ? mainContacts.map((g) => byGuid(personLegacy, g)) : [] },
    people: people.map(v1Record),
    contacts: (JSON.parse(row.contacts) as Rec[]).map((c) => ({ ...v1Record(c), personId: byGuid(personLegacy, c.personId) })),
    claims: (JSON.parse(row.claims) as Rec[]).map(v1Record),
    policies: policies.map(v1Record),
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
    details: Type.Object({ modified: Type.String(), officeId: Type.Integer(), mainContacts: Type.Array(Nullable(Type.Integer())) }, open),
    people: Type.Array(V1Record),
    contacts: Type.Array(Type.Object({ id: Nullable(Type.Integer()), personId: Nullable(Type.Integer()) }, open)),
    claims: Type.Array(V1Record),
    policies: Type.Array(V1Record)
  },
  { title: 'ClientV1', additionalProperties: false }
)

export interface ClientReader {
  /** Response schema of one client. */
  schema: TSchema
  /** Whether the version takes the include parameter. */
  include: boolean
  groups(grant: Grant, include: string | undefined): IncludeResult
  render(rows: readonly ClientRow[], groups: readonly ClientGroup[]): string
  /** A batch read's answer. */
  batch(clients: Clients, agencyId: number, numbers: number[], groups: readonly ClientGroup[]): string | Buffer
}

const joinRendered = (rows: readonly ClientRow[], groups: readonly ClientGroup[]) => {
  if (rows.length === 0) return '[]'
  let out = '['
  for (let i = 0; i < rows.length; i++) out += (i === 0 ? '' : ',') + renderClient(rows[i], groups)
  return out + ']'
}

const optIn = (grant: Grant) => grant.scopes.has('invoice-read')

/** 3.0/4.0 answer the stored groups joined unchanged, so the store joins a batch itself. */
const joinedBatch: ClientReader['batch'] = (clients, agencyId, numbers, groups) =>
  clients.batchJson(agencyId, numbers, groups.map((g) => GROUP_KEYS[g]))

export const clientReaders: Record<ApiVersion, ClientReader> = {
  '4.0': {
    schema: ClientSchema,
    include: true,
    groups: (grant, include) => resolveGroups(parseInclude(include), optIn(grant)),
    render: joinRendered,
    batch: joinedBatch
  },
  '3.0': {
    schema: ClientSchema,
    include: true,
    groups: (grant, include) =>
      grant.agency.supportsIncludes
        ? resolveGroups(parseInclude(include), optIn(grant))
        : resolveGroups(namedGroups(include), optIn(grant), true),
    render: joinRendered,
    batch: joinedBatch
  },
  '1': {
    schema: V1ClientSchema,
    include: false,
    groups: () => ({ groups: [...DEFAULT_GROUPS], denied: [] }),
    render: (rows) => JSON.stringify(rows.map(toV1Client)),
    batch: (clients, agencyId, numbers) => JSON.stringify(clients.batch(agencyId, numbers).map(toV1Client))
  }
}
