import { once } from 'node:events'
import type { WriteStream } from 'node:fs'
import { CLIENT_GROUPS } from '../../src/schemas/client.js'

/**
 * Collects the answers of every read operation of every version from a running sandbox, as a
 * partner's typed client would receive them, and writes them as JSON lines
 * `{label, operation, version, body}` for the decoders (test/typed-clients/go and java).
 */

export type Version = '4.0' | '3.0' | '1'
export type Operation = 'agencies' | 'offices' | 'users' | 'changedClients' | 'getClient' | 'batchClients' | 'searchClients'

/** Every non-empty combination of the six groups (63), each in the service's order. */
export const INCLUDE_SUBSETS: string[] = Array.from({ length: (1 << CLIENT_GROUPS.length) - 1 }, (_, i) =>
  CLIENT_GROUPS.filter((_, g) => ((i + 1) & (1 << g)) !== 0).join(','))

/** No include parameter (the default groups), then each of the 63 combinations. */
const EVERY_INCLUDE: (string | undefined)[] = [undefined, ...INCLUDE_SUBSETS]
const ALL_GROUPS = CLIENT_GROUPS.join(',')
const BATCH = 200
/** Clients read one by one and in one batch with every include combination, per agency. */
const SAMPLE_CLIENTS = 3

export interface Integration {
  name: string
  authorization: string
}

/** Answers written, per `operation version`. */
export type Tally = Map<string, number>

type Rec = Record<string, unknown>

export class AnswerCollector {
  readonly tally: Tally = new Map()
  private pending: Promise<unknown>[] = []

  constructor (private readonly out: WriteStream, private readonly concurrency = 4) {}

  /** Reads `path` (GET, or POST with `body`) and writes its answer; a status other than 200 is a test failure. */
  async read (baseUrl: string, who: Integration, label: string, operation: Operation, version: Version, path: string, query: Record<string, string | undefined> = {}, body?: unknown): Promise<unknown> {
    const params = new URLSearchParams()
    if (version !== '1') params.set('version', version)
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v)
    const search = params.size > 0 ? `?${params}` : ''
    const res = await fetch(`${baseUrl}${path}${search}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: who.authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`${label}: ${body === undefined ? 'GET' : 'POST'} ${path}${search} answered ${res.status}: ${text.slice(0, 300)}`)
    // one answer per line: the sandbox answers compact JSON, but a pretty one would be re-encoded
    const json = text.includes('\n') ? JSON.stringify(JSON.parse(text)) : text
    const line = `{"label":${JSON.stringify(`${who.name} ${label}`)},"operation":"${operation}","version":"${version}","body":${json}}\n`
    if (!this.out.write(line)) await once(this.out, 'drain')
    const key = `${operation} ${version}`
    this.tally.set(key, (this.tally.get(key) ?? 0) + 1)
    return JSON.parse(text)
  }

  /** Runs `task` with at most `concurrency` reads in flight. */
  async queue (task: () => Promise<unknown>): Promise<void> {
    if (this.pending.length >= this.concurrency) await Promise.race(this.pending)
    const p: Promise<unknown> = task().finally(() => { this.pending = this.pending.filter((q) => q !== p) })
    p.catch(() => {}) // observed by the next queue() or drain(), which rethrow it
    this.pending.push(p)
  }

  async drain (): Promise<void> {
    while (this.pending.length > 0) await Promise.all(this.pending)
  }

  /** Every read of one integration: agencies, then each agency it can read. */
  async integration (baseUrl: string, who: Integration): Promise<void> {
    for (const version of ['3.0', '1'] as const) await this.read(baseUrl, who, `agencies ${version}`, 'agencies', version, '/vendor/agencies')
    const agencies = await this.read(baseUrl, who, 'agencies 4.0', 'agencies', '4.0', '/vendor/agencies') as { agencyId: number, scopes: string[] }[]
    for (const { agencyId, scopes } of agencies) await this.agency(baseUrl, who, agencyId, scopes)
  }

  /** Clients the test created: each read alone with every include combination, in a batch, in every version. */
  async created (baseUrl: string, who: Integration, agencyId: number, numbers: number[]): Promise<void> {
    const at = `/vendor/agency/${agencyId}`
    const r = (label: string, operation: Operation, version: Version, path: string, query?: Record<string, string | undefined>, body?: unknown) =>
      this.read(baseUrl, who, `${agencyId} created ${label}`, operation, version, `${at}${path}`, query, body)
    for (const version of ['4.0', '3.0'] as const) {
      for (const include of EVERY_INCLUDE) {
        for (const n of numbers) await this.queue(() => r(`client ${n} ${version} include=${include ?? 'default'}`, 'getClient', version, `/client/${n}`, { include }))
        await this.queue(() => r(`batch ${version} include=${include ?? 'default'}`, 'batchClients', version, '/clients', { include }, { clientNumbers: numbers }))
      }
    }
    for (const n of numbers) await this.queue(() => r(`client ${n} 1`, 'getClient', '1', `/client/${n}`))
    await this.queue(() => r('batch 1', 'batchClients', '1', '/clients', {}, numbers))
    await this.drain()
  }

  private async agency (baseUrl: string, who: Integration, agencyId: number, scopes: string[]): Promise<void> {
    const at = `/vendor/agency/${agencyId}`
    const r = (label: string, operation: Operation, version: Version, path: string, query?: Record<string, string | undefined>, body?: unknown) =>
      this.read(baseUrl, who, `${agencyId} ${label}`, operation, version, `${at}${path}`, query, body)
    const offices = await r('offices 4.0', 'offices', '4.0', '/offices') as { officeId: number }[]
    for (const version of ['3.0', '1'] as const) await r(`offices ${version}`, 'offices', version, '/offices')
    if (scopes.includes('user-list')) await r('users 4.0', 'users', '4.0', '/users')
    if (!scopes.includes('client-read')) return

    const ids = await r('changed clients 4.0', 'changedClients', '4.0', '/clients') as number[]
    for (const version of ['4.0', '3.0', '1'] as const) {
      if (version !== '4.0') await r(`changed clients ${version}`, 'changedClients', version, '/clients')
      await r(`changed clients ${version} asOf`, 'changedClients', version, '/clients', { asOf: '2026-06-01T00:00:00Z' })
      await r(`changed clients ${version} deleted`, 'changedClients', version, '/clients', { deleted: 'true' })
      await r(`changed clients ${version} office`, 'changedClients', version, '/clients', { officeId: String(offices[1]?.officeId ?? 0) })
    }

    // every client at least once: batches with the default groups and with all of them, and in version 1
    const clients: Rec[] = []
    for (let i = 0; i < ids.length; i += BATCH) {
      const clientNumbers = ids.slice(i, i + BATCH)
      const label = `clients ${clientNumbers[0]}-${clientNumbers.at(-1)}`
      for (const version of ['4.0', '3.0'] as const) {
        await r(`batch ${version} ${label}`, 'batchClients', version, '/clients', {}, { clientNumbers })
        const read = await r(`batch ${version} ${label} include=all`, 'batchClients', version, '/clients', { include: ALL_GROUPS }, { clientNumbers }) as Rec[]
        if (version === '4.0') clients.push(...read)
      }
      await r(`batch 1 ${label}`, 'batchClients', '1', '/clients', {}, clientNumbers)
    }

    // a sample read with every include combination: one by one, in one batch, and by policy number
    const sample = sampleOf(clients)
    const numbers = sample.map((c) => c.clientNumber as number)
    const policyNumber = sample.flatMap((c) => (c.policies as Rec[] | undefined) ?? []).map((p) => p.policyNumber as string).find((n) => n !== '')
    for (const version of ['4.0', '3.0'] as const) {
      for (const include of EVERY_INCLUDE) {
        const label = `include=${include ?? 'default'}`
        for (const n of numbers) await this.queue(() => r(`client ${n} ${version} ${label}`, 'getClient', version, `/client/${n}`, { include }))
        await this.queue(() => r(`batch ${version} sample ${label}`, 'batchClients', version, '/clients', { include }, { clientNumbers: numbers }))
        // search answers the batch's client shape: the default groups, all of them and each group alone
        if (policyNumber !== undefined && (include === undefined || include === ALL_GROUPS || !include.includes(','))) {
          await this.queue(() => r(`search ${version} ${policyNumber} ${label}`, 'searchClients', version, '/clients/search', { include, policyNumber }))
        }
      }
      await r(`search ${version} no match`, 'searchClients', version, '/clients/search', { policyNumber: 'NO-SUCH-POLICY' })
    }
    for (const n of numbers) await this.queue(() => r(`client ${n} 1`, 'getClient', '1', `/client/${n}`))
    await this.drain()
  }
}

/** Clients that between them have every group: the most policies, a commercial one, one with invoices, one with claims. */
function sampleOf (clients: Rec[]): Rec[] {
  const count = (c: Rec, group: string) => ((c[group] as unknown[] | undefined) ?? []).length
  const picks = [
    [...clients].sort((a, b) => count(b, 'policies') - count(a, 'policies'))[0],
    clients.find((c) => (c.details as Rec | undefined)?.isCommercial === true),
    clients.find((c) => count(c, 'invoices') > 0),
    clients.find((c) => count(c, 'claims') > 0)
  ]
  const unique = [...new Map(picks.filter((c) => c !== undefined).map((c) => [c.clientNumber, c])).values()]
  return unique.slice(0, SAMPLE_CLIENTS)
}
