/**
 * What an operator reads of an instance: each request's id (an `x-request-id` sent is kept when
 * usable, else one is made), echoed in the answer, journaled, and bound to its log line, which
 * names its world and tenant; /_sandbox/metrics in the Prometheus text format (the
 * administrator's, like the tenants' routes), counting requests by route, status, world and
 * tenant; /_sandbox/health answering 200 on a sandbox without PostgreSQL.
 */
import t from 'tap'
import { build, basic, DEMO } from '../helpers/app.js'
import { serveProcess } from '../helpers/process.js'

const TOKEN = 'operator-token'
const ADMIN = { authorization: `Bearer ${TOKEN}` }
const MADE = /^[\w-]{12}-[0-9a-z]+$/

t.test('request ids: kept when usable, else made; echoed and journaled', async (t) => {
  const app = await build(t)
  const kept = await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO, 'x-request-id': 'trace-0af7651916cd43dd8448eb211c80319c' } })
  t.equal(kept.headers['x-request-id'], 'trace-0af7651916cd43dd8448eb211c80319c', 'a usable id sent is kept')
  const made: string[] = []
  for (const sent of [undefined, '', 'x'.repeat(129), 'has space', 'new\u00e9line', 'semi;colon']) {
    const res = await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO, ...(sent === undefined ? {} : { 'x-request-id': sent }) } })
    const id = String(res.headers['x-request-id'])
    t.match(id, MADE, `${JSON.stringify(sent?.slice(0, 12))}: replaced by one the instance makes`)
    made.push(id)
  }
  t.equal(new Set(made).size, made.length, 'each made id is new')
  t.match((await app.inject({ url: '/_sandbox/info' })).headers['x-request-id'], MADE, 'control calls too')
  t.match((await app.inject({ url: '/no/such/route' })).headers['x-request-id'], MADE, 'and answers no route serves')
  const journal = (await app.inject({ url: '/_sandbox/requests' })).json() as Array<{ requestId: string }>
  t.same(journal.map((e) => e.requestId), ['trace-0af7651916cd43dd8448eb211c80319c', ...made], 'the journal keeps each request\'s id')
})

t.test('metrics: the administrator\'s, in the Prometheus text format', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const tenant = (await app.inject({ method: 'POST', url: '/_sandbox/tenants', headers: ADMIN, payload: { name: 'team' } })).json() as { id: string, token: string }
  const world = (await app.inject({ method: 'POST', url: '/_sandbox/worlds', headers: { authorization: `Bearer ${tenant.token}` }, payload: {} })).json() as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  const worldAuth = basic(world.integrations[0].clientId, world.integrations[0].clientSecret)
  for (let i = 0; i < 3; i++) await app.inject({ url: '/vendor/agency/1001/client/1000?version=4.0', headers: { authorization: worldAuth } })
  await app.inject({ url: '/vendor/agency/1001/client/1000?version=4.0', headers: { authorization: DEMO } })
  await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: basic('abc', 'wrong') } })

  t.equal((await app.inject({ url: '/_sandbox/metrics' })).statusCode, 401, 'no token: 401')
  t.equal((await app.inject({ url: '/_sandbox/metrics', headers: { authorization: `Bearer ${tenant.token}` } })).statusCode, 403, "a tenant's token: 403")
  const res = await app.inject({ url: '/_sandbox/metrics', headers: ADMIN })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const text = res.body
  t.match(text, new RegExp(`sandbox_http_requests_total\\{route="/vendor/agency/:agencyId/client/:clientId",method="GET",status="200",world="${world.id}",tenant="${tenant.id}"\\} 3\\n`), 'requests by route, status, world and tenant')
  t.match(text, /sandbox_http_requests_total\{route="\/vendor\/agency\/:agencyId\/client\/:clientId",method="GET",status="200",world="default",tenant=""\} 1\n/)
  t.match(text, /sandbox_http_requests_total\{route="\/vendor\/agencies",method="GET",status="401",world="default",tenant=""\} 1\n/)
  t.match(text, /sandbox_http_requests_total\{route="\/_sandbox\/tenants",method="POST",status="201",world="default",tenant=""\} 1\n/)
  t.match(text, new RegExp(`sandbox_http_requests_total\\{route="/_sandbox/worlds",method="POST",status="201",world="default",tenant="${tenant.id}"\\} 1\\n`), "a tenant's control call is counted under its tenant")
  t.match(text, /sandbox_http_request_duration_seconds_bucket\{route="\/vendor\/agency\/:agencyId\/client\/:clientId",method="GET",le="\+Inf"\} 4\n/, 'latency histograms')
  t.match(text, /sandbox_http_request_duration_seconds_count\{route="\/vendor\/agency\/:agencyId\/client\/:clientId",method="GET"\} 4\n/)
  t.match(text, /sandbox_worlds 2\n/, 'worlds held')
  t.match(text, new RegExp(`sandbox_world_bytes\\{world="${world.id}",tenant="${tenant.id}"\\} [1-9]\\d+\\n`), 'and their bytes')
  t.match(text, /sandbox_tenants 1\n/)
  t.notMatch(text, /sandbox_pg_/, 'no PostgreSQL figures without PostgreSQL')

  t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${world.id}`, headers: ADMIN })).statusCode, 204)
  const after = (await app.inject({ url: '/_sandbox/metrics', headers: ADMIN })).body
  t.notMatch(after, new RegExp(`world="${world.id}"`), "a deleted world's series are forgotten")
  t.match(after, /sandbox_worlds 1\n/)
})

t.test('health: 200 on a sandbox without PostgreSQL, without a token', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const res = await app.inject({ url: '/_sandbox/health' })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'ok', version: /^\d+\.\d+\.\d+/ })
})

t.test('the log line of each request names its id, world and tenant', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:', SANDBOX_CONTROL_TOKEN: TOKEN })
  t.teardown(() => served.child.kill('SIGKILL'))
  const tenant = await (await fetch(`${served.url}/_sandbox/tenants`, { method: 'POST', headers: { ...ADMIN, 'content-type': 'application/json' }, body: '{}' })).json() as { id: string, token: string }
  const world = await (await fetch(`${served.url}/_sandbox/worlds`, { method: 'POST', headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json', 'x-request-id': 'create-1' }, body: '{}' })).json() as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: { authorization: basic(world.integrations[0].clientId, world.integrations[0].clientSecret), 'x-request-id': 'partner-1' } })
  await fetch(`${served.url}/_sandbox/worlds/${world.id}/info`, { headers: { authorization: `Bearer ${tenant.token}`, 'x-request-id': 'control-1' } })
  served.child.kill('SIGTERM')
  await served.exited
  const lines = served.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
  const of = (id: string) => lines.find((l) => l.reqId === id && typeof l.status === 'number')
  t.match(of('create-1'), { path: '/_sandbox/worlds', status: 201, world: 'default', tenant: tenant.id }, 'a tenant creating a world')
  t.match(of('partner-1'), { path: '/vendor/agencies', status: 200, world: world.id, tenant: tenant.id }, 'a partner call of its world')
  t.match(of('control-1'), { path: `/_sandbox/worlds/${world.id}/info`, status: 200, world: world.id, tenant: tenant.id }, 'a control call of its world')
})
