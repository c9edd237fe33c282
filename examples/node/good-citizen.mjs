// A reference sync client for the Agency Integration API, written the way the live service
// expects: the examiner judges it ready (verdict pass) even while agency data changes and
// requests fail.
//
//   node examples/node/good-citizen.mjs [--json]
//
// - lists its agencies first and works only with those (a 403 skips the agency for this round)
// - first sync in full, every later one with asOf (the previous listing's time, minus an overlap)
// - reads clients in batches of 200, never one by one
// - lists deleted clients on every sync and drops them from its mirror
// - after a 429 waits the Retry-After (every request waits, not only the refused one)
// - retries 5xx answers and dropped connections with backoff, the same write under the same RefId
// - treats 202 ("saved; it will be created when the agency next connects") as success
// - declares its mirror to the examiner session
import { randomUUID } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { examinedRun, log } from './examined-run.mjs'

const VERSION = '4.0'
const BATCH = 200
/** asOf reaches this far before the previous listing: clocks differ, and a listing takes time. */
const AS_OF_OVERLAP_MS = 60_000
const ATTEMPTS = 6

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Seconds or an HTTP date, as Retry-After allows; milliseconds to wait. */
function retryAfterMs (value) {
  if (value === null) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

class RefusedError extends Error {
  constructor (status, method, path, text) {
    super(`${method} ${path} answered ${status}: ${text.slice(0, 200)}`)
    this.status = status
  }
}

export class GoodCitizen {
  constructor ({ url, clientId, secret }) {
    this.url = url
    this.auth = 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64')
    /** Until when the service asked us to wait (a 429's Retry-After applies to every request). */
    this.pausedUntil = 0
    /** Per agency: { listedAt (ms, from the service's Date header), clients: Map<clientNumber, modified> }. */
    this.agencies = new Map()
  }

  /**
   * One API call with the retry policy: 429 waits its Retry-After, 5xx and dropped connections
   * back off; the same request (same body, so the same RefId) is sent again. Other answers return.
   */
  async call (method, path, { query = {}, body } = {}) {
    const q = new URLSearchParams({ version: VERSION, ...query })
    const headers = { authorization: this.auth, accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    for (let attempt = 1; ; attempt++) {
      const wait = this.pausedUntil - Date.now()
      if (wait > 0) await sleep(wait)
      let res
      try {
        res = await fetch(`${this.url}/vendor${path}?${q}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      } catch (e) {
        if (attempt >= ATTEMPTS) throw e
        log(`  ${method} ${path}: connection lost (${e.cause?.code ?? e.message}); retrying`)
        await sleep(200 * 2 ** attempt)
        continue
      }
      if (res.status === 429 && attempt < ATTEMPTS) {
        const ms = retryAfterMs(res.headers.get('retry-after')) ?? 1000
        log(`  ${method} ${path}: 429, waiting ${ms} ms as Retry-After asks`)
        // a little beyond it: our timer and the service's clock are not the same clock
        this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms + 50)
        await res.arrayBuffer()
        continue
      }
      if (res.status >= 500 && attempt < ATTEMPTS) {
        log(`  ${method} ${path}: ${res.status}; retrying`)
        await res.arrayBuffer()
        await sleep(200 * 2 ** attempt)
        continue
      }
      const text = await res.text()
      if (res.status >= 400) throw new RefusedError(res.status, method, path, text)
      return { status: res.status, date: Date.parse(res.headers.get('date') ?? '') || Date.now(), body: /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text }
    }
  }

  /** The agencies this integration may work with, now. */
  async listAgencies () {
    return (await this.call('GET', '/agencies')).body.map((a) => a.agencyId)
  }

  /** Brings the mirror of one agency up to date: in full the first time, with asOf after that. */
  async syncAgency (agencyId) {
    const known = this.agencies.get(agencyId)
    const asOf = known === undefined ? undefined : new Date(known.listedAt - AS_OF_OVERLAP_MS).toISOString()
    await this.call('GET', `/agency/${agencyId}/offices`)
    const listing = await this.call('GET', `/agency/${agencyId}/clients`, { query: asOf === undefined ? {} : { asOf } })
    const clients = known?.clients ?? new Map()
    const changed = listing.body
    for (let i = 0; i < changed.length; i += BATCH) {
      const batch = await this.call('POST', `/agency/${agencyId}/clients`, { body: { clientNumbers: changed.slice(i, i + BATCH) } })
      for (const client of batch.body) clients.set(client.clientNumber, client.details.modified)
    }
    const deleted = await this.call('GET', `/agency/${agencyId}/clients`, { query: asOf === undefined ? { deleted: 'true' } : { deleted: 'true', asOf } })
    for (const clientNumber of deleted.body) clients.delete(clientNumber)
    this.agencies.set(agencyId, { listedAt: listing.date, clients })
    log(`  agency ${agencyId}: ${asOf === undefined ? 'full sync' : `changed since ${asOf}`}: ${changed.length} read, ${deleted.body.length} deleted; ${clients.size} stored`)
  }

  /** One sync round over every agency listed now; an agency refusing us (403) waits for the next round. */
  async syncAll () {
    for (const agencyId of await this.listAgencies()) {
      try {
        await this.syncAgency(agencyId)
      } catch (e) {
        if (!(e instanceof RefusedError) || e.status !== 403) throw e
        log(`  agency ${agencyId} refused this round (403); it is tried again next round`)
      }
    }
  }

  /** A log note, created once: the RefId is made here and every retry sends the same body. 202 is success. */
  async logNote (agencyId, clientNumber, note) {
    const body = { RefId: randomUUID(), TS: new Date().toISOString(), Channel: 29, Note: note }
    const res = await this.call('POST', `/agency/${agencyId}/client/${clientNumber}/log`, { body })
    log(`  log note ${body.RefId} to ${agencyId}/${clientNumber}: ${res.status === 202 ? 'saved for when the agency connects' : 'created'}`)
  }

  /** What is stored, in the form the examiner's mirror call takes. */
  mirrors () {
    return [...this.agencies].map(([agencyId, { clients }]) => ({
      agencyId,
      clients: [...clients].map(([clientNumber, modified]) => ({ clientNumber, modified }))
    }))
  }
}

/** The integration's run: a full sync, writes, then incremental syncs while the agencies keep changing. */
export async function runGoodCitizen (target, { rounds = 3, pauseMs = 1000 } = {}) {
  const citizen = new GoodCitizen(target)
  log('round 1')
  await citizen.syncAll()
  for (const [agencyId, { clients }] of citizen.agencies) {
    const [first] = clients.keys()
    if (first !== undefined) await citizen.logNote(agencyId, first, `Reviewed by the good citizen (agency ${agencyId})`)
  }
  for (let round = 2; round <= rounds; round++) {
    await sleep(pauseMs)
    log(`round ${round}`)
    await citizen.syncAll()
  }
  return citizen.mirrors()
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await examinedRun('good citizen', (target) => runGoodCitizen(target))
}
