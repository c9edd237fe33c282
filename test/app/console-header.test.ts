import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { DEMO, build } from '../helpers/app.js'

/**
 * Finding 8: the x-sandbox-console header exempts only the web console's own requests (its
 * exact value, from a page of the sandbox's own origin). A partner that sends it, whatever its
 * value, is journaled, faulted and examined like any other.
 */

const numbers = Array.from({ length: 201 }, (_, i) => 1000 + i)
const ctl = (app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as object }) })

async function careless (app: FastifyInstance, headers: Record<string, string>) {
  const batch = await app.inject({ method: 'POST', url: '/vendor/agency/1001/clients?version=4.0', headers: { authorization: DEMO, ...headers }, payload: { clientNumbers: numbers } })
  const users = await app.inject({ url: '/vendor/agency/1001/users?version=4.0', headers: { authorization: DEMO, ...headers } })
  return { batch: batch.statusCode, users: users.statusCode }
}

t.test('a partner sending x-sandbox-console (any value) is journaled, faulted and examined: a careless client still fails', async (t) => {
  for (const value of ['0', '1', 'yes', '', 'console']) {
    const app = await build(t)
    const session = (await ctl(app, 'POST', '/sessions', { name: 'careless', clientId: 'abc' })).json()
    await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/users' }, effect: { status: 418 } })
    t.same(await careless(app, { 'x-sandbox-console': value }), { batch: 400, users: 418 }, `'${value}': refused as any partner's, and faulted`)
    const journal = (await ctl(app, 'GET', '/requests')).json() as { path: string }[]
    t.same(journal.map((e) => e.path), ['/vendor/agency/1001/clients', '/vendor/agency/1001/users'], `'${value}': both journaled`)
    const summary = (await ctl(app, 'POST', `/sessions/${session.id}/end`)).json()
    t.equal(summary.verdict, 'fail', `'${value}': the careless client fails`)
    t.ok(summary.findings.some((f: { rule: string }) => f.rule === 'batch-over-limit'), `'${value}': batch-over-limit`)
  }
})

t.test('the console\'s own reads (its value, from its own origin) stay out of the journal, faults and examiner', async (t) => {
  const app = await build(t)
  const session = (await ctl(app, 'POST', '/sessions', { name: 'partner', clientId: 'abc' })).json()
  await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/users' }, effect: { status: 418 } })
  const console = { 'x-sandbox-console': '1', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' }
  t.same(await careless(app, console), { batch: 400, users: 200 }, 'the console is not faulted')
  t.same((await ctl(app, 'GET', '/requests')).json(), [], 'nor journaled')
  t.equal((await ctl(app, 'GET', `/sessions/${session.id}`)).json().recorded, 0, 'nor recorded by the examiner')
  // Another value from the same origin, or the console's value from another site, is a partner's.
  t.same(await careless(app, { ...console, 'x-sandbox-console': '0' }), { batch: 400, users: 418 }, 'another value')
  t.same(await careless(app, { ...console, 'sec-fetch-site': 'cross-site' }), { batch: 400, users: 418 }, 'another site')
  t.equal((await ctl(app, 'GET', '/requests')).json().length, 4, 'both journaled')
  t.equal((await ctl(app, 'GET', `/sessions/${session.id}`)).json().recorded, 4, 'and recorded')
})
