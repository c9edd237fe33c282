import t from 'tap'
import { AGENCY, DEMO, build } from '../helpers/app.js'

t.test('unsupported version values are 400 naming the supported ones', async (t) => {
  const app = await build(t)
  for (const v of ['2.0', '5', 'abc', '4.1', '']) {
    const res = await app.inject({ url: `/vendor/agencies?version=${v}`, headers: { authorization: DEMO } })
    t.equal(res.statusCode, 400, `version=${v}`)
    t.match(res.headers['content-type'], /application\/problem\+json/)
    t.match(res.json(), { status: 400, detail: /unsupported version.*use 4\.0 or 3\.0, or omit it for version 1/, errors: [{ field: 'version' }] })
  }
})

t.test('unknown paths are 404 problems; version 1 lacks search', async (t) => {
  const app = await build(t)
  let res = await app.inject({ url: '/vendor/nothing?version=4.0', headers: { authorization: DEMO } })
  t.equal(res.statusCode, 404)
  t.match(res.json(), { status: 404, title: 'Not Found', detail: /GET \/vendor\/nothing/ })
  res = await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients/search?policyNumber=X`, headers: { authorization: DEMO } })
  t.equal(res.statusCode, 404)
  t.match(res.json().detail, /version 1 has no such operation/)
  res = await app.inject({ url: '/nowhere' })
  t.equal(res.statusCode, 404)
})

t.test('problem bodies have type, title, status and detail', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: `/vendor/agency/${AGENCY.main}/client/999999?version=4.0`, headers: { authorization: DEMO } })
  const body = res.json()
  t.same(Object.keys(body).sort(), ['detail', 'status', 'title', 'type'])
  t.match(body.type, /^https:\/\/.+\/problems\/client-not-found$/)
})

t.test('a wrong content type on a JSON route is 415', async (t) => {
  const app = await build(t)
  const res = await app.inject({
    method: 'POST',
    url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`,
    headers: { authorization: DEMO, 'content-type': 'text/csv' },
    payload: '1,2,3'
  })
  t.equal(res.statusCode, 415)
  t.match(res.headers['content-type'], /problem\+json/)
})

t.test('JSON bodies above the cap are 413', async (t) => {
  const app = await build(t)
  const res = await app.inject({
    method: 'POST',
    url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`,
    headers: { authorization: DEMO, 'content-type': 'application/json' },
    payload: JSON.stringify({ clientNumbers: [1], pad: 'x'.repeat(1024 * 1024 + 10) })
  })
  t.equal(res.statusCode, 413)
  t.match(res.json(), { status: 413 })
})
