import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { seededRandom } from '../../src/domain/random.js'

/**
 * What the attack knows of the demo world (fixtures/demo.json, the README's credentials): who may
 * see which agency with which scopes, which strings belong to exactly one agency (the leak check),
 * and valid request bodies. Every random choice comes from one seeded generator.
 */

export interface Rng {
  next(): number
  int(min: number, max: number): number
  pick<T>(items: readonly T[]): T
  /** A version-4-shaped UUID drawn from the generator (the same seed gives the same ids). */
  uuid(): string
}

export function rng (seed: number): Rng {
  const next = seededRandom(seed)
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join('')
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(next() * 4)]}${hex(3)}-${hex(12)}`
  }
}

interface FixtureClient {
  clientNumber: number
  deleted?: boolean
  policies?: { id: string; policyNumber: string }[]
  invoices?: { id: string }[]
}
interface FixtureAgency {
  agencyId: number
  active?: boolean
  connected?: boolean
  clients: FixtureClient[]
  users?: unknown
  offices?: unknown
  name?: string
}
interface FixtureIntegration {
  clientId: string
  clientSecret: string
  agencies: { agencyId: number; scopes: string[]; optedOut?: boolean }[]
}
interface Fixture {
  integrations: FixtureIntegration[]
  agencies: FixtureAgency[]
}

export const DEMO_FIXTURE_FILE = join(ROOT, 'fixtures', 'demo.json')
export const fixture = JSON.parse(readFileSync(DEMO_FIXTURE_FILE, 'utf8')) as Fixture

export const basic = (clientId: string, secret: string) => 'Basic ' + Buffer.from(`${clientId}:${secret}`, 'utf8').toString('base64')

/** The README's demo credentials. */
export const INTEGRATIONS = fixture.integrations.map((i) => ({ clientId: i.clientId, auth: basic(i.clientId, i.clientSecret), wrong: basic(i.clientId, `${i.clientSecret}-wrong`) }))
export const ABC = basic('abc', '123')
export const NORTHWIND = basic('northwind-crm', 'nw-sandbox-secret')
export const IDLE = basic('idle-vendor', 'idle-secret')

/** An agency id no fixture has. */
export const UNKNOWN_AGENCY = 9999
export const AGENCY_IDS = [...fixture.agencies.map((a) => a.agencyId), UNKNOWN_AGENCY]

export const agencyOf = (id: number) => fixture.agencies.find((a) => a.agencyId === id)
export const liveClients = (id: number) => agencyOf(id)?.clients.filter((c) => !c.deleted) ?? []

/** May this integration use this agency, and with which scopes (the fixture's answer)? */
export function access (clientId: string, agencyId: number): { available: boolean; scopes: Set<string> } {
  const sub = fixture.integrations.find((i) => i.clientId === clientId)?.agencies.find((a) => a.agencyId === agencyId)
  const agency = agencyOf(agencyId)
  const available = sub !== undefined && sub.optedOut !== true && agency !== undefined && agency.active !== false
  return { available, scopes: new Set(available ? sub.scopes : []) }
}

// Strings of at least 6 characters that belong to exactly one agency (ids, policy numbers, names…).
const owners = new Map<string, number | null>()
function collect (value: unknown, agencyId: number): void {
  if (typeof value === 'string') {
    if (value.length < 6) return
    const known = owners.get(value)
    owners.set(value, known === undefined || known === agencyId ? agencyId : null)
  } else if (Array.isArray(value)) for (const v of value) collect(v, agencyId)
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) collect(v, agencyId)
}
for (const a of fixture.agencies) {
  collect(a.clients, a.agencyId)
  collect(a.users, a.agencyId)
  collect(a.offices, a.agencyId)
  collect(a.name, a.agencyId)
}
for (const [value, owner] of owners) if (owner === null) owners.delete(value)

/** How many strings belong to exactly one agency (the leak check's reach). */
export const ownedStrings = () => owners.size

/** Strings of a parsed answer that belong to another agency than `agencyId` (null: to any agency). */
export function foreignStrings (body: unknown, agencyId: number | null, out: string[] = []): string[] {
  if (typeof body === 'string') {
    const owner = owners.get(body)
    if (owner !== undefined && owner !== agencyId) out.push(`${body} (agency ${owner})`)
  } else if (Array.isArray(body)) for (const v of body) foreignStrings(v, agencyId, out)
  else if (body !== null && typeof body === 'object') for (const v of Object.values(body)) foreignStrings(v, agencyId, out)
  return out
}

/** A client secret in an answer: the state document's field with a value, or a demo secret itself. */
export function holdsSecret (answer: string): boolean {
  return /"clientSecret"\s*:\s*"/.test(answer) || answer.includes('nw-sandbox-secret') || answer.includes('idle-secret')
}

// ------------------------------------------------------------------------------------------------
// Request bodies
// ------------------------------------------------------------------------------------------------

export const TS = '2026-11-20T10:00:00Z'
export const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
export const JSON_TYPE = { 'content-type': 'application/json' }
export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')

export const logNote = (refId: string, note = 'Called about renewal') => ({ refId, ts: TS, channel: 29, note })
export const receipt = (refId: string) => ({ refId, ts: TS, channel: 4, logNote: 'Payment by card', total: 25 })

/** Headers of a version 3.0/4.0 attachment (the body is the gzip of the content). */
export function attachmentHeaders (auth: string, refId: string, fileName = 'application.pdf', over: Record<string, string> = {}): Record<string, string> {
  return {
    authorization: auth,
    'content-type': 'application/octet-stream',
    RefId: refId,
    TS,
    Channel: '33',
    Desc: b64('Signed application'),
    FileName: b64(fileName),
    FileExt: 'pdf',
    LogNote: b64('Application received'),
    ...over
  }
}

/** A valid PascalCase create-client body; `marker` names the person so the client can be found. */
export const createClientBody = (marker: string) => ({
  People: [{ FirstName: 'Attack', LastName: marker.slice(0, 20), MainContactType: 'First' }],
  Log: { Channel: 29, Note: `created by the attack ${marker}`, TS },
  Status: 'Prospect'
})
