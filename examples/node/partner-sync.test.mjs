// What a partner's Node test suite checks with the sandbox: `node --test examples/node/`.
import assert from 'node:assert/strict'
import { after, before, beforeEach, test } from 'node:test'
import { SandboxProcess } from './sandbox-process.mjs'

/** Stands in for your integration: first sync, then incremental syncs, retrying 429 and 5xx. */
async function syncAgency (sandbox, agencyId, mirror, asOf) {
  const call = async (method, path, body, q) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await sandbox.vendor(method, path, body, { version: '4.0', ...q })
      if (res.status === 429 || res.status >= 500) {
        await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 0.1) * 1000))
        continue
      }
      if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`)
      return res.json()
    }
    throw new Error(`${method} ${path} still failing`)
  }
  const changed = await call('GET', `/agency/${agencyId}/clients`, undefined, { asOf })
  for (let i = 0; i < changed.length; i += 200) {
    for (const client of await call('POST', `/agency/${agencyId}/clients`, { clientNumbers: changed.slice(i, i + 200) })) {
      mirror.set(client.clientNumber, client.details.modified)
    }
  }
  for (const gone of await call('GET', `/agency/${agencyId}/clients`, undefined, { asOf, deleted: true })) mirror.delete(gone)
  return changed
}

let sandbox
before(async () => { sandbox = await SandboxProcess.start() })
after(async () => { await sandbox.stop() })
// One call restores everything a test may have changed.
beforeEach(async () => { await sandbox.reset() })

test('a first sync mirrors every live client, in batches of 200', async () => {
  const mirror = new Map()
  const read = await syncAgency(sandbox, 1001, mirror)
  assert.equal(mirror.size, read.length)
  const batches = await sandbox.requests({ method: 'POST', path: '/vendor/agency/1001/clients' })
  assert.equal(batches.length, Math.ceil(read.length / 200))
})

test('a 429 with Retry-After is waited out and retried', async () => {
  await sandbox.addFault({ match: { method: 'POST' }, effect: { status: 429, headers: { 'retry-after': '1' } }, times: 1 })
  const mirror = new Map()
  await syncAgency(sandbox, 1001, mirror)
  const posts = await sandbox.requests({ method: 'POST' })
  assert.deepEqual(posts.slice(0, 2).map((e) => e.status), [429, 200])
  // a journal entry's time is when its answer was sent; the arrival is that less its duration
  const arrival = (e) => Date.parse(e.time) - e.durationMs
  assert.ok(arrival(posts[1]) - arrival(posts[0]) >= 995, 'the retry waited for Retry-After (to the millisecond the journal keeps)')
})

test('the next sync reads only what changed since the last one', async () => {
  await sandbox.setClock('2027-01-01T00:00:00Z', true)
  const mirror = new Map()
  await syncAgency(sandbox, 1001, mirror)
  await sandbox.control('POST', '/clock/advance', { seconds: 60 })
  await sandbox.control('PATCH', '/agencies/1001/clients/1000', { details: { status: 'DeadFile' } })
  await sandbox.control('DELETE', '/agencies/1001/clients/1001')
  assert.deepEqual(await syncAgency(sandbox, 1001, mirror, '2027-01-01T00:00:00Z'), [1000])
  assert.equal(mirror.has(1001), false, 'the deleted client left the mirror')
})

test('reset is a clean slate: faults, clock and journal too', async () => {
  await sandbox.addFault({ effect: { status: 500 } })
  await sandbox.setClock('2027-01-01T00:00:00Z', true)
  await sandbox.vendor('GET', '/agencies', undefined, { version: '4.0' })
  await sandbox.reset()
  assert.deepEqual(await sandbox.control('GET', '/faults'), [])
  assert.equal((await sandbox.control('GET', '/clock')).frozen, false)
  assert.deepEqual(await sandbox.requests(), [])
})
