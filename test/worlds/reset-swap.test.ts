/**
 * A world in memory reset to a large fixture swaps its database for one the fixture worker built
 * (the event loop only swaps): the world answers exactly as a world created from that fixture,
 * `keep` still keeps, and a fixture the worker refuses leaves the old database and everything
 * else of the world as it was.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { Fixture } from '../../src/fixture/schema.js'
import { UNPARSED_JSON_BYTES } from '../../src/http/json-body.js'
import { AGENCY, basic, build, demoFixture, grownDemoFixture } from '../helpers/app.js'

/** The demo fixture (read on the worker already: over UNPARSED_JSON_BYTES) grown by copies of its first agency's clients. */
function largeFixture (): Fixture {
  const bytes = JSON.stringify(demoFixture()).length + 2 * UNPARSED_JSON_BYTES
  return grownDemoFixture((fixture) => JSON.stringify(fixture).length >= bytes)
}

async function createWorld (app: FastifyInstance, body: object = {}): Promise<{ id: string, integrations: Array<{ clientId: string, clientSecret: string }> }> {
  const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) })
  if (res.statusCode !== 201) throw new Error(`POST /_sandbox/worlds answered ${res.statusCode}: ${res.body}`)
  const created = res.json() as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  // its first request: in hosted mode the instance takes the world then, and app.worlds holds it from then on
  await app.inject({ url: `/_sandbox/worlds/${created.id}/clock` })
  return created
}

const resetTo = (app: FastifyInstance, worldId: string, body: object) =>
  app.inject({ method: 'POST', url: `/_sandbox/worlds/${worldId}/reset`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) })

/** A world's state document with its own id taken out of the Client Ids, to compare worlds. */
const stateOf = async (app: FastifyInstance, worldId: string) =>
  (await app.inject({ url: `/_sandbox/worlds/${worldId}/state` })).body.replaceAll(`@${worldId}`, '@(world)')

t.test('a world in memory reset to a large fixture answers as a world created from it, on a database swapped in whole', async (t) => {
  const app = await build(t)
  const fixture = largeFixture()
  // the fixture's secrets in both, so that their state documents may be compared whole
  const created = await createWorld(app, { fixture, secrets: 'fixture' })
  const reset = await createWorld(app, { secrets: 'fixture' })
  const world = app.worlds.get(reset.id)!
  const before = world.db
  const res = await resetTo(app, reset.id, fixture)
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().counts.clients, fixture.agencies.reduce((n, a) => n + a.clients.length, 0), 'every client of the fixture')
  t.equal(res.json().fixture, '(posted to /_sandbox/reset)')
  t.not(world.db, before, 'the world reads another database (the one the worker built)')
  t.notOk(before.open, 'the old database is closed')
  t.equal(await stateOf(app, reset.id), await stateOf(app, created.id), 'the same state document as a world created from the fixture')
  const secret = created.integrations.find((i) => i.clientId === `abc@${created.id}`)!.clientSecret
  const read = await app.inject({ url: `/vendor/agency/${AGENCY.main}/client/${1000 + 10_000}?version=4.0`, headers: { authorization: basic(`abc@${reset.id}`, secret) } })
  t.equal(read.statusCode, 200, 'a partner reads a client of the fixture with the world\'s own Client Id')
  t.equal(app.worlds.get(reset.id), world, 'the same world, its data swapped')
  t.notOk(app.worlds.fixtures.running, 'the fixture worker ended after the large body, giving its heap back')
  t.equal((await app.inject({ method: 'POST', url: `/_sandbox/worlds/${reset.id}/reset`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ keep: ['journal'] }) })).statusCode, 200, 'a small body does not need it')
})

t.test('a reset that keeps the data keeps the database; other parts kept are left alone by the swap', async (t) => {
  const app = await build(t)
  const fixture = largeFixture()
  const { id } = await createWorld(app)
  const world = app.worlds.get(id)!
  await app.inject({ method: 'POST', url: `/_sandbox/worlds/${id}/faults`, payload: { effect: { status: 503 } } })
  const db = world.db
  const kept = await resetTo(app, id, { ...fixture, keep: ['data'] })
  t.equal(kept.statusCode, 200, kept.body)
  t.equal(world.db, db, 'keep: [data] leaves the database as it was')
  const demoClients = demoFixture().agencies.reduce((n, a) => n + a.clients.length, 0)
  t.ok(fixture.agencies.reduce((n, a) => n + a.clients.length, 0) > demoClients, 'the fixture holds more clients than the demo')
  t.equal(world.counts().clients, demoClients, 'with the demo\'s clients')
  t.equal(world.faults.list().length, 0, 'the faults not kept are cleared')
  await app.inject({ method: 'POST', url: `/_sandbox/worlds/${id}/faults`, payload: { effect: { status: 503 } } })
  const swapped = await resetTo(app, id, { ...fixture, keep: ['faults'] })
  t.equal(swapped.statusCode, 200, swapped.body)
  t.not(world.db, db, 'the data is swapped')
  t.equal(swapped.json().counts.clients, fixture.agencies.reduce((n, a) => n + a.clients.length, 0), 'for the fixture\'s')
  t.equal(world.faults.list().length, 1, 'the fault rule kept')
})

t.test('a large fixture the worker refuses leaves the world as it was', async (t) => {
  const app = await build(t)
  const { id } = await createWorld(app)
  const world = app.worlds.get(id)!
  const db = world.db
  const state = await stateOf(app, id)
  await app.inject({ method: 'POST', url: `/_sandbox/worlds/${id}/faults`, payload: { effect: { status: 503 } } })
  const fixture = largeFixture()
  fixture.agencies.find((a) => a.agencyId === AGENCY.main)!.clients.at(-1)!.clientNumber = -5
  const res = await resetTo(app, id, fixture)
  t.equal(res.statusCode, 400, res.body)
  t.match(res.body, /clientNumber/, 'naming the field')
  t.equal(world.db, db, 'the same database')
  t.ok(db.open, 'still open')
  t.equal(await stateOf(app, id), state, 'the same data')
  t.equal(world.faults.list().length, 1, 'nothing else reset')
})
