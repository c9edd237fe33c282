import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { DEMO, build } from '../helpers/app.js'

/**
 * No header hides a request: the console's own vendor reads are told apart by a cookie of this
 * process, which the sandbox gives the console's page (HttpOnly, SameSite=Strict) and only to the
 * sandbox's administrator. A partner that sends the console's header, whatever its value and
 * whatever Sec-Fetch-* headers come with it, is journaled, faulted and examined like any other.
 */

const numbers = Array.from({ length: 201 }, (_, i) => 1000 + i)
const ctl = (app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as object }) })

async function careless (app: FastifyInstance, headers: Record<string, string>) {
  const batch = await app.inject({ method: 'POST', url: '/vendor/agency/1001/clients?version=4.0', headers: { authorization: DEMO, ...headers }, payload: { clientNumbers: numbers } })
  const users = await app.inject({ url: '/vendor/agency/1001/users?version=4.0', headers: { authorization: DEMO, ...headers } })
  return { batch: batch.statusCode, users: users.statusCode }
}

/** The cookie a Set-Cookie header gives, as a Cookie header sends it back. */
const cookieOf = (setCookie: string | string[] | undefined) => (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0]

t.test('a partner sending the console\'s header with Sec-Fetch-Site: same-origin is journaled, faulted and examined: a careless client still fails', async (t) => {
  const browserLike = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }
  for (const value of ['1', '0', 'yes', '', 'console']) {
    const app = await build(t)
    const session = (await ctl(app, 'POST', '/sessions', { name: 'careless', clientId: 'abc' })).json()
    await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/users' }, effect: { status: 418 } })
    t.same(await careless(app, { 'x-sandbox-console': value, ...browserLike }), { batch: 400, users: 418 }, `'${value}': refused as any partner's, and faulted`)
    const journal = (await ctl(app, 'GET', '/requests')).json() as { path: string }[]
    t.same(journal.map((e) => e.path), ['/vendor/agency/1001/clients', '/vendor/agency/1001/users'], `'${value}': both journaled`)
    const summary = (await ctl(app, 'POST', `/sessions/${session.id}/end`)).json()
    t.equal(summary.session.recorded, 2, `'${value}': both recorded`)
    t.equal(summary.verdict, 'fail', `'${value}': the careless client fails`)
    t.ok(summary.findings.some((f: { rule: string }) => f.rule === 'batch-over-limit'), `'${value}': batch-over-limit`)
  }
})

t.test('the console\'s page gives its cookie (HttpOnly, SameSite=Strict): its reads stay out of the journal, faults and examiner', async (t) => {
  const app = await build(t)
  const page = await app.inject({ url: '/_sandbox/ui/' })
  t.equal(page.statusCode, 200)
  const setCookie = String(page.headers['set-cookie'])
  t.match(setCookie, /^agency-sandbox-console-[0-9a-f]{8}=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict$/)
  const cookie = cookieOf(setCookie)!
  const session = (await ctl(app, 'POST', '/sessions', { name: 'partner', clientId: 'abc' })).json()
  await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/users' }, effect: { status: 418 } })
  t.same(await careless(app, { cookie: `theme=dark; ${cookie}` }), { batch: 400, users: 200 }, 'the console is not faulted')
  t.same((await ctl(app, 'GET', '/requests')).json(), [], 'nor journaled')
  t.equal((await ctl(app, 'GET', `/sessions/${session.id}`)).json().recorded, 0, 'nor recorded by the examiner')
  t.notOk((await app.inject({ url: '/_sandbox/info', headers: { cookie, 'x-sandbox-console': '1' } })).headers['set-cookie'], 'a console that holds it is not given it again')
  // a cookie of another value (another process's, a guess) is a partner's request
  const forged = cookie.replace(/=.*/, `=${'A'.repeat(43)}`)
  t.same(await careless(app, { cookie: forged }), { batch: 400, users: 418 }, 'a forged cookie')
  t.same(await careless(app, { cookie: cookie.replace(/^agency-sandbox-console-[0-9a-f]{8}/, 'agency-sandbox-console-00000000') }), { batch: 400, users: 418 }, 'the value under another name')
  t.equal((await ctl(app, 'GET', '/requests')).json().length, 4, 'both journaled')
  t.equal((await ctl(app, 'GET', `/sessions/${session.id}`)).json().recorded, 4, 'and recorded')
})

t.test('with a control token the cookie goes to the administrator alone: not with the page, not to a tenant or a world', async (t) => {
  const token = 'console-cookie-token'
  const app = await build(t, { config: { controlToken: token } })
  const asked = (url: string, bearer?: string) => app.inject({ url, headers: { 'x-sandbox-console': '1', ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }) } })
  t.equal((await app.inject({ url: '/_sandbox/ui/' })).headers['set-cookie'], undefined, 'the page loads for anyone: no cookie with it')
  t.equal((await asked('/_sandbox/info')).headers['set-cookie'], undefined, 'no token: a 401, no cookie')
  const admin = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const tenant = (await app.inject({ method: 'POST', url: '/_sandbox/tenants', headers: admin, payload: { name: 'partner' } })).json() as { token: string }
  const world = (await app.inject({ method: 'POST', url: '/_sandbox/worlds', headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, payload: {} })).json() as { id: string, token: string }
  const byTenant = await asked('/_sandbox/worlds', tenant.token)
  t.equal(byTenant.statusCode, 200)
  t.equal(byTenant.headers['set-cookie'], undefined, 'a tenant\'s token is no administrator\'s')
  const byWorld = await asked(`/_sandbox/worlds/${world.id}/info`, world.token)
  t.equal(byWorld.statusCode, 200)
  t.equal(byWorld.headers['set-cookie'], undefined, 'nor a world\'s')
  const byAdministrator = await asked('/_sandbox/info', token)
  t.match(String(byAdministrator.headers['set-cookie']), /HttpOnly; SameSite=Strict$/, 'the console\'s first call with the sandbox\'s token gets it')
  t.equal((await app.inject({ url: '/_sandbox/info', headers: { authorization: `Bearer ${token}` } })).headers['set-cookie'], undefined, 'a program (no console header) is not given one')
})
