import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { AGENCY, basic, build, DEMO } from '../helpers/app.js'

/**
 * Secrets of their own: a created world's integrations get new random Client Secrets (at least 128
 * bits), given in the create answer and to whoever holds a token that opens the world, and kept
 * across its resets; the fixture's secrets (`123` in the demo) stay the default world's. `secrets:
 * "fixture"` keeps them where no tenant is involved.
 */

const TOKEN = 'secrets-admin-token'
const ADMIN = { authorization: `Bearer ${TOKEN}` }
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

interface Credentials { clientId: string, clientSecret: string, name: string }
interface Created { id: string, token: string, integrations: Credentials[] }

async function create (app: FastifyInstance, body: object = {}, headers: Record<string, string> = ADMIN): Promise<Created> {
  const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: body, headers })
  if (res.statusCode !== 201) throw new Error(`POST /_sandbox/worlds answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

const agencies = (app: FastifyInstance, clientId: string, secret: string) =>
  app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: basic(clientId, secret) } })

t.test("a world's integrations get secrets of their own: random, 128 bits or more, the fixture's refused", async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const a = await create(app)
  const b = await create(app)
  const secrets = [...a.integrations, ...b.integrations].map((i) => i.clientSecret)
  for (const secret of secrets) t.match(secret, /^[A-Za-z0-9_-]{22}$/, `${secret}: 22 base64url characters, 132 bits`)
  t.equal(new Set(secrets).size, secrets.length, 'no two alike, within a world or across worlds')
  for (const { clientId, clientSecret } of a.integrations) {
    t.equal((await agencies(app, clientId, clientSecret)).statusCode, 200, `${clientId}: its own secret opens it`)
  }
  const abc = a.integrations[0]
  t.equal((await agencies(app, abc.clientId, '123')).statusCode, 401, "the fixture's secret (123) is refused")
  t.equal((await agencies(app, abc.clientId, b.integrations[0].clientSecret)).statusCode, 401, "another world's is refused")
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })).statusCode, 200, 'the default world keeps the fixture\'s secrets')
})

t.test('the secrets survive resets, and come back to whoever holds a token that opens the world, never in a listing', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const world = await create(app)
  const abc = world.integrations[0]
  t.equal((await app.inject({ method: 'POST', url: `/_sandbox/worlds/${world.id}/reset`, headers: ADMIN })).statusCode, 200)
  t.equal((await agencies(app, abc.clientId, abc.clientSecret)).statusCode, 200, 'a reset to its start keeps them')
  const small = (await app.inject({ url: `/_sandbox/worlds/${world.id}/state`, headers: ADMIN })).json()
  t.equal((await app.inject({ method: 'POST', url: `/_sandbox/worlds/${world.id}/reset`, headers: ADMIN, payload: small })).statusCode, 200)
  t.equal((await agencies(app, abc.clientId, abc.clientSecret)).statusCode, 200, 'so does a reset to a fixture of its own state')
  for (const headers of [ADMIN, bearer(world.token)]) {
    const one = await app.inject({ url: `/_sandbox/worlds/${world.id}`, headers })
    t.equal(one.statusCode, 200)
    t.same(one.json().credentials, world.integrations, 'GET /_sandbox/worlds/{id} gives them to a token that opens the world')
    t.equal(one.json().maxBytes, 64 * 1024 * 1024, 'and its bound')
  }
  const other = await create(app)
  t.equal((await app.inject({ url: `/_sandbox/worlds/${world.id}`, headers: bearer(other.token) })).statusCode, 401, "another world's token does not")
  const listing = (await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).body
  t.notOk(listing.includes(abc.clientSecret), 'the listing holds no secret')
})

t.test('secrets: "fixture" keeps the fixture\'s secrets, where no tenant is involved', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const fixed = await create(app, { secrets: 'fixture' })
  t.same(fixed.integrations.map((i) => i.clientSecret), ['123', 'nw-sandbox-secret', 'idle-secret'])
  t.equal((await agencies(app, `abc@${fixed.id}`, '123')).statusCode, 200)
  await app.inject({ method: 'POST', url: `/_sandbox/worlds/${fixed.id}/reset`, headers: ADMIN })
  t.equal((await agencies(app, `abc@${fixed.id}`, '123')).statusCode, 200, 'across a reset too')
  const copy = await create(app, { from: fixed.id, secrets: 'fixture' })
  t.equal(copy.integrations[0].clientSecret, '123', 'a copy keeps the secrets of the world it copies')
  const own = await create(app, { from: fixed.id })
  t.not(own.integrations[0].clientSecret, '123', 'unless it asks for none')

  const tenant = (await app.inject({ method: 'POST', url: '/_sandbox/tenants', headers: ADMIN, payload: { name: 'partner' } })).json()
  const refused = await app.inject({ method: 'POST', url: '/_sandbox/worlds', headers: bearer(tenant.token), payload: { secrets: 'fixture' } })
  t.equal(refused.statusCode, 400, "a tenant's world cannot have the fixture's secrets")
  t.equal(refused.json().errors[0].field, 'secrets')
  const tenantWorld = await create(app, {}, bearer(tenant.token))
  const copied = await app.inject({ method: 'POST', url: '/_sandbox/worlds', headers: ADMIN, payload: { from: tenantWorld.id, secrets: 'fixture' } })
  t.equal(copied.statusCode, 400, "nor a copy of a tenant's world")
  const bad = await app.inject({ method: 'POST', url: '/_sandbox/worlds', headers: ADMIN, payload: { secrets: 'own' } })
  t.equal(bad.statusCode, 400, 'secrets takes "fixture" alone')
})

t.test('an integration added to a world keeps the secret it was given', async (t) => {
  const app = await build(t)
  const world = await create(app, {}, {})
  const added = await app.inject({
    method: 'POST',
    url: `/_sandbox/worlds/${world.id}/integrations`,
    payload: { clientId: 'mine', clientSecret: 'chosen-secret', name: 'Mine', agencies: [{ agencyId: AGENCY.main, scopes: ['client-read'] }] }
  })
  t.equal(added.statusCode, 201)
  t.equal((await agencies(app, `mine@${world.id}`, 'chosen-secret')).statusCode, 200)
})
