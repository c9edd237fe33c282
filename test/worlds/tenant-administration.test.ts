import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { basic, build } from '../helpers/app.js'

/**
 * The administrator changes a tenant (PATCH /_sandbox/tenants/{id}: its name, its quota) and gives
 * it a new token (POST /_sandbox/tenants/{id}/token): the old one opens nothing from then on. Both
 * are the administrator's alone; the body is checked; an unknown tenant is a 404. Over two
 * instances: test/hosted/tenants-across-instances.test.ts.
 */

const TOKEN = 'programme-admin-token'
const ADMIN = { authorization: `Bearer ${TOKEN}` }
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

interface Tenant { id: string, name: string, token: string, maxWorlds: number, worlds: number, createdAt: string }
interface World { id: string, token: string, integrations: Array<{ clientId: string, clientSecret: string }> }

async function call<T> (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: object): Promise<{ status: number, body: T }> {
  const res = await app.inject({ method, url, headers, payload })
  return { status: res.statusCode, body: (res.body === '' ? undefined : res.json()) as T }
}

t.test('PATCH a tenant: its name and quota, checked', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const tenant = (await call<Tenant>(app, 'POST', '/_sandbox/tenants', ADMIN, { name: 'Team A', maxWorlds: 1 })).body
  const patch = async (payload?: object, headers: Record<string, string> = ADMIN, id = tenant.id) => await call<Tenant & { detail: string }>(app, 'PATCH', `/_sandbox/tenants/${id}`, headers, payload)

  const renamed = await patch({ name: 'Team A (renamed)' })
  t.equal(renamed.status, 200)
  t.same({ name: renamed.body.name, maxWorlds: renamed.body.maxWorlds }, { name: 'Team A (renamed)', maxWorlds: 1 }, 'the name changes, the quota stays')
  t.notOk('token' in renamed.body, 'no token in the answer')

  const world = (await call<World>(app, 'POST', '/_sandbox/worlds', bearer(tenant.token), {})).body
  const full = await call<{ detail: string }>(app, 'POST', '/_sandbox/worlds', bearer(tenant.token), {})
  t.equal(full.status, 409, 'its quota of 1 is full')
  t.match(full.body.detail, new RegExp(`PATCH /_sandbox/tenants/${tenant.id} \\{"maxWorlds": N\\}`), 'the 409 names the way to a larger quota')
  const raised = await patch({ maxWorlds: 3 })
  t.same([raised.status, raised.body.maxWorlds, raised.body.worlds], [200, 3, 1])
  t.equal((await call(app, 'POST', '/_sandbox/worlds', bearer(tenant.token), {})).status, 201, 'a raised quota takes effect at once')
  const lowered = await patch({ maxWorlds: 1 })
  t.same([lowered.status, lowered.body.maxWorlds, lowered.body.worlds], [200, 1, 2], 'a quota below what it holds: its worlds stay')
  t.equal((await call(app, 'POST', '/_sandbox/worlds', bearer(tenant.token), {})).status, 409, 'and it creates no more')
  t.equal((await call(app, 'GET', `/_sandbox/worlds/${world.id}/info`, bearer(tenant.token))).status, 200)
  t.same((await call<Tenant>(app, 'GET', `/_sandbox/tenants/${tenant.id}`, ADMIN)).body.name, 'Team A (renamed)')

  for (const [payload, field] of [
    [{}, '(body)'], [undefined, '(body)'], [{ name: '' }, 'name'], [{ maxWorlds: 0 }, 'maxWorlds'], [{ maxWorlds: 101 }, 'maxWorlds'],
    [{ maxWorlds: 'ten' }, 'maxWorlds'], [{ token: 'mine' }, '(body)']
  ] as const) {
    const res = await patch(payload)
    t.equal(res.status, 400, `${JSON.stringify(payload)}: 400`)
    t.match(JSON.stringify(res.body), field, `naming ${field}`)
  }
  t.match((await patch({ maxWorlds: 101 })).body.detail, /at most 100.*SANDBOX_MAX_WORLDS/)
  t.equal((await patch({ name: 'x' }, ADMIN, 't0000000000')).status, 404, 'an unknown tenant')
  t.equal((await patch({ name: 'mine' }, bearer(tenant.token))).status, 403, "a tenant's token may not")
  t.equal((await patch({ name: 'mine' }, bearer(world.token))).status, 403, "nor a world's")
  t.equal((await patch({ name: 'mine' }, {})).status, 401, 'nor no token')
})

t.test('a new token for a tenant: the old one opens nothing from then on', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const tenant = (await call<Tenant>(app, 'POST', '/_sandbox/tenants', ADMIN, { name: 'Team B' })).body
  const world = (await call<World>(app, 'POST', '/_sandbox/worlds', bearer(tenant.token), {})).body

  const renewed = await call<Tenant>(app, 'POST', `/_sandbox/tenants/${tenant.id}/token`, ADMIN)
  t.equal(renewed.status, 200)
  t.same({ id: renewed.body.id, name: renewed.body.name, worlds: renewed.body.worlds }, { id: tenant.id, name: 'Team B', worlds: 1 })
  t.ok(renewed.body.token.length >= 20 && renewed.body.token !== tenant.token, 'a new token')
  t.equal((await call(app, 'GET', '/_sandbox/worlds', bearer(tenant.token))).status, 401, 'the old token is refused')
  t.equal((await call(app, 'GET', `/_sandbox/worlds/${world.id}/info`, bearer(tenant.token))).status, 401, 'on its worlds too')
  const listed = await call<{ worlds: Array<{ id: string }> }>(app, 'GET', '/_sandbox/worlds', bearer(renewed.body.token))
  t.same(listed.body.worlds.map((w) => w.id), [world.id], 'the new one opens its worlds')
  t.equal((await call(app, 'GET', `/_sandbox/worlds/${world.id}/info`, bearer(world.token))).status, 200, "the world's own token stays")
  const agencies = await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: basic(world.integrations[0].clientId, world.integrations[0].clientSecret) } })
  t.equal(agencies.statusCode, 200, "and so do the world's credentials")
  t.notOk((await call<Tenant[]>(app, 'GET', '/_sandbox/tenants', ADMIN)).status !== 200)

  t.equal((await call(app, 'POST', '/_sandbox/tenants/t0000000000/token', ADMIN)).status, 404, 'an unknown tenant')
  t.equal((await call(app, 'POST', `/_sandbox/tenants/${tenant.id}/token`, bearer(renewed.body.token))).status, 403, 'a tenant may not renew its own token')
})
