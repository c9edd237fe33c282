import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { basic, build, demoFixture } from '../helpers/app.js'
import { controlClient, ControlError, createWorld, startSandbox } from '../../src/sdk.js'

/** Tenants of a partner programme: each with a token that creates and controls its own worlds, up to a quota. */

const TOKEN = 'programme-admin-token'
const ADMIN = { authorization: `Bearer ${TOKEN}` }
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

interface Tenant { id: string, name: string, token: string, maxWorlds: number, worlds: number, createdAt: string }
interface World { id: string, token: string, integrations: Array<{ clientId: string, clientSecret: string }> }

async function createTenant (app: FastifyInstance, body: object = {}, headers: Record<string, string> = ADMIN): Promise<Tenant> {
  const res = await app.inject({ method: 'POST', url: '/_sandbox/tenants', payload: body, headers })
  if (res.statusCode !== 201) throw new Error(`POST /_sandbox/tenants answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

async function createWorldAs (app: FastifyInstance, headers: Record<string, string>, body: object = {}): Promise<World> {
  const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: body, headers })
  if (res.statusCode !== 201) throw new Error(`POST /_sandbox/worlds answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

const vendorAuth = (world: World) => basic(world.integrations[0].clientId, world.integrations[0].clientSecret)
const agenciesOf = (app: FastifyInstance, world: World) => app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: vendorAuth(world) } })

t.test('the administrator creates, lists, reads and deletes tenants; the body is checked', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const a = await createTenant(app, { name: 'Team A', maxWorlds: 3 })
  t.match(a.id, /^t[0-9a-z]{10}$/)
  t.same({ name: a.name, maxWorlds: a.maxWorlds, worlds: a.worlds }, { name: 'Team A', maxWorlds: 3, worlds: 0 })
  t.ok(a.token.length >= 20, 'a token')
  t.ok(Date.parse(a.createdAt) > 0)
  const b = await createTenant(app)
  t.same([b.name, b.maxWorlds], ['tenant 2', 10], 'no body: a default name and a quota of 10')

  const list = await app.inject({ url: '/_sandbox/tenants', headers: ADMIN })
  t.equal(list.statusCode, 200)
  t.same(list.json().tenants.map((x: Tenant) => x.id), [a.id, b.id])
  t.equal(list.json().limits.maxTenants, 1000)
  t.notOk(list.body.includes(a.token) || list.body.includes(b.token) || list.body.includes('"token"'), 'no tokens in the list')
  const one = await app.inject({ url: `/_sandbox/tenants/${a.id}`, headers: ADMIN })
  t.same(one.json(), { id: a.id, name: 'Team A', maxWorlds: 3, worlds: 0, createdAt: a.createdAt }, 'one tenant, without its token')

  for (const [body, field] of [
    [{ name: '' }, 'name'], [{ name: 'x'.repeat(101) }, 'name'], [{ maxWorlds: 0 }, 'maxWorlds'], [{ maxWorlds: 1.5 }, 'maxWorlds'],
    [{ maxWorlds: 101 }, 'maxWorlds'], [{ maxWorlds: 'ten' }, 'maxWorlds']
  ] as const) {
    const res = await app.inject({ method: 'POST', url: '/_sandbox/tenants', payload: body, headers: ADMIN })
    t.equal(res.statusCode, 400, `${JSON.stringify(body)}: 400`)
    t.match(res.body, field, `naming ${field}`)
  }
  const above = await app.inject({ method: 'POST', url: '/_sandbox/tenants', payload: { maxWorlds: 101 }, headers: ADMIN })
  t.match(above.json().detail, /at most 100.*SANDBOX_MAX_WORLDS/, 'a quota above the sandbox\'s bound names the setting')

  t.equal((await app.inject({ url: '/_sandbox/tenants/t0000000000', headers: ADMIN })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/tenants/${b.id}`, headers: ADMIN })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/tenants/${b.id}`, headers: ADMIN })).statusCode, 404, 'deleted once')
  t.same((await app.inject({ url: '/_sandbox/tenants', headers: ADMIN })).json().tenants.map((x: Tenant) => x.id), [a.id])

  const small = await build(t, { config: { controlToken: TOKEN, worlds: { max: 3, maxBytes: 1024 ** 3, worldMaxBytes: 1024 ** 3, ttlSeconds: 3600 } } })
  t.equal((await createTenant(small)).maxWorlds, 3, 'the default quota is SANDBOX_MAX_WORLDS when that is lower than 10')
})

t.test("only the administrator's token reaches the tenant routes: a tenant's or a world's is 403", async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const a = await createTenant(app)
  const world = await createWorldAs(app, bearer(a.token))
  const routes = [
    { method: 'POST' as const, url: '/_sandbox/tenants', payload: {} },
    { method: 'GET' as const, url: '/_sandbox/tenants' },
    { method: 'GET' as const, url: `/_sandbox/tenants/${a.id}` },
    { method: 'DELETE' as const, url: `/_sandbox/tenants/${a.id}` }
  ]
  for (const route of routes) {
    const byTenant = await app.inject({ ...route, headers: bearer(a.token) })
    t.equal(byTenant.statusCode, 403, `a tenant's token: ${route.method} ${route.url}`)
    t.match(byTenant.json().detail, /SANDBOX_CONTROL_TOKEN.*administrator.*its own worlds/)
    const byWorld = await app.inject({ ...route, headers: bearer(world.token) })
    t.equal(byWorld.statusCode, 403, `a world's token: ${route.method} ${route.url}`)
    t.match(byWorld.json().detail, /only that world's routes/)
    t.equal((await app.inject({ ...route })).statusCode, 401, `no token: ${route.method} ${route.url}`)
    t.equal((await app.inject({ ...route, headers: bearer('not-a-token') })).statusCode, 401, `another token: ${route.method} ${route.url}`)
  }
  const tenants = (await app.inject({ url: '/_sandbox/tenants', headers: ADMIN })).json().tenants as Tenant[]
  t.same(tenants.map((x) => [x.id, x.worlds]), [[a.id, 1]], 'nothing was created or deleted')
})

t.test("a tenant's token creates and controls its own worlds; others' are unknown to it", async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const a = await createTenant(app, { name: 'A' })
  const b = await createTenant(app, { name: 'B' })
  const a1 = await createWorldAs(app, bearer(a.token), { name: 'a1' })
  const b1 = await createWorldAs(app, bearer(b.token), { name: 'b1' })
  const plain = await createWorldAs(app, ADMIN, { name: 'the administrator\'s' })

  t.equal((await agenciesOf(app, a1)).statusCode, 200, "the tenant's world answers its credentials")
  t.equal((await app.inject({ url: `/_sandbox/worlds/${a1.id}/info`, headers: bearer(a.token) })).statusCode, 200, "the tenant's token opens its world")
  t.equal((await app.inject({ url: `/_sandbox/worlds/${a1.id}/info`, headers: bearer(a1.token) })).statusCode, 200, "and the world's own token still does")
  t.equal((await app.inject({ url: `/_sandbox/worlds/${a1.id}`, headers: bearer(a.token) })).json().tenant, a.id)

  const listed = await app.inject({ url: '/_sandbox/worlds', headers: bearer(a.token) })
  t.same(listed.json().worlds.map((w: { id: string }) => w.id), [a1.id], 'it lists its own worlds only (not the default one)')
  t.equal(listed.json().limits.maxWorlds, 10, 'with its quota')
  t.notOk(listed.body.includes(b1.id) || listed.body.includes(plain.id), 'nothing of the others')

  const unknownDetail = (await app.inject({ url: '/_sandbox/worlds/w0000000000/info', headers: bearer(a.token) })).json().detail as string
  for (const other of [b1.id, plain.id, 'default']) {
    for (const route of [
      { method: 'GET' as const, url: `/_sandbox/worlds/${other}` },
      { method: 'GET' as const, url: `/_sandbox/worlds/${other}/state` },
      { method: 'DELETE' as const, url: `/_sandbox/worlds/${other}` },
      { method: 'POST' as const, url: `/_sandbox/worlds/${other}/reset` }
    ]) {
      const res = await app.inject({ ...route, headers: bearer(a.token) })
      t.equal(res.statusCode, 404, `${route.method} ${route.url}: 404`)
      t.equal(res.json().detail, unknownDetail.replace('w0000000000', other), 'as a world that does not exist')
    }
  }
  t.equal((await agenciesOf(app, b1)).statusCode, 200, "B's world is still there")
  t.equal((await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.length, 4, 'the administrator sees every world')
  t.same((await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.map((w: { tenant: string | null }) => w.tenant), [null, a.id, b.id, null])

  for (const url of ['/_sandbox/info', '/_sandbox/state', '/_sandbox/clock', '/_sandbox/requests']) {
    const res = await app.inject({ url, headers: bearer(a.token) })
    t.equal(res.statusCode, 403, `${url}: 403`)
    t.match(res.json().detail, /\/_sandbox\/worlds\/\{id\}\/\.\.\./, 'naming the routes to use')
  }
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: bearer(a.token) })).statusCode, 403)
  t.equal((await app.inject({ url: '/_sandbox/health', headers: bearer(a.token) })).statusCode, 200, 'health stays readable')
  t.equal((await app.inject({ url: '/_sandbox/meta', headers: bearer(a.token) })).statusCode, 200, 'as do the constants')
  t.equal((await app.inject({ url: '/_sandbox/signing-key', headers: bearer(a.token) })).statusCode, 404, 'and the signing key (none here)')

  // from: its own worlds only
  const copy = await createWorldAs(app, bearer(a.token), { from: a1.id })
  t.equal((await app.inject({ url: `/_sandbox/worlds/${copy.id}`, headers: bearer(a.token) })).json().source, `copy of world ${a1.id}`)
  for (const from of [b1.id, plain.id, 'default']) {
    const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { from }, headers: bearer(a.token) })
    t.equal(res.statusCode, 404, `from ${from}: 404`)
    t.match(res.json().detail, new RegExp(`No world ${from} to copy \\(from\\)`))
  }
  const adminCopy = await createWorldAs(app, ADMIN, { from: b1.id })
  t.equal((await app.inject({ url: `/_sandbox/worlds/${adminCopy.id}`, headers: ADMIN })).json().source, `copy of world ${b1.id}`, "the administrator copies any tenant's world")
  t.equal((await app.inject({ url: `/_sandbox/tenants/${a.id}`, headers: ADMIN })).json().worlds, 2, 'A holds 2 worlds')

  // a tenant deletes its own
  t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${copy.id}`, headers: bearer(a.token) })).statusCode, 204)
  t.equal((await app.inject({ url: `/_sandbox/tenants/${a.id}`, headers: ADMIN })).json().worlds, 1)
})

t.test('the quota: 409 past maxWorlds, naming the quota and the fix; delete and expiry free a place', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const a = await createTenant(app, { maxWorlds: 2 })
  const kept = await createWorldAs(app, bearer(a.token), { ttlSeconds: 0 })
  const brief = await createWorldAs(app, bearer(a.token), { ttlSeconds: 1 })
  const full = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {}, headers: bearer(a.token) })
  t.equal(full.statusCode, 409)
  t.match(full.json().detail, /holds 2 worlds, its quota \(maxWorlds 2\).*DELETE \/_sandbox\/worlds\/\{id\}.*raise the quota: PATCH \/_sandbox\/tenants\/t[0-9a-z]{10} \{"maxWorlds": N\}/)
  const withFixture = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { from: kept.id }, headers: bearer(a.token) })
  t.equal(withFixture.statusCode, 409, 'a copy too')
  t.equal((await createWorldAs(app, ADMIN)).id.length, 11, "the quota is the tenant's: the administrator still creates worlds")

  t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${kept.id}`, headers: bearer(a.token) })).statusCode, 204)
  t.equal((await app.inject({ url: `/_sandbox/tenants/${a.id}`, headers: ADMIN })).json().worlds, 1, 'a deleted world is no longer counted')
  await createWorldAs(app, bearer(a.token))
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {}, headers: bearer(a.token) })).statusCode, 409, 'full again')

  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await agenciesOf(app, brief)).statusCode, 401, 'the idle world expired')
  t.equal((await app.inject({ url: `/_sandbox/tenants/${a.id}`, headers: ADMIN })).json().worlds, 1, 'and is no longer counted')
  await createWorldAs(app, bearer(a.token))
  t.same((await app.inject({ url: '/_sandbox/worlds', headers: bearer(a.token) })).json().worlds.length, 2)
})

t.test('a tenant at its quota learns it before a large fixture is read', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const a = await createTenant(app, { maxWorlds: 1 })
  await createWorldAs(app, bearer(a.token))
  const runner = app.worlds.fixtures
  const read = runner.world.bind(runner)
  let reads = 0
  runner.world = async (bytes, maxValues, creator) => {
    reads++
    return read(bytes, maxValues, creator)
  }
  const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { fixture: demoFixture() }, headers: bearer(a.token) })
  t.equal(res.statusCode, 409)
  t.equal(reads, 0, 'the 1.8 MB fixture was not read')
})

t.test("the sandbox's own bounds still apply to a tenant's worlds", async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN, worlds: { max: 2, maxBytes: 1024 ** 3, worldMaxBytes: 1024 ** 3, ttlSeconds: 0 } } })
  const a = await createTenant(app, { maxWorlds: 2 })
  const b = await createTenant(app, { maxWorlds: 2 })
  await createWorldAs(app, bearer(a.token))
  await createWorldAs(app, bearer(a.token))
  const refused = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {}, headers: bearer(b.token) })
  t.equal(refused.statusCode, 507, 'B is within its quota, the sandbox is not: no world will expire')
  t.match(refused.json().detail, /SANDBOX_MAX_WORLDS=2/)
})

t.test('deleting a tenant deletes its worlds (their credentials answer 401) and revokes its token', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const a = await createTenant(app)
  const b = await createTenant(app)
  const a1 = await createWorldAs(app, bearer(a.token))
  const a2 = await createWorldAs(app, bearer(a.token))
  const b1 = await createWorldAs(app, bearer(b.token))
  t.equal((await agenciesOf(app, a1)).statusCode, 200)
  const deleted = await app.inject({ method: 'DELETE', url: `/_sandbox/tenants/${a.id}`, headers: ADMIN })
  t.equal(deleted.statusCode, 204, deleted.body)
  for (const world of [a1, a2]) {
    t.equal((await agenciesOf(app, world)).statusCode, 401, `${world.id}: its credentials answer 401`)
    t.equal((await app.inject({ url: `/_sandbox/worlds/${world.id}`, headers: ADMIN })).statusCode, 404, `${world.id}: gone`)
    t.equal((await app.inject({ url: `/_sandbox/worlds/${world.id}/info`, headers: bearer(world.token) })).statusCode, 401, `${world.id}: its token opens nothing`)
    t.equal((await app.inject({ url: '/_sandbox/tenants', headers: bearer(world.token) })).statusCode, 401, `${world.id}: its token is no world's now`)
  }
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {}, headers: bearer(a.token) })).statusCode, 401, "the tenant's token opens nothing")
  t.equal((await app.inject({ url: '/_sandbox/worlds', headers: bearer(a.token) })).statusCode, 401)
  t.equal((await app.inject({ url: '/_sandbox/tenants', headers: bearer(a.token) })).statusCode, 401, "nor is it a tenant's")
  t.equal((await agenciesOf(app, b1)).statusCode, 200, "B's world stays")
  t.same((await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.map((w: { id: string }) => w.id), ['default', b1.id])
})

t.test('a tenant deleted while its world is being made (a large fixture read on the worker) gets no world', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const a = await createTenant(app)
  const runner = app.worlds.fixtures
  const read = runner.world.bind(runner)
  // the tenant goes while the posted fixture (1.8 MB: read on the worker) is being read
  runner.world = async (bytes, maxValues, creator) => {
    t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/tenants/${a.id}`, headers: ADMIN })).statusCode, 204)
    return read(bytes, maxValues, creator)
  }
  const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { fixture: demoFixture() }, headers: bearer(a.token) })
  t.equal(res.statusCode, 404)
  t.match(res.json().detail, /was deleted while its world was being created/)
  t.same((await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.map((w: { id: string }) => w.id), ['default'], 'no world left behind')
})

t.test('at most 1,000 tenants: one more is 409 until one is deleted', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  let first: Tenant | undefined
  for (let i = 0; i < 1000; i++) {
    const created = await createTenant(app)
    first ??= created
  }
  const over = await app.inject({ method: 'POST', url: '/_sandbox/tenants', payload: {}, headers: ADMIN })
  t.equal(over.statusCode, 409)
  t.match(over.json().detail, /1000 tenants, its most; DELETE \/_sandbox\/tenants\/\{id\}/)
  await app.inject({ method: 'DELETE', url: `/_sandbox/tenants/${first?.id ?? ''}`, headers: ADMIN })
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/tenants', payload: {}, headers: ADMIN })).statusCode, 201)
})

t.test('without a control token, tenants are made on loopback and their tokens still confine their holders', async (t) => {
  const app = await build(t)
  const a = await createTenant(app, {}, {})
  const b = await createTenant(app, {}, {})
  const a1 = await createWorldAs(app, bearer(a.token))
  const b1 = await createWorldAs(app, bearer(b.token))
  t.same((await app.inject({ url: '/_sandbox/worlds', headers: bearer(a.token) })).json().worlds.map((w: { id: string }) => w.id), [a1.id])
  t.equal((await app.inject({ url: `/_sandbox/worlds/${b1.id}/info`, headers: bearer(a.token) })).statusCode, 404)
  t.equal((await app.inject({ url: '/_sandbox/info', headers: bearer(a.token) })).statusCode, 403)
  t.equal((await app.inject({ url: '/_sandbox/tenants', headers: bearer(a.token) })).statusCode, 403)
  t.equal((await app.inject({ url: `/_sandbox/worlds/${b1.id}/info` })).statusCode, 200, 'no token: the plane is open, as it always was')
  t.equal((await app.inject({ url: '/_sandbox/worlds' })).json().worlds.length, 3)
  t.equal((await app.inject({ url: `/_sandbox/worlds/${b1.id}/info`, headers: bearer(a1.token) })).statusCode, 200, "a world's token opens every world there, as before")
})

t.test('the SDK: control.tenants, and a control client with a tenant token creates and uses its worlds', async (t) => {
  const sandbox = await startSandbox({ controlToken: TOKEN })
  t.teardown(() => sandbox.close())
  const admin = controlClient(sandbox.url, TOKEN)
  const created = await admin.tenants.create({ name: 'partner', maxWorlds: 2 })
  t.same((await admin.tenants.list()).tenants.map((x) => x.id), [created.id])
  t.equal((await admin.tenants.get(created.id)).name, 'partner')

  const tenant = controlClient(sandbox.url, created.token)
  const world = await tenant.worlds.create({ name: 'by the SDK' })
  await tenant.world(world.id).clock.set('2031-01-01T00:00:00Z', true)
  t.equal((await tenant.world(world.id).clock.get()).now, '2031-01-01T00:00:00.000Z')
  const second = await createWorld(sandbox.url, {}, created.token)
  await second.control.faults.add({ effect: { status: 503 }, times: 1 })
  t.equal((await fetch(`${sandbox.url}/vendor/agencies?version=4.0`, { headers: { authorization: second.authorization() } })).status, 503)
  t.same((await tenant.worlds.list()).worlds.map((w) => w.id), [world.id, second.id])
  t.equal((await admin.tenants.get(created.id)).worlds, 2)

  const refused = async (call: () => Promise<unknown>) => {
    try {
      await call()
      return 0
    } catch (err) {
      return err instanceof ControlError ? err.status : -1
    }
  }
  t.equal(await refused(() => tenant.worlds.create()), 409, 'past its quota')
  t.equal(await refused(() => tenant.reset()), 403, "the default world's routes")
  t.equal(await refused(() => tenant.tenants.list()), 403, 'the tenant routes')
  await second.delete()
  await admin.tenants.delete(created.id)
  t.equal(await refused(() => tenant.worlds.list()), 401, 'a deleted tenant\'s token opens nothing')
  t.equal(await refused(() => admin.world(world.id).info()), 404, 'its worlds are gone')
})
