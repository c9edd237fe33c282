/**
 * The default world's database file is reset in place (it also keeps every world's examiner
 * sessions): the transaction that replaces its data runs with foreign keys unenforced, checks
 * what it inserted before it commits, and leaves folding the write-ahead log into the file to the
 * fixture worker's connection. Answers are those of the fixture; a reference that leads nowhere
 * rolls the whole replacement back; the connection's settings are back as they were afterwards.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Fixture } from '../../src/fixture/schema.js'
import { UNPARSED_JSON_BYTES } from '../../src/http/json-body.js'
import { prepareWorld } from '../../src/domain/world.js'
import { build, demoFixture, grownDemoFixture, type Teardown } from '../helpers/app.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The demo fixture grown by copies of its first agency's clients (read on the fixture worker). */
function largeFixture (): Fixture {
  const bytes = JSON.stringify(demoFixture()).length + 8 * UNPARSED_JSON_BYTES
  return grownDemoFixture((fixture) => JSON.stringify(fixture).length >= bytes)
}

async function onFile (t: Teardown): Promise<FastifyInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-reset-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return await build(t, { config: { db: join(dir, 'sandbox.db') } })
}

const clientCount = (fixture: Fixture) => fixture.agencies.reduce((n, a) => n + a.clients.length, 0)

t.test('a reset of the default world\'s file to a large fixture answers as the fixture, and the connection is as it was', async (t) => {
  const app = await onFile(t)
  const { db } = app.worlds.default
  const fixture = largeFixture()
  const res = await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(fixture) })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().counts.clients, clientCount(fixture))
  t.equal(app.worlds.default.db, db, 'the same database file, loaded in place')
  t.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are enforced again')
  const world = await app.inject({ method: 'POST', url: '/_sandbox/worlds', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ fixture, secrets: 'fixture' }) })
  const { id } = world.json()
  const other = (await app.inject({ url: `/_sandbox/worlds/${id}/state` })).body.replaceAll(`@${id}`, '')
  t.equal((await app.inject({ url: '/_sandbox/state' })).body, other, 'the same state document as a world created from the fixture')
  for (let i = 0; i < 200 && db.pragma('wal_autocheckpoint', { simple: true }) !== 1000; i++) await sleep(25)
  t.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000, 'commits fold the log in again once the worker has')
  const [log] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number, checkpointed: number }>
  t.equal(log.checkpointed, log.log, 'nothing of the log is left unfolded')
})

t.test('a replacement whose data refers to a missing row is rolled back whole', async (t) => {
  const app = await onFile(t)
  const world = app.worlds.default
  const before = (await app.inject({ url: '/_sandbox/state' })).body
  const fixture = largeFixture()
  const prepared = prepareWorld(fixture)
  // a subscription to an agency the world does not hold: no fixture that passes validation has one
  const { subscriptions } = prepared.integrations[0]
  subscriptions.push({ ...subscriptions[0], agencyId: 4242 })
  await t.rejects(world.reset({ fixture: prepared, source: '(test)' }), /refers from subscriptions to a missing row of agencies/)
  t.equal((await app.inject({ url: '/_sandbox/state' })).body, before, 'the data as it was')
  t.equal(world.db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are enforced again')
  const again = await app.inject({ method: 'POST', url: '/_sandbox/reset' })
  t.equal(again.statusCode, 200, 'the next reset works')
  t.equal(again.json().counts.clients, clientCount(demoFixture()))
})

t.test('a reset from a large fixture back to a small one leaves folding the log (the pages of the clients removed) to the worker too', async (t) => {
  const app = await onFile(t)
  const { db } = app.worlds.default
  const { fixtures } = app.worlds
  const folded: string[] = []
  const checkpoint = fixtures.checkpoint.bind(fixtures)
  fixtures.checkpoint = async (file) => {
    folded.push(file)
    await checkpoint(file)
  }
  const large = await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(largeFixture()) })
  t.equal(large.statusCode, 200, large.body)
  t.same(folded, [db.name], 'the large fixture loaded: by the worker')
  const small = await app.inject({ method: 'POST', url: '/_sandbox/reset' })
  t.equal(small.statusCode, 200, small.body)
  t.equal(small.json().counts.clients, clientCount(demoFixture()), 'the start-up fixture\'s clients')
  t.same(folded, [db.name, db.name], 'the large fixture\'s clients removed: by the worker')
  const again = await app.inject({ method: 'POST', url: '/_sandbox/reset' })
  t.equal(again.statusCode, 200)
  t.equal(folded.length, 2, 'a small world reset to a small fixture: by its own commit, as before')
  for (let i = 0; i < 200 && db.pragma('wal_autocheckpoint', { simple: true }) !== 1000; i++) await sleep(25)
  t.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000, 'commits fold the log in again once the worker has')
})
