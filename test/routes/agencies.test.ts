import { Type } from '@sinclair/typebox'
import t from 'tap'
import { AgencyEntrySchema, AgencyUserSchema, OfficeSchema } from '../../src/schemas/agency.js'
import { AGENCY, DEMO, IDLE, NORTHWIND, build, demoFixture, schemaErrors } from '../helpers/app.js'

t.test('4.0 agencies: subscribed, not opted out, active, with scopes', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(schemaErrors(Type.Array(AgencyEntrySchema), body), [])
  const fixture = demoFixture()
  const abc = fixture.integrations.find((i) => i.clientId === 'abc')!
  const expected = abc.agencies
    .filter((s) => s.optedOut !== true && fixture.agencies.find((a) => a.agencyId === s.agencyId)!.active !== false)
    .map((s) => ({ agencyId: s.agencyId, scopes: s.scopes }))
  t.same(body, expected)
  t.same(body.map((a: { agencyId: number }) => a.agencyId), [AGENCY.main, AGENCY.limited, AGENCY.disconnected])
  t.same(body[0].scopes.slice().sort(), ['client-create', 'client-read', 'create-log-attachment-task', 'invoice-read', 'user-list'])
})

t.test('no agencies: 200 with []', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: IDLE } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), [])
})

t.test('3.0 and 1 agencies: bare ids', async (t) => {
  const app = await build(t)
  for (const url of ['/vendor/agencies?version=3.0', '/vendor/agencies']) {
    const res = await app.inject({ url, headers: { authorization: NORTHWIND } })
    t.equal(res.statusCode, 200, url)
    t.same(res.json(), [AGENCY.main, AGENCY.northwindOnly], url)
  }
})

t.test('offices: the fixture offices in the wire shape', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: `/vendor/agency/${AGENCY.main}/offices?version=4.0`, headers: { authorization: DEMO } })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(schemaErrors(Type.Array(OfficeSchema), body), [])
  const offices = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.offices
  t.same(body, [...offices].sort((a, b) => a.officeId - b.officeId).map((o) => ({ ...o, archived: o.archived ?? false })))
  t.ok(body.length >= 3)
  t.equal(body.filter((o: { primaryOffice: boolean }) => o.primaryOffice).length, 1)
  t.ok('zipcode' in body[0], 'offices spell it zipcode')
})

t.test('users: active users only, three-letter usernames, user-list scope', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: `/vendor/agency/${AGENCY.main}/users?version=4.0`, headers: { authorization: DEMO } })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(schemaErrors(Type.Array(AgencyUserSchema), body), [])
  const users = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.users
  const active = users.filter((u) => u.active).sort((a, b) => a.userId - b.userId)
  t.ok(users.some((u) => !u.active), 'the demo has inactive users')
  t.same(body.map((u: { userId: number }) => u.userId), active.map((u) => u.userId))
  for (const u of body) t.equal(u.username.length, 3)
  t.notOk('active' in body[0], 'no active flag on the wire')
})

t.test('users and create client do not exist in 3.0 or 1', async (t) => {
  const app = await build(t)
  for (const url of [`/vendor/agency/${AGENCY.main}/users?version=3.0`, `/vendor/agency/${AGENCY.main}/users`]) {
    const res = await app.inject({ url, headers: { authorization: DEMO } })
    t.equal(res.statusCode, 404, url)
    t.match(res.headers['content-type'], /problem\+json/)
  }
})
