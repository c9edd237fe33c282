import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { AGENCY, basic, build, DEMO, demoFixture } from '../helpers/app.js'

/** Worlds: many isolated sandboxes in one process, created by the control API, reached by their credentials. */

interface Created {
  id: string
  name: string
  token: string
  expiresAt: string | null
  integrations: Array<{ clientId: string, clientSecret: string, name: string }>
}

async function createWorld (app: FastifyInstance, body: object = {}, headers: Record<string, string> = {}): Promise<Created> {
  const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: body, headers })
  if (res.statusCode !== 201) throw new Error(`POST /_sandbox/worlds answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

/** The Authorization header of the world's copy of a demo integration. */
const authOf = (world: Created, clientId = 'abc') => {
  const i = world.integrations.find((x) => x.clientId === `${clientId}@${world.id}`)
  if (i === undefined) throw new Error(`no ${clientId} in ${world.id}`)
  return basic(i.clientId, i.clientSecret)
}

const note = (refId: string) => ({ refId, ts: '2026-11-20T10:00:00Z', channel: 29, note: 'from a test' })
const refId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

t.test('a world is created from the start-up fixture with Client Ids of its own', async (t) => {
  const app = await build(t)
  const world = await createWorld(app, { name: 'worker 1' })
  t.match(world.id, /^w[0-9a-z]{10}$/)
  t.equal(world.name, 'worker 1')
  t.ok(world.token.length >= 20, 'a token')
  t.ok(Date.parse(world.expiresAt ?? '') > Date.now() + 3500_000, 'expires an hour after its last use by default')
  t.same(world.integrations.map((i) => i.clientId), ['abc', 'northwind-crm', 'idle-vendor'].map((id) => `${id}@${world.id}`))
  const agencies = await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(world) } })
  t.equal(agencies.statusCode, 200)
  t.same(agencies.json(), (await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })).json(), 'the same agencies as the default world')
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: basic(`abc@${world.id}`, 'wrong') } })).statusCode, 401, 'the secret is checked')
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: basic(`abc@${world.id.replace(/.$/, '_')}`, world.integrations[0].clientSecret) } })).statusCode, 401, 'a world that does not exist')
})

t.test("a world's writes, clock, faults and journal are its own", async (t) => {
  const app = await build(t)
  const a = await createWorld(app)
  const b = await createWorld(app)
  const write = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, headers: { authorization: authOf(a) }, payload: note(refId(1)) })
  t.equal(write.statusCode, 200)
  const writesOf = async (prefix: string) => (await app.inject({ url: `${prefix}/agencies/${AGENCY.main}/writes` })).json() as unknown[]
  t.equal((await writesOf(`/_sandbox/worlds/${a.id}`)).length, 1, 'the write is in world a')
  t.equal((await writesOf(`/_sandbox/worlds/${b.id}`)).length, 0, 'not in world b')
  t.equal((await writesOf('/_sandbox')).length, 0, 'not in the default world')

  const changedSince = async (world: Created) => (await app.inject({
    url: `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=2026-11-01T00:00:00Z`, headers: { authorization: authOf(world) }
  })).json() as number[]
  t.same(await changedSince(a), [1000], 'the written client changed in a')
  t.same(await changedSince(b), [], 'and only there')

  await app.inject({ method: 'PUT', url: `/_sandbox/worlds/${b.id}/clock`, payload: { now: '2031-01-02T03:04:05Z', frozen: true } })
  t.equal((await app.inject({ url: `/_sandbox/worlds/${b.id}/clock` })).json().now, '2031-01-02T03:04:05.000Z')
  t.not((await app.inject({ url: `/_sandbox/worlds/${a.id}/clock` })).json().now.slice(0, 4), '2031', "b's clock is b's")
  t.not((await app.inject({ url: '/_sandbox/clock' })).json().now.slice(0, 4), '2031')

  await app.inject({ method: 'POST', url: `/_sandbox/worlds/${b.id}/faults`, payload: { effect: { status: 503 } } })
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(b) } })).statusCode, 503, "b's fault answers b's requests")
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(a) } })).statusCode, 200, "not a's")
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })).statusCode, 200, "nor the default world's")

  const journal = async (prefix: string) => (await app.inject({ url: `${prefix}/requests` })).json() as Array<{ integration: string | null, status: number }>
  t.ok((await journal(`/_sandbox/worlds/${a.id}`)).every((e) => e.integration === `abc@${a.id}`), "a's journal holds a's requests only")
  t.ok((await journal(`/_sandbox/worlds/${b.id}`)).some((e) => e.status === 503), "b's holds its fault")
  t.ok((await journal('/_sandbox')).every((e) => e.integration === 'abc'), "the default world's holds its own")
})

t.test('a reset returns a world to its own start, in milliseconds, and leaves other worlds alone', async (t) => {
  const app = await build(t)
  const a = await createWorld(app)
  await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, headers: { authorization: authOf(a) }, payload: note(refId(2)) })
  await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, headers: { authorization: DEMO }, payload: note(refId(3)) })
  const reset = await app.inject({ method: 'POST', url: `/_sandbox/worlds/${a.id}/reset` })
  t.equal(reset.statusCode, 200)
  t.same((await app.inject({ url: `/_sandbox/worlds/${a.id}/agencies/${AGENCY.main}/writes` })).json(), [], 'the world is back at its start')
  t.equal((await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes` })).json().length, 1, 'the default world keeps its write')
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(a) } })).statusCode, 200, 'its credentials still work')
})

t.test('a copy of a world as it stands, with its own start', async (t) => {
  const app = await build(t)
  await app.inject({ method: 'PATCH', url: `/_sandbox/agencies/${AGENCY.main}`, payload: { connected: false } })
  await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1001/log?version=4.0`, headers: { authorization: DEMO }, payload: note(refId(4)) })
  const copy = await createWorld(app, { from: 'default' })
  const writes = (await app.inject({ url: `/_sandbox/worlds/${copy.id}/agencies/${AGENCY.main}/writes` })).json() as Array<{ status: string, integration: string }>
  t.same(writes.map((w) => [w.status, w.integration]), [['pending', `abc@${copy.id}`]], "the default world's pending write, sent by the copy's integration")
  const reconnect = await app.inject({ method: 'PATCH', url: `/_sandbox/worlds/${copy.id}/agencies/${AGENCY.main}`, payload: { connected: true } })
  t.equal(reconnect.json().appliedPendingWrites, 1, 'applied in the copy')
  t.equal((await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes?status=pending` })).json().length, 1, 'still pending in the default world')

  const second = await createWorld(app, { from: copy.id })
  t.same(second.integrations.map((i) => i.clientId)[0], `abc@${second.id}`, "a copy of a copy has the copy's ids, renamed")
  await app.inject({ method: 'POST', url: `/_sandbox/worlds/${copy.id}/reset` })
  t.same((await app.inject({ url: `/_sandbox/worlds/${copy.id}/agencies/${AGENCY.main}/writes` })).json().map((w: { status: string }) => w.status), ['pending'],
    "the copy's reset returns to the copy's start")
})

t.test('a world from a fixture document; integrations added later get the suffix too', async (t) => {
  const app = await build(t)
  const fixture = demoFixture()
  fixture.integrations = [{ clientId: 'my-crm', clientSecret: 's3cret', name: 'My CRM', agencies: [{ agencyId: AGENCY.main, scopes: ['client-read'] }] }]
  const world = await createWorld(app, { fixture, name: 'custom', secrets: 'fixture' })
  t.same(world.integrations, [{ clientId: `my-crm@${world.id}`, clientSecret: 's3cret', name: 'My CRM' }], 'secrets: fixture keeps the fixture\'s secret')
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: basic(`my-crm@${world.id}`, 's3cret') } })).json()[0].agencyId, AGENCY.main)
  const own = await createWorld(app, { fixture, name: 'custom' })
  t.not(own.integrations[0].clientSecret, 's3cret', 'by default it gets one of its own')
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: basic(`my-crm@${own.id}`, 's3cret') } })).statusCode, 401, "the fixture's is refused")
  const added = await app.inject({ method: 'POST', url: `/_sandbox/worlds/${world.id}/integrations`, payload: { clientId: 'second', clientSecret: 'x', name: 'Second', agencies: [] } })
  t.same(added.json(), { clientId: `second@${world.id}` }, 'the answer names the id it got')
  const bad = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { fixture: { agencies: 'none' } } })
  t.equal(bad.statusCode, 400, 'an invalid fixture is a 400')
  t.match(bad.json().errors[0].field, /^fixture\./, 'naming the field inside the fixture')
})

t.test('deleted and expired worlds: credentials answer 401, control routes 404', async (t) => {
  const app = await build(t)
  const world = await createWorld(app)
  t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${world.id}` })).statusCode, 204)
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(world) } })).statusCode, 401)
  t.equal((await app.inject({ url: `/_sandbox/worlds/${world.id}/info` })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${world.id}` })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: '/_sandbox/worlds/default' })).statusCode, 409, 'the default world stays')

  const brief = await createWorld(app, { ttlSeconds: 1 })
  const kept = await createWorld(app, { ttlSeconds: 0 })
  t.equal(kept.expiresAt, null)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(brief) } })).statusCode, 401, 'idle past its ttl: gone')
  t.equal((await app.inject({ url: `/_sandbox/worlds/${brief.id}` })).statusCode, 404)
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(kept) } })).statusCode, 200, 'ttlSeconds 0 keeps it')
  const ids = (await app.inject({ url: '/_sandbox/worlds' })).json().worlds.map((w: { id: string }) => w.id)
  t.same(ids, ['default', kept.id])
})

t.test('using a world keeps it alive', async (t) => {
  const app = await build(t)
  const world = await createWorld(app, { ttlSeconds: 1 })
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 600))
    t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(world) } })).statusCode, 200, `used after ${(i + 1) * 0.6} s`)
  }
})

t.test('bounds: past the number of worlds 429 with Retry-After (507 when none expires); past their memory 507', async (t) => {
  const app = await build(t, { config: { worlds: { max: 2, maxBytes: 1024 ** 3, worldMaxBytes: 1024 ** 3, ttlSeconds: 3600 } } })
  await createWorld(app, { ttlSeconds: 60 })
  await createWorld(app, { ttlSeconds: 0 })
  const full = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {} })
  t.equal(full.statusCode, 429)
  t.ok(Number(full.headers['retry-after']) >= 59 && Number(full.headers['retry-after']) <= 60, `Retry-After until the next world expires (${String(full.headers['retry-after'])})`)
  t.match(full.json().detail, /SANDBOX_MAX_WORLDS=2/)

  const kept = await build(t, { config: { worlds: { max: 1, maxBytes: 1024 ** 3, worldMaxBytes: 1024 ** 3, ttlSeconds: 0 } } })
  await createWorld(kept)
  const none = await kept.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {} })
  t.equal(none.statusCode, 507, 'no world will expire: retrying would not help')

  // (in hosted mode the default world counts too; a world is held by the instance its first request
  // reaches, and the bound is each instance's, so it stops that request; in one process it stops the creation)
  const small = await build(t, { config: { worlds: { max: 100, maxBytes: 6 * 1024 * 1024, worldMaxBytes: 6 * 1024 * 1024, ttlSeconds: 3600 } } })
  const hosted = small.worlds.shared !== undefined
  let status = 201
  let created = 0
  while (status === 201 && created < 20) {
    const res = await small.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {} })
    status = res.statusCode
    if (status === 201 && hosted) {
      const world = res.json() as Created
      status = (await small.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(world) } })).statusCode
      if (status === 200) status = 201
      else t.match((await small.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(world) } })).json().detail, /SANDBOX_WORLDS_MAX_BYTES/)
    }
    if (status === 201) created++
    else if (!hosted) t.match(res.json().detail, /SANDBOX_WORLDS_MAX_BYTES/)
  }
  t.equal(status, 507, `the memory bound stops ${hosted ? 'taking' : 'creating'} another world (after ${created})`)
  t.ok(created >= 1 && created < 4)
})

t.test('bad requests: both from and fixture, an unknown world to copy, a ttl out of range', async (t) => {
  const app = await build(t)
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { from: 'default', fixture: demoFixture() } })).statusCode, 400)
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { from: 'w0000000000' } })).statusCode, 404)
  const ttl = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { ttlSeconds: 40 * 24 * 3600 } })
  t.equal(ttl.statusCode, 400)
  t.match(ttl.body, /ttlSeconds/)
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/worlds' })).statusCode, 201, 'no body: the start-up fixture')
})

t.test("with a control token, a world's token opens that world only", async (t) => {
  const app = await build(t, { config: { controlToken: 'sandbox-token' } })
  const admin = { authorization: 'Bearer sandbox-token' }
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {} })).statusCode, 401, 'creating a world needs the sandbox token')
  const a = await createWorld(app, {}, admin)
  const b = await createWorld(app, {}, admin)
  const as = (token: string) => ({ authorization: `Bearer ${token}` })
  t.equal((await app.inject({ url: `/_sandbox/worlds/${a.id}/info`, headers: as(a.token) })).statusCode, 200, "a's token opens a")
  t.equal((await app.inject({ url: `/_sandbox/worlds/${a.id}`, headers: as(a.token) })).statusCode, 200)
  t.equal((await app.inject({ url: `/_sandbox/worlds/${b.id}/info`, headers: as(a.token) })).statusCode, 401, 'not b')
  t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${b.id}`, headers: as(a.token) })).statusCode, 401, 'nor deletes b')
  t.equal((await app.inject({ url: '/_sandbox/info', headers: as(a.token) })).statusCode, 401, 'nor the default world')
  t.equal((await app.inject({ url: '/_sandbox/worlds', headers: as(a.token) })).statusCode, 401, 'nor the list of worlds')
  t.equal((await app.inject({ url: `/_sandbox/worlds/${b.id}/info`, headers: admin })).statusCode, 200, 'the sandbox token opens every world')
  t.equal((await app.inject({ url: '/_sandbox/worlds/w0000000000/info', headers: as(a.token) })).statusCode, 401, 'an unknown world with a wrong token: 401, not 404')
})

t.test("examiner sessions are the world's: they record its requests and no other's", async (t) => {
  const app = await build(t)
  const a = await createWorld(app)
  const session = (await app.inject({ method: 'POST', url: `/_sandbox/worlds/${a.id}/sessions`, payload: {} })).json() as { id: number }
  await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: authOf(a) } })
  await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })
  await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })
  const view = (await app.inject({ url: `/_sandbox/worlds/${a.id}/sessions/${session.id}` })).json()
  t.equal(view.recorded, 1, "only the world's request")
  t.equal((await app.inject({ url: `/_sandbox/sessions/${session.id}` })).statusCode, 404, "another world's session is unknown here")
  t.same((await app.inject({ url: '/_sandbox/sessions' })).json(), [], 'and not listed')
})
