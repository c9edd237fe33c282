/**
 * The soak's workload (bench/soak.ts): the demo world it works in (who may read and write which
 * agency), and the weighted operations, each sending its request through the soak's `send` and
 * saying whether the answer was the one expected.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { ROOT } from '../../src/config.js'
import { seededRandom } from '../../src/domain/random.js'

export interface Answer {
  status: number
  body: string
}
export type Send = (method: string, path: string, headers?: Record<string, string>, body?: string | Buffer) => Promise<Answer>

export function rng (seed: number) {
  const next = seededRandom(seed)
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)], int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)) }
}
export type Rng = ReturnType<typeof rng>

// ------------------------------------------------------------------------------------------------
// The demo world
// ------------------------------------------------------------------------------------------------

interface FixtureClient {
  clientNumber: number
  deleted?: boolean
  invoices?: { id: string }[]
  policies?: { id: string; policyNumber: string }[]
}
const fixture = JSON.parse(readFileSync(join(ROOT, 'fixtures', 'demo.json'), 'utf8')) as { agencies: { agencyId: number; clients: FixtureClient[] }[] }
const live = (id: number) => fixture.agencies.find((a) => a.agencyId === id)!.clients.filter((c) => !c.deleted)

const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64')
const ABC = basic('abc', '123')
const NORTHWIND = basic('northwind-crm', 'nw-sandbox-secret')
const IDLE = basic('idle-vendor', 'idle-secret')

interface Grant {
  name: string
  auth: string
  agencyId: number
  clients: FixtureClient[]
  write: boolean
  create: boolean
  users: boolean
  pending: boolean
}
const GRANTS: Grant[] = [
  { name: 'abc', auth: ABC, agencyId: 1001, clients: live(1001), write: true, create: true, users: true, pending: false },
  { name: 'abc', auth: ABC, agencyId: 1002, clients: live(1002), write: true, create: false, users: false, pending: false },
  { name: 'abc', auth: ABC, agencyId: 1004, clients: live(1004), write: true, create: true, users: true, pending: true },
  { name: 'northwind-crm', auth: NORTHWIND, agencyId: 1001, clients: live(1001), write: false, create: false, users: false, pending: false },
  { name: 'northwind-crm', auth: NORTHWIND, agencyId: 2001, clients: live(2001), write: true, create: true, users: true, pending: false }
]

// ------------------------------------------------------------------------------------------------
// The workload
// ------------------------------------------------------------------------------------------------

export interface Op {
  name: string
  weight: number
  run: (r: Rng) => Promise<{ status: number; ok: boolean; intended429?: boolean; detail?: string }>
}

const TS = '2026-11-20T10:00:00Z'
const b64 = (s: string) => Buffer.from(s).toString('base64')
const json = (auth: string) => ({ authorization: auth, 'content-type': 'application/json' })
const grant = (r: Rng, need: (g: Grant) => boolean) => r.pick(GRANTS.filter(need))
const version = (r: Rng) => r.pick(['4.0', '4.0', '4.0', '3.0', '1'] as const)
const q = (v: string, sep = '?') => (v === '1' ? '' : `${sep}version=${v}`)
const FILLER = Buffer.from(' soak attachment'.repeat(200))
/** Gzip bodies whose bytes start with their type's signature, as the sandbox checks. */
const ATTACHMENTS = {
  pdf: gzipSync(Buffer.concat([Buffer.from('%PDF-1.4'), FILLER])),
  png: gzipSync(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), FILLER])),
  jpg: gzipSync(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), FILLER]))
}

const expect = (statuses: number[]) => (a: Answer) => ({ status: a.status, ok: statuses.includes(a.status), detail: a.body.slice(0, 160) })

export function soakOperations (send: Send): Op[] {
  return [
    { name: 'agencies', weight: 6, run: async (r) => expect([200])(await send('GET', `/vendor/agencies${q(version(r))}`, { authorization: r.pick([ABC, NORTHWIND, IDLE]) })) },
    { name: 'offices', weight: 5, run: async (r) => { const g = grant(r, () => true); return expect([200])(await send('GET', `/vendor/agency/${g.agencyId}/offices${q(version(r))}`, { authorization: g.auth })) } },
    {
      name: 'changed clients',
      weight: 14,
      run: async (r) => {
        const g = grant(r, () => true)
        const v = version(r)
        const asOf = r.next() < 0.5 ? `asOf=${new Date(Date.parse('2026-06-01T00:00:00Z') + r.int(0, 200) * 86_400_000).toISOString()}` : r.next() < 0.3 ? 'deleted=true' : ''
        const query = [v === '1' ? '' : `version=${v}`, asOf].filter((s) => s !== '').join('&')
        return expect([200])(await send('GET', `/vendor/agency/${g.agencyId}/clients${query === '' ? '' : `?${query}`}`, { authorization: g.auth }))
      }
    },
    {
      name: 'get client',
      weight: 22,
      run: async (r) => {
        const g = grant(r, () => true)
        const v = version(r)
        const include = v !== '1' && r.next() < 0.5 ? `&include=${r.pick(['Details', 'Details,People', 'Policies,Invoices', 'Details,People,Contacts,Claims,Policies,Invoices'])}` : ''
        return expect([200])(await send('GET', `/vendor/agency/${g.agencyId}/client/${r.pick(g.clients).clientNumber}${q(v)}${v === '1' ? '' : include}`, { authorization: g.auth }))
      }
    },
    {
      name: 'batch read',
      weight: 8,
      run: async (r) => {
        const g = grant(r, () => true)
        const v = version(r)
        const start = r.int(0, Math.max(0, g.clients.length - 50))
        const numbers = g.clients.slice(start, start + r.int(1, 50)).map((c) => c.clientNumber)
        return expect([200])(await send('POST', `/vendor/agency/${g.agencyId}/clients${q(v)}`, json(g.auth), JSON.stringify(v === '1' ? numbers : { clientNumbers: numbers })))
      }
    },
    {
      name: 'search',
      weight: 6,
      run: async (r) => {
        const g = grant(r, () => true)
        const c = r.pick(g.clients.filter((x) => (x.policies ?? []).length > 0))
        return expect([200])(await send('GET', `/vendor/agency/${g.agencyId}/clients/search?version=${r.pick(['4.0', '3.0'])}&policyNumber=${encodeURIComponent(c.policies![0].policyNumber)}`, { authorization: g.auth }))
      }
    },
    { name: 'users', weight: 3, run: async (r) => { const g = grant(r, (x) => x.users); return expect([200])(await send('GET', `/vendor/agency/${g.agencyId}/users?version=4.0`, { authorization: g.auth })) } },
    {
      name: 'log note',
      weight: 12,
      run: async (r) => {
        const g = grant(r, (x) => x.write)
        const c = r.pick(g.clients)
        // One note in ten is sent twice with the same body: idempotent, the repeat answers as the first did.
        const refId = randomUUID()
        const body = JSON.stringify({ refId, ts: TS, channel: r.int(1, 56), note: `soak note for ${c.clientNumber}` })
        const a = await send('POST', `/vendor/agency/${g.agencyId}/client/${c.clientNumber}/log?version=${r.pick(['4.0', '3.0'])}`, json(g.auth), body)
        if (r.next() < 0.1) {
          const again = await send('POST', `/vendor/agency/${g.agencyId}/client/${c.clientNumber}/log?version=4.0`, json(g.auth), body)
          if (again.status !== a.status && !(g.pending && [200, 202].includes(again.status))) return { status: again.status, ok: false, detail: `repeat answered ${again.status} after ${a.status}` }
        }
        return expect(g.pending ? [200, 202] : [200])(a)
      }
    },
    {
      name: 'attachment',
      weight: 6,
      run: async (r) => {
        const g = grant(r, (x) => x.write)
        const c = r.pick(g.clients)
        const ext = r.pick(['pdf', 'png', 'jpg'] as const)
        const headers = {
          authorization: g.auth,
          'content-type': 'application/octet-stream',
          RefId: randomUUID(),
          TS,
          Channel: '33',
          Desc: b64('soak'),
          FileName: b64('soak file'),
          FileExt: ext,
          LogNote: b64('attached by the soak')
        }
        return expect(g.pending ? [200, 202] : [200])(await send('POST', `/vendor/agency/${g.agencyId}/client/${c.clientNumber}/attachment?version=4.0`, headers, ATTACHMENTS[ext]))
      }
    },
    {
      name: 'receipts',
      weight: 6,
      run: async (r) => {
        const g = grant(r, (x) => x.write)
        const c = r.pick(g.clients)
        const invoice = c.invoices?.[0]
        const refId = randomUUID()
        const items = [{ refId, ts: TS, channel: 4, logNote: 'soak payment', total: 5, ...(invoice === undefined ? {} : { invoices: [{ invoiceId: invoice.id, amount: 5 }], total: 5 }) }]
        const a = await send('POST', `/vendor/agency/${g.agencyId}/client/${c.clientNumber}/receipts?version=4.0`, json(g.auth), JSON.stringify(items))
        const result = expect(g.pending ? [200, 202] : [200])(a)
        if (result.ok && (JSON.parse(a.body) as { code: number }[])[0]?.code !== 200) return { ...result, ok: false }
        return result
      }
    },
    {
      name: 'create client',
      weight: 3,
      run: async (r) => {
        const g = grant(r, (x) => x.create)
        const body = { People: [{ FirstName: 'Soak', LastName: `Client ${r.int(1, 1e6)}`, MainContactType: 'First' }], Log: { Channel: 29, Note: 'soak', TS }, Status: 'Prospect' }
        const a = await send('POST', `/vendor/agency/${g.agencyId}/client?version=4.0`, json(g.auth), JSON.stringify(body))
        if (a.status === 429) return { status: 429, ok: true, intended429: true }
        return expect([200])(a)
      }
    }
  ]
}

/** One operation, drawn by weight. */
export function pickOperation (ops: readonly Op[], r: Rng): Op {
  const total = ops.reduce((s, o) => s + o.weight, 0)
  let x = r.next() * total
  for (const op of ops) {
    x -= op.weight
    if (x < 0) return op
  }
  return ops[ops.length - 1]
}
