// Tests that run side by side against one sandbox, each in a world of its own, over HTTP only:
//   node run-with-sandbox.mjs node --test --test-concurrency=4
// (or `node --test worlds.test.mjs` on its own: it then starts a sandbox for this file). Each test
// writes, adds faults, moves the clock and resets as it likes; nothing it does reaches another
// test's world. The assertions are exact (counts, numbers, times), so another test's actions
// leaking into this world would fail them.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { SandboxProcess } from './sandbox-process.mjs'

const AGENCY = 1001
/** Agency 1001's highest client number + 1: the number every fresh world gives next. */
const NEXT_CLIENT = 1260
const NEW_CLIENT = {
  People: [{ FirstName: 'Ada', LastName: 'Lovelace', MainContactType: 'First' }],
  Log: { Channel: 29, Note: 'New client from the partner portal', TS: '2026-11-20T10:00:00Z' }
}
const note = (text) => ({ refId: randomUUID(), ts: '2026-11-20T10:00:00Z', channel: 29, note: text })
const json = async (res) => {
  const body = await res.json()
  assert.equal(res.ok, true, `${res.status}: ${JSON.stringify(body)}`)
  return body
}

let sandbox
before(async () => { sandbox = await SandboxProcess.start() })
after(async () => { await sandbox.stop() }) // leaves a sandbox this process did not start running

/** A world of its own for the test, deleted after it. */
async function worldOf (t) {
  const world = await sandbox.createWorld({ name: t.name, ttlSeconds: 600 })
  t.after(() => world.delete())
  return world
}

describe('each test in a world of its own', { concurrency: 4 }, () => {
  for (const notes of [1, 2, 3, 4]) {
    test(`${notes} log notes and a new client are this world's writes alone`, async (t) => {
      const world = await worldOf(t)
      for (let i = 0; i < notes; i++) {
        const written = await world.vendor('POST', `/agency/${AGENCY}/client/1000/log`, note(`note ${i}`), { version: '4.0' })
        assert.equal(written.status, 200, await written.text())
      }
      const created = await json(await world.vendor('POST', `/agency/${AGENCY}/client`, NEW_CLIENT, { version: '4.0' }))
      assert.equal(created.clientNumber, NEXT_CLIENT, 'no other test created a client in this world')
      const writes = await world.writes(AGENCY)
      assert.deepEqual(writes.map((w) => w.kind), [...Array(notes).fill('log'), 'client'])
      assert.deepEqual([...new Set(writes.map((w) => w.integration))], [`abc@${world.id}`])
      assert.equal((await world.requests({ method: 'POST' })).length, notes + 1, "the journal holds this test's requests only")
    })
  }

  test("a fault answers this world's requests only", async (t) => {
    const world = await worldOf(t)
    const other = await worldOf(t)
    await world.addFault({ match: { path: '/vendor/agencies' }, effect: { status: 503, body: { world: world.id } } })
    const faulted = await world.vendor('GET', '/agencies', undefined, { version: '4.0' })
    assert.equal(faulted.status, 503)
    assert.deepEqual(await faulted.json(), { world: world.id })
    assert.equal((await other.vendor('GET', '/agencies', undefined, { version: '4.0' })).status, 200, 'another world has no fault')
    assert.deepEqual((await world.faults()).map((f) => f.hits), [1])
  })

  for (const year of [2027, 2031]) {
    test(`the clock is this world's own (${year})`, async (t) => {
      const world = await worldOf(t)
      await world.setClock(`${year}-01-01T00:00:00Z`, true)
      await world.advanceClock(60)
      await world.control('PATCH', `/agencies/${AGENCY}/clients/1000`, { details: { status: 'DeadFile' } })
      const changed = await world.vendor('GET', `/agency/${AGENCY}/clients`, undefined, { version: '4.0', asOf: `${year}-01-01T00:00:00Z` })
      assert.deepEqual(await json(changed), [1000])
      assert.equal(new Date(changed.headers.get('date')).toISOString(), `${year}-01-01T00:01:00.000Z`, "Date reads this world's clock")
    })
  }

  test('a reset within a test returns this world to its start', async (t) => {
    const world = await worldOf(t)
    await world.setClock('2030-06-01T00:00:00Z')
    await world.addFault({ match: { path: '/vendor/agency/*/client/*' }, effect: { status: 500 } })
    assert.equal((await json(await world.vendor('POST', `/agency/${AGENCY}/client`, NEW_CLIENT, { version: '4.0' }))).clientNumber, NEXT_CLIENT)
    await world.reset()
    assert.deepEqual([await world.writes(AGENCY), await world.faults(), await world.requests()], [[], [], []])
    assert.equal((await world.clock()).frozen, false)
    const again = await json(await world.vendor('POST', `/agency/${AGENCY}/client`, NEW_CLIENT, { version: '4.0' }))
    assert.equal(again.clientNumber, NEXT_CLIENT, 'the number is free again after the reset')
  })
})
