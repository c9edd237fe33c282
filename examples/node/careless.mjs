// A careless sync client: it works on a quiet day, and the examiner fails it. Each habit below
// is one the live service punishes, and each is a rule of the report (in brackets).
//
//   node examples/node/careless.mjs [--json]
//
// - never asks which agencies it may use: the ids are configured            [agency-not-listed]
// - lists every client on every sync, never with asOf                      [full-sync-repeated]
// - never lists deleted clients                                             [deleted-never-synced]
// - reads the first clients one by one                                      [n-plus-one-reads]
// - reads the rest 250 at a time, and shrugs off the 400          [batch-over-limit, sync-missed, mirror-missing]
// - sends a page size the API does not have                                 [unknown-fields]
// - after a 429 tries again at once                                         [retry-after-ignored]
// - a write is sent again with a new RefId: after a 5xx, and on every sync  [write-retried-new-refid]
//   (it never remembers what it already wrote)
// - a 202 is taken for a failure and the write is sent again, new RefId      [write-resent-after-202]
// Compare with good-citizen.mjs, which does each of these the expected way.
import { randomUUID } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { examinedRun, log } from './examined-run.mjs'

/** Configured once, long ago (the subscriptions have changed since). */
const AGENCIES = [1001, 1002, 1004]
const ONE_BY_ONE = 25
const CHUNK = 250

export class Careless {
  constructor ({ url, clientId, secret }) {
    this.url = url
    this.auth = 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64')
    this.mirror = new Map(AGENCIES.map((id) => [id, new Map()]))
  }

  /** Sends; a 429 is sent again at once (twice at most), anything else is answered as it is. */
  async call (method, path, { query = {}, body } = {}) {
    const q = new URLSearchParams({ version: '4.0', ...query })
    const headers = { authorization: this.auth }
    if (body !== undefined) headers['content-type'] = 'application/json'
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${this.url}/vendor${path}?${q}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await res.text()
      if (res.status === 429 && attempt < 3) continue
      return { status: res.status, body: /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text }
    }
  }

  async syncAgency (agencyId) {
    const stored = this.mirror.get(agencyId)
    const listing = await this.call('GET', `/agency/${agencyId}/clients`, { query: { pageSize: '500' } })
    if (listing.status !== 200) return log(`  agency ${agencyId}: listing answered ${listing.status}; skipped`)
    const ids = listing.body
    for (const clientNumber of ids.slice(0, ONE_BY_ONE)) {
      const res = await this.call('GET', `/agency/${agencyId}/client/${clientNumber}`)
      if (res.status === 200) stored.set(clientNumber, res.body.details.modified)
    }
    for (let i = ONE_BY_ONE; i < ids.length; i += CHUNK) {
      const res = await this.call('POST', `/agency/${agencyId}/clients`, { body: { clientNumbers: ids.slice(i, i + CHUNK) } })
      if (res.status !== 200) continue // it worked on the test agency, which had 30 clients
      for (const client of res.body) stored.set(client.clientNumber, client.details.modified)
    }
    log(`  agency ${agencyId}: listed ${ids.length}, stored ${stored.size}`)
  }

  /** Anything but 200 is a failure, and a failed write is written again (with a fresh RefId). */
  async logNote (agencyId, clientNumber, note) {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const res = await this.call('POST', `/agency/${agencyId}/client/${clientNumber}/log`, {
        body: { RefId: randomUUID(), TS: '2026-11-20T10:00:00Z', Channel: 29, Note: note }
      })
      log(`  log note to ${agencyId}/${clientNumber}: ${res.status}`)
      if (res.status === 200) return
    }
  }

  mirrors () {
    return [...this.mirror].map(([agencyId, clients]) => ({
      agencyId,
      clients: [...clients].map(([clientNumber, modified]) => ({ clientNumber, modified }))
    }))
  }
}

export async function runCareless (target, { rounds = 3 } = {}) {
  const careless = new Careless(target)
  for (let round = 1; round <= rounds; round++) {
    log(`round ${round}`)
    for (const agencyId of AGENCIES) await careless.syncAgency(agencyId)
    for (const agencyId of round === 1 ? [1001, 1004] : [1001]) {
      const [first] = careless.mirror.get(agencyId).keys()
      if (first !== undefined) await careless.logNote(agencyId, first, `Reviewed by the careless client (agency ${agencyId})`)
    }
  }
  return careless.mirrors()
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await examinedRun('careless', (target) => runCareless(target))
}
