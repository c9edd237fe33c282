import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { Clock } from '../../src/domain/clock.js'
import { validateFixture } from '../../src/fixture/validate.js'
import { NORTHWIND, build, demoFixture } from '../helpers/app.js'
import { createClientBody, logNote } from '../helpers/writes.js'

/** Finding 7: numbers and times past their range. */

const ctl = (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as object }) })

/** The demo fixture with agency 2001's last client renumbered to the largest client number. */
function atTheLimit () {
  const fixture = demoFixture()
  const agency = fixture.agencies.find((a) => a.agencyId === 2001)!
  agency.clients[agency.clients.length - 1].clientNumber = 2147483647
  return fixture
}

t.test('create client when the agency\'s highest number is 2147483647: 409 naming the cause; state then reset still round-trips', async (t) => {
  const app = await build(t, { fixture: atTheLimit() })
  const create = () => app.inject({ method: 'POST', url: '/vendor/agency/2001/client?version=4.0', headers: { authorization: NORTHWIND }, payload: createClientBody() })
  const res = await create()
  t.equal(res.statusCode, 409)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.match(res.json(), { status: 409, detail: /Agency 2001 has no client numbers left: .*2147483647, the largest a client number can be/ })
  t.notMatch(res.body, /2147483648/)
  t.equal((await ctl(app, 'GET', '/agencies/2001/writes?kind=client')).json().length, 0, 'nothing was created')
  t.equal((await create()).statusCode, 409, 'a refused call uses no create-client budget: the next is refused the same way')
  const state = await ctl(app, 'GET', '/state')
  t.equal(state.statusCode, 200)
  t.equal((await ctl(app, 'POST', '/reset', state.json())).statusCode, 200, 'the state document resets')
  // Another agency with room still creates.
  const app2 = await build(t)
  t.equal((await app2.inject({ method: 'POST', url: '/vendor/agency/2001/client?version=4.0', headers: { authorization: NORTHWIND }, payload: createClientBody() })).statusCode, 200)
})

t.test('the simulator makes no client past 2147483647', async (t) => {
  const fixture = atTheLimit()
  fixture.agencies = fixture.agencies.filter((a) => a.agencyId === 2001)
  fixture.integrations = fixture.integrations.filter((i) => i.clientId === 'northwind-crm').map((i) => ({ ...i, agencies: i.agencies.filter((s) => s.agencyId === 2001) }))
  const app = await build(t, { fixture, clock: new Clock(() => Date.parse('2026-11-20T00:00:00Z')) })
  t.equal((await ctl(app, 'POST', '/simulator', { ratePerMinute: 600, seed: 3, agencies: [2001], clockTime: true })).statusCode, 200)
  t.equal((await ctl(app, 'POST', '/clock/advance', { seconds: 60 })).statusCode, 200)
  const status = (await ctl(app, 'GET', '/simulator')).json()
  t.ok(status.changes >= 100, `the simulator made ${status.changes} changes`)
  t.notOk(status.byKind.newClient, 'none of them a new client: the agency has no number left')
  const clients = (await ctl(app, 'GET', '/agencies/2001/clients?limit=1000')).json() as { clientNumber: number }[]
  t.ok(clients.length >= 15)
  t.ok(clients.every((c) => c.clientNumber <= 2147483647), 'every client number fits 32 bits')
})

t.test('fixture client numbers are 32-bit: 2147483648 is refused with its path', async (t) => {
  const fixture = demoFixture()
  fixture.agencies[0].clients[0].clientNumber = 2147483648
  const result = validateFixture(fixture)
  t.notOk(result.ok)
  if (!result.ok) t.match(result.errors, [{ field: 'agencies[0].clients[0].clientNumber', message: /2147483647/ }])
})

t.test('the clock stays within years 1 to 9999: PUT and advance answer 400 naming the field and the range', async (t) => {
  const app = await build(t)
  for (const now of ['9999-12-31T23:00:00-05:00', '0000-06-01T00:00:00Z', '0000-12-31T23:59:59.999Z', '10000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z']) {
    const res = await ctl(app, 'PUT', '/clock', { now, frozen: true })
    t.equal(res.statusCode, 400, now)
    t.equal(res.json().errors[0].field, 'now', `${now} names now`)
  }
  t.match((await ctl(app, 'PUT', '/clock', { now: '9999-12-31T23:00:00-05:00' })).json().detail, /outside the clock's range, 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z/)
  t.equal((await ctl(app, 'PUT', '/clock', { now: '0001-01-01T00:00:00Z', frozen: true })).statusCode, 200, 'the first instant of year 1')
  t.equal((await ctl(app, 'PUT', '/clock', { now: '9999-12-31T23:59:59.999Z', frozen: true })).statusCode, 200, 'the last instant of year 9999')
  const past = await ctl(app, 'POST', '/clock/advance', { seconds: 0.001 })
  t.equal(past.statusCode, 400)
  t.match(past.json(), { errors: [{ field: 'seconds' }], detail: /past 9999-12-31T23:59:59\.999Z.*at most 0 seconds/ })
  t.equal((await ctl(app, 'GET', '/clock')).json().now, '9999-12-31T23:59:59.999Z', 'a refused advance moves nothing')

  // Advancing by the most one call allows, again and again, ends with a 400, never an invalid Date.
  t.equal((await ctl(app, 'PUT', '/clock', { now: '9000-01-01T00:00:00Z', frozen: true })).statusCode, 200)
  let status = 200
  let steps = 0
  while (status === 200 && steps < 200) {
    status = (await ctl(app, 'POST', '/clock/advance', { seconds: 315_360_000 })).statusCode
    steps++
  }
  t.equal(status, 400, `refused after ${steps - 1} advances of 10 years`)
  const last = Date.parse((await ctl(app, 'GET', '/clock')).json().now)
  t.ok(last <= Date.parse('9999-12-31T23:59:59.999Z') && last > Date.parse('9989-12-31T00:00:00Z'), 'within the last 10 years of the range')
  for (const url of ['/clock', '/info', '/requests', '/sessions', '/state']) t.equal((await ctl(app, 'GET', url)).statusCode, 200, `GET ${url}`)
  const write = await app.inject({ method: 'POST', url: '/vendor/agency/1001/client/1000/log?version=4.0', headers: { authorization: 'Basic YWJjOjEyMw==' }, payload: logNote() })
  t.equal(write.statusCode, 200, 'a vendor write at the end of the range')
})

t.test('a running clock set just before the end of 9999 stops there', async (t) => {
  let real = Date.parse('2026-11-20T00:00:00Z')
  const app = await build(t, { clock: new Clock(() => real) })
  t.equal((await ctl(app, 'PUT', '/clock', { now: '9999-12-31T23:59:59Z', frozen: false })).statusCode, 200)
  real += 10_000
  t.equal((await ctl(app, 'GET', '/clock')).json().now, '9999-12-31T23:59:59.999Z', 'not year 10000')
  t.equal((await ctl(app, 'GET', '/info')).statusCode, 200)
})
