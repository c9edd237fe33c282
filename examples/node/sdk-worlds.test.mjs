// The same, with the package's own client: `createWorld` from 'agency-sandbox' gives a world's
// credentials and a typed control client of that world (reset, clock, faults, sessions, ...).
//   node run-with-sandbox.mjs node --test --test-concurrency=4
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { createWorld } from 'agency-sandbox'
import { SandboxProcess } from './sandbox-process.mjs'

const AGENCY = 1001

let sandbox
before(async () => { sandbox = await SandboxProcess.start() })
after(async () => { await sandbox.stop() })

/** A world of its own for the test, deleted after it. */
async function worldOf (t) {
  const world = await createWorld(sandbox.url, { name: t.name, ttlSeconds: 600 }, sandbox.token)
  t.after(() => world.delete())
  return world
}

const logNote = (world, text) => fetch(`${world.url}/vendor/agency/${AGENCY}/client/1000/log?version=4.0`, {
  method: 'POST',
  headers: { authorization: world.authorization(), 'content-type': 'application/json' },
  body: JSON.stringify({ refId: randomUUID(), ts: '2026-11-20T10:00:00Z', channel: 29, note: text })
})

describe('worlds through the package', { concurrency: 4 }, () => {
  for (const n of [1, 2, 3]) {
    test(`an examiner session records this world's ${n} requests only`, async (t) => {
      const world = await worldOf(t)
      const session = await world.control.sessions.start({ name: t.name })
      for (let i = 0; i < n; i++) assert.equal((await logNote(world, `note ${i}`)).status, 200)
      assert.equal((await world.control.sessions.get(session.id)).recorded, n)
      assert.equal((await world.control.agencies.writes(AGENCY)).length, n)
    })
  }

  test('a disconnected agency keeps the write pending in this world, and a reset forgets it', async (t) => {
    const world = await worldOf(t)
    await world.control.agencies.patch(AGENCY, { connected: false })
    assert.equal((await logNote(world, 'saved for later')).status, 202)
    assert.equal((await world.control.agencies.writes(AGENCY, { status: 'pending' })).length, 1)
    await world.control.clock.set('2029-03-04T05:06:07Z', true)
    assert.equal((await world.control.clock.get()).now, '2029-03-04T05:06:07.000Z')
    await world.control.reset()
    assert.deepEqual(await world.control.agencies.writes(AGENCY), [])
    assert.equal((await world.control.clock.get()).frozen, false)
  })
})
