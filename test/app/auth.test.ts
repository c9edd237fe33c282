import t from 'tap'
import { AGENCY, DEMO, IDLE, NORTHWIND, basic, build } from '../helpers/app.js'

const V4 = '?version=4.0'
const CREDENTIALS = 'The provided credentials are invalid'
const UNAVAILABLE = 'The requested agency is not available to the vendor'

t.test('401 for missing, malformed and wrong credentials, with the documented sentence', async (t) => {
  const app = await build(t)
  const cases: [string, string | undefined][] = [
    ['no header', undefined],
    ['not Basic', 'Bearer abc'],
    ['Basic without credentials', 'Basic'],
    ['not base64 of id:secret', 'Basic ' + Buffer.from('abc123').toString('base64')],
    ['garbage', 'Basic !!!!'],
    ['wrong secret', basic('abc', '1234')],
    ['empty secret', basic('abc', '')],
    ['unknown client id', basic('nobody', '123')],
    ['secret of another integration', basic('abc', 'nw-sandbox-secret')]
  ]
  for (const [name, authorization] of cases) {
    const res = await app.inject({ url: '/vendor/agencies' + V4, headers: authorization === undefined ? {} : { authorization } })
    t.equal(res.statusCode, 401, name)
    t.equal(res.body, CREDENTIALS, `${name}: body`)
    t.match(res.headers['content-type'], /^text\/plain/, `${name}: plain text`)
  }
})

t.test('the docs example credentials abc:123 authenticate', async (t) => {
  const app = await build(t)
  t.equal(DEMO, 'Basic YWJjOjEyMw==')
  const res = await app.inject({ url: '/vendor/agencies' + V4, headers: { authorization: DEMO } })
  t.equal(res.statusCode, 200)
})

t.test('403 with the documented sentence for every agency the integration cannot use', async (t) => {
  const app = await build(t)
  const cases: [string, string, number][] = [
    ['opted out', DEMO, AGENCY.optedOut],
    ['inactive agency', DEMO, AGENCY.inactive],
    ['unknown agency', DEMO, 9999],
    ["another integration's agency", DEMO, AGENCY.northwindOnly],
    ['not subscribed', NORTHWIND, AGENCY.limited],
    ['no subscriptions at all', IDLE, AGENCY.main]
  ]
  for (const [name, authorization, agencyId] of cases) {
    for (const path of ['offices', 'clients', 'client/1000', 'users', 'clients/search?policyNumber=X&']) {
      const sep = path.includes('?') ? '' : '?'
      const res = await app.inject({ url: `/vendor/agency/${agencyId}/${path}${sep}version=4.0`, headers: { authorization } })
      t.equal(res.statusCode, 403, `${name}: ${path}`)
      t.equal(res.body, UNAVAILABLE, `${name}: ${path} body`)
    }
  }
})

t.test('authentication comes before the agency check, and the agency check before validation', async (t) => {
  const app = await build(t)
  let res = await app.inject({ url: `/vendor/agency/${AGENCY.optedOut}/clients?version=4.0&asOf=nonsense` })
  t.equal(res.statusCode, 401)
  res = await app.inject({ url: `/vendor/agency/${AGENCY.optedOut}/clients?version=4.0&asOf=nonsense`, headers: { authorization: DEMO } })
  t.equal(res.statusCode, 403)
  res = await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=nonsense`, headers: { authorization: DEMO } })
  t.equal(res.statusCode, 400)
})

t.test('a missing scope is a 403 problem naming the scope', async (t) => {
  const app = await build(t)
  let res = await app.inject({ url: `/vendor/agency/${AGENCY.limited}/users${V4}`, headers: { authorization: DEMO } })
  t.equal(res.statusCode, 403)
  t.match(res.headers['content-type'], /application\/problem\+json/)
  t.match(res.json(), { status: 403, detail: /user-list/ })
  res = await app.inject({ url: `/vendor/agency/${AGENCY.main}/users${V4}`, headers: { authorization: NORTHWIND } })
  t.equal(res.statusCode, 403)
  t.match(res.json().detail, /user-list/)
  // offices need only the subscription
  res = await app.inject({ url: `/vendor/agency/${AGENCY.limited}/offices${V4}`, headers: { authorization: DEMO } })
  t.equal(res.statusCode, 200)
})

t.test('the control plane needs no vendor credentials', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/_sandbox/health' })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'ok', version: /^\d+\.\d+\.\d+/ })
})
