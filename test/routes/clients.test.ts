import { Type } from '@sinclair/typebox'
import t from 'tap'
import { ClientSchema, CLIENT_GROUPS, DEFAULT_GROUPS, GROUP_KEYS, type ClientGroup } from '../../src/schemas/client.js'
import type { FixtureClient } from '../../src/fixture/schema.js'
import { AGENCY, DEMO, NORTHWIND, build, demoFixture, schemaErrors } from '../helpers/app.js'

const main = () => demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!
const live = () => main().clients.filter((c) => c.deleted !== true)
const deleted = () => main().clients.filter((c) => c.deleted === true)
const ids = (cs: FixtureClient[]) => cs.map((c) => c.clientNumber).sort((a, b) => a - b)
const ms = (c: FixtureClient) => Date.parse(c.details.modified)
const auth = { authorization: DEMO }
const url = (path: string, query = '') => `/vendor/agency/${AGENCY.main}/${path}?version=4.0${query}`

/** The client as the 4.0 API must answer it with these groups. */
function expected (c: FixtureClient, groups: readonly ClientGroup[]) {
  const out: Record<string, unknown> = { clientNumber: c.clientNumber }
  for (const g of groups) {
    const key = GROUP_KEYS[g]
    const value = c[key] ?? []
    out[key] = key === 'policies' ? (value as { policyIndex?: number }[]).map((p, i) => ({ ...p, policyIndex: p.policyIndex ?? i })) : value
  }
  return out
}

t.test('changed clients without asOf: every live client id, ascending', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: url('clients'), headers: auth })
  t.equal(res.statusCode, 200)
  t.same(res.json(), ids(live()))
  t.ok(res.json().length >= 250)
})

t.test('changed clients asOf: strictly after, zone-less is UTC, edges', async (t) => {
  const app = await build(t)
  const sorted = live().sort((a, b) => ms(a) - ms(b))
  const pivot = sorted[Math.floor(sorted.length / 2)]
  const at = new Date(ms(pivot)).toISOString()
  const after = (limit: number) => ids(live().filter((c) => ms(c) > limit))

  let res = await app.inject({ url: url('clients', `&asOf=${encodeURIComponent(at)}`), headers: auth })
  t.same(res.json(), after(ms(pivot)), 'asOf equal to a modified time excludes that client')
  t.notOk(res.json().includes(pivot.clientNumber))

  res = await app.inject({ url: url('clients', `&asOf=${encodeURIComponent(new Date(ms(pivot) - 1).toISOString())}`), headers: auth })
  t.ok(res.json().includes(pivot.clientNumber), 'one millisecond earlier includes it')

  res = await app.inject({ url: url('clients', `&asOf=${at.replace('Z', '')}`), headers: auth })
  t.same(res.json(), after(ms(pivot)), 'no zone means UTC')

  const offset = new Date(ms(pivot) + 2 * 3600_000).toISOString().replace('Z', '+02:00')
  res = await app.inject({ url: url('clients', `&asOf=${encodeURIComponent(offset)}`), headers: auth })
  t.same(res.json(), after(ms(pivot)), 'an explicit offset is honoured')

  res = await app.inject({ url: url('clients', '&asOf=2999-01-01T00:00:00Z'), headers: auth })
  t.same(res.json(), [], 'future asOf: nothing changed')

  res = await app.inject({ url: url('clients', '&asOf=1970-01-01'), headers: auth })
  t.same(res.json(), ids(live()), 'date-only asOf is midnight UTC')
})

t.test('changed clients: bad asOf and officeId are 400 naming the field', async (t) => {
  const app = await build(t)
  for (const bad of ['yesterday', '2024-13-45T99:00:00Z', '12345', '']) {
    const res = await app.inject({ url: url('clients', `&asOf=${encodeURIComponent(bad)}`), headers: auth })
    t.equal(res.statusCode, 400, `asOf=${bad}`)
    t.match(res.headers['content-type'], /problem\+json/)
    t.equal(res.json().errors[0].field, 'asOf')
  }
  const res = await app.inject({ url: url('clients', '&officeId=abc'), headers: auth })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'officeId')
})

t.test('changed clients: deleted and officeId filters', async (t) => {
  const app = await build(t)
  let res = await app.inject({ url: url('clients', '&deleted=true'), headers: auth })
  t.same(res.json(), ids(deleted()))
  t.ok(deleted().length >= 3)

  const recent = deleted().sort((a, b) => ms(b) - ms(a))[0]
  const since = new Date(ms(recent) - 1).toISOString()
  res = await app.inject({ url: url('clients', `&deleted=true&asOf=${since}`), headers: auth })
  t.same(res.json(), ids(deleted().filter((c) => ms(c) > ms(recent) - 1)))
  t.ok(res.json().includes(recent.clientNumber))

  res = await app.inject({ url: url('clients', '&deleted=false'), headers: auth })
  t.same(res.json(), ids(live()))

  const officeId = live()[0].details.officeId
  res = await app.inject({ url: url('clients', `&officeId=${officeId}`), headers: auth })
  t.same(res.json(), ids(live().filter((c) => c.details.officeId === officeId)))
  t.ok(res.json().length < live().length)
})

t.test('get client: default groups, no invoices, matches the fixture', async (t) => {
  const app = await build(t)
  const c = live()[0]
  const res = await app.inject({ url: url(`client/${c.clientNumber}`), headers: auth })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.same(schemaErrors(ClientSchema, body), [])
  t.same(body, expected(c, DEFAULT_GROUPS))
  t.notOk('invoices' in body)
  t.notOk(res.headers.denied)
})

t.test('get client: unknown and deleted clients are 404 problems', async (t) => {
  const app = await build(t)
  for (const n of [999999, deleted()[0].clientNumber]) {
    const res = await app.inject({ url: url(`client/${n}`), headers: auth })
    t.equal(res.statusCode, 404, `client ${n}`)
    t.match(res.json(), { status: 404, detail: new RegExp(String(n)) })
  }
  const res = await app.inject({ url: url('client/abc'), headers: auth })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'clientId')
})

t.test('include: every combination of groups, with and without the invoice opt-in', async (t) => {
  const app = await build(t)
  const c = live().find((x) => (x.invoices ?? []).length > 0)!
  for (const [who, authorization, optIn] of [['abc', DEMO, true], ['northwind', NORTHWIND, false]] as const) {
    for (let mask = 1; mask < 1 << CLIENT_GROUPS.length; mask++) {
      const asked = CLIENT_GROUPS.filter((_, i) => (mask & (1 << i)) !== 0)
      const res = await app.inject({ url: url(`client/${c.clientNumber}`, `&include=${asked.join(',')}`), headers: { authorization } })
      const denied = !optIn && asked.includes('Invoices')
      const granted = asked.filter((g) => !(denied && g === 'Invoices'))
      t.equal(res.statusCode, 200)
      t.same(res.json(), expected(c, granted), `${who} include=${asked.join(',')}`)
      t.equal(res.headers.denied, denied ? 'Invoices' : undefined, `${who} include=${asked.join(',')} Denied`)
    }
  }
})

t.test('include parsing: case, spaces, Polcies, unknown items', async (t) => {
  const app = await build(t)
  const c = live()[0]
  let res = await app.inject({ url: url(`client/${c.clientNumber}`, '&include=' + encodeURIComponent(' details , POLCIES')), headers: auth })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json()), ['clientNumber', 'details', 'policies'])
  res = await app.inject({ url: url(`client/${c.clientNumber}`, '&include=Details,Vehicles'), headers: auth })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'include')
  t.match(res.json().errors[0].message, /Vehicles.*Details, People, Contacts, Claims, Policies, Invoices/)
  res = await app.inject({ url: url(`client/${c.clientNumber}`, '&include='), headers: auth })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json()), ['clientNumber', 'details', 'people', 'contacts', 'claims', 'policies'], 'an empty include is the default')
})

t.test('batch read: 0, 1, 200 and 201 ids; bare arrays; unknown and deleted left out', async (t) => {
  const app = await build(t)
  const all = ids(live())
  const post = (payload: unknown, query = '') =>
    app.inject({ method: 'POST', url: url('clients', query), headers: auth, payload: payload as object })

  let res = await post({ clientNumbers: [] })
  t.equal(res.statusCode, 200)
  t.same(res.json(), [])

  res = await post({ clientNumbers: [all[0]] })
  t.same(res.json(), [expected(live().find((c) => c.clientNumber === all[0])!, DEFAULT_GROUPS)])

  res = await post({ clientNumbers: all.slice(0, 200) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().length, 200)
  t.same(schemaErrors(Type.Array(ClientSchema), res.json()), [])
  t.same(res.json().map((c: { clientNumber: number }) => c.clientNumber), all.slice(0, 200))

  res = await post({ clientNumbers: all.slice(0, 201) })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { detail: /at most 200 client numbers per request/, errors: [{ field: 'clientNumbers' }] })

  // A list far over the limit is refused by its length, before its 21,800 items are bound one by one.
  const objects = Array.from({ length: 21_800 }, () => ({}))
  for (const [payload, query] of [[objects, ''], [{ clientNumbers: objects }, ''], [{ ClientNumbers: objects }, ''], [objects, 'v1']] as const) {
    res = query === 'v1'
      ? await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/clients`, headers: auth, payload: payload as object })
      : await post(payload)
    t.equal(res.statusCode, 400)
    t.match(res.json(), { detail: /at most 200 client numbers per request; split the 21800 numbers/, errors: [{ field: 'clientNumbers' }] }, `${query || 'this version'}: refused by its length`)
  }

  res = await post(all.slice(0, 3))
  t.equal(res.statusCode, 200, 'a bare array is accepted')
  t.equal(res.json().length, 3)

  res = await post({ ClientNumbers: [String(all[1]), all[0], all[1], 999999, deleted()[0].clientNumber] })
  t.equal(res.statusCode, 200, 'key casing and numeric strings are accepted')
  t.same(res.json().map((c: { clientNumber: number }) => c.clientNumber), [all[1], all[0]], 'request order, each once, unknown and deleted left out')
  res = await post({ clientNumbers: [all[0], all[1], all[1], all[2]] })
  t.same(res.json().map((c: { clientNumber: number }) => c.clientNumber), [all[0], all[1], all[2]], 'a number repeated in an ascending list, once')

  res = await post({ clientNumbers: [all[0]] }, '&include=Invoices,People')
  t.same(Object.keys(res.json()[0]), ['clientNumber', 'people', 'invoices'])

  res = await post({ clientNumbers: ['x'] })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'clientNumbers[0]')

  res = await post({ clientNumbers: 'not a list', extra: 1 })
  t.equal(res.statusCode, 400)

  res = await app.inject({ method: 'POST', url: url('clients'), headers: { ...auth, 'content-type': 'application/json' }, payload: '{"clientNumbers": [1,' })
  t.equal(res.statusCode, 400)
  t.match(res.json().detail, /not valid JSON/)
})

t.test('search by exact policy number', async (t) => {
  const app = await build(t)
  const c = live().find((x) => (x.policies ?? []).length > 0)!
  const number = c.policies![0].policyNumber
  let res = await app.inject({ url: url('clients/search', `&policyNumber=${encodeURIComponent(number)}`), headers: auth })
  t.equal(res.statusCode, 200)
  t.same(res.json(), [expected(c, DEFAULT_GROUPS)])

  res = await app.inject({ url: url('clients/search', `&policyNumber=${encodeURIComponent(number.toLowerCase() + 'x')}`), headers: auth })
  t.same(res.json(), [], 'no match: empty array')

  res = await app.inject({ url: url('clients/search', `&policyNumber=${encodeURIComponent(number)}&include=Policies`), headers: auth })
  t.same(Object.keys(res.json()[0]), ['clientNumber', 'policies'])

  res = await app.inject({ url: url('clients/search'), headers: auth })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'policyNumber')

  const gone = deleted().find((x) => (x.policies ?? []).length > 0)!
  res = await app.inject({ url: url('clients/search', `&policyNumber=${encodeURIComponent(gone.policies![0].policyNumber)}`), headers: auth })
  t.same(res.json(), [], 'deleted clients are not found')
})
