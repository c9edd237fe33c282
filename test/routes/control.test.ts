import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { AGENCY, build, DEMO, demoFixture, NORTHWIND } from '../helpers/app.js'
import { attachment, createClientBody, logNote } from '../helpers/writes.js'
import { Clock } from '../../src/domain/clock.js'

const auth = { authorization: DEMO }
const v4 = (app: FastifyInstance, path: string, headers: Record<string, string> = auth) =>
  app.inject({ url: `/vendor/agency/${path}${path.includes('?') ? '&' : '?'}version=4.0`, headers })
const live = (agencyId: number, i = 0) => demoFixture().agencies.find((a) => a.agencyId === agencyId)!.clients.filter((c) => !c.deleted)[i]
const ctl = (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as object }) })

/** Every vendor answer a partner sync can see, for comparing two sandboxes. */
async function snapshot (app: FastifyInstance) {
  const out: Record<string, unknown> = {}
  for (const who of [DEMO, NORTHWIND]) {
    const agencies = (await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: who } })).json()
    out[`${who}:agencies`] = agencies
    for (const { agencyId } of agencies) {
      out[`${who}:${agencyId}:offices`] = (await v4(app, `${agencyId}/offices`, { authorization: who })).json()
      out[`${who}:${agencyId}:users`] = (await v4(app, `${agencyId}/users`, { authorization: who })).body
      const ids = (await v4(app, `${agencyId}/clients`, { authorization: who })).json()
      out[`${who}:${agencyId}:ids`] = ids
      out[`${who}:${agencyId}:deleted`] = (await v4(app, `${agencyId}/clients?deleted=true`, { authorization: who })).json()
      const res = await app.inject({ method: 'POST', url: `/vendor/agency/${agencyId}/clients?version=4.0&include=Details,People,Contacts,Claims,Policies,Invoices`, headers: { authorization: who }, payload: { clientNumbers: ids.slice(0, 200) } })
      out[`${who}:${agencyId}:clients`] = res.body
      out[`${who}:${agencyId}:writes`] = (await ctl(app, 'GET', `/agencies/${agencyId}/writes`)).json().map(({ seq: _s, ...w }: { seq: number }) => w)
    }
  }
  return out
}

t.test('info: version, clock, counts, settings', async (t) => {
  const app = await build(t)
  const res = await ctl(app, 'GET', '/info')
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    version: /\d/,
    clock: { frozen: false },
    counts: { agencies: 6, integrations: 3, clients: 340, writes: { pending: 0, applied: 0 } },
    settings: { db: ':memory:', journalSize: 1000, controlToken: false }
  })
})

t.test('state round trip: resetting to the exported state reproduces every vendor answer', async (t) => {
  const app = await build(t)
  const c = live(AGENCY.main)
  t.equal((await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/log?version=4.0`, headers: auth, payload: logNote() })).statusCode, 200)
  const file = attachment(Buffer.from('%PDF- attached bytes'))
  t.equal((await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.disconnected}/client/${live(AGENCY.disconnected).clientNumber}/attachment?version=4.0`, headers: { ...auth, ...file.headers }, payload: file.payload })).statusCode, 202)
  t.equal((await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client?version=4.0`, headers: auth, payload: createClientBody() })).statusCode, 200)
  t.equal((await ctl(app, 'PATCH', `/agencies/${AGENCY.limited}`, { supportsIncludes: true })).statusCode, 200)
  t.equal((await ctl(app, 'DELETE', `/agencies/${AGENCY.main}/clients/${live(AGENCY.main, 3).clientNumber}`)).statusCode, 200)
  const before = await snapshot(app)
  const state = (await ctl(app, 'GET', '/state')).json()
  t.equal(state.writes.length, 3)

  const other = await build(t, { fixture: demoFixture() })
  const res = await ctl(other, 'POST', '/reset', state)
  t.equal(res.statusCode, 200, res.body)
  t.same(await snapshot(other), before, 'same answers on every vendor endpoint')
  const content = await ctl(other, 'GET', `/agencies/${AGENCY.disconnected}/attachments/${file.headers.RefId}/content`)
  t.equal(content.body, '%PDF- attached bytes')
  const again = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.disconnected}/client/${live(AGENCY.disconnected).clientNumber}/attachment?version=4.0`, headers: { ...auth, ...file.headers }, payload: file.payload })
  t.equal(again.statusCode, 202, 'RefId idempotency survives the round trip')
})

t.test('reset: back to the start fixture, or to a posted one; bad fixtures list their errors', async (t) => {
  const app = await build(t)
  const c = live(AGENCY.main)
  await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/log?version=4.0`, headers: auth, payload: logNote() })
  let res = await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { 'content-type': 'application/json' } })
  t.equal(res.statusCode, 200, 'an empty JSON body is a plain reset')
  t.same((await ctl(app, 'GET', `/agencies/${AGENCY.main}/writes`)).json(), [])
  t.equal((await v4(app, `${AGENCY.main}/client/${c.clientNumber}?include=Details`)).json().details.modified, c.details.modified)

  const small = demoFixture()
  small.agencies = small.agencies.filter((a) => a.agencyId === AGENCY.main)
  small.integrations = small.integrations.map((i) => ({ ...i, agencies: i.agencies.filter((s) => s.agencyId === AGENCY.main) }))
  res = await ctl(app, 'POST', '/reset', small)
  t.equal(res.statusCode, 200)
  t.match(res.json(), { counts: { agencies: 1 } })

  const bad = demoFixture() as unknown as { agencies: { agencyId: unknown }[]; integrations: { agencies: { agencyId: number }[] }[] }
  bad.agencies[0].agencyId = -1
  bad.integrations[0].agencies[0].agencyId = 777
  res = await ctl(app, 'POST', '/reset', bad)
  t.equal(res.statusCode, 400)
  t.ok(res.json().errors.some((e: { field: string }) => e.field === 'agencies[0].agencyId'))
  t.match((await ctl(app, 'GET', '/info')).json(), { counts: { agencies: 1 } }, 'a rejected reset changes nothing')
  await ctl(app, 'POST', '/reset')
  t.match((await ctl(app, 'GET', '/info')).json(), { counts: { agencies: 6 } })
})

t.test('agencies, integrations and subscriptions: changes show on the vendor API at once', async (t) => {
  const app = await build(t)
  let res = await ctl(app, 'PATCH', `/integrations/northwind-crm/agencies/${AGENCY.main}`, { scopes: ['client-read', 'user-list'] })
  t.equal(res.statusCode, 200)
  t.equal((await v4(app, `${AGENCY.main}/users`, { authorization: NORTHWIND })).statusCode, 200, 'scope granted')
  await ctl(app, 'PATCH', `/integrations/northwind-crm/agencies/${AGENCY.main}`, { optedOut: true })
  t.equal((await v4(app, `${AGENCY.main}/offices`, { authorization: NORTHWIND })).statusCode, 403, 'opted out')
  res = await ctl(app, 'PATCH', `/integrations/northwind-crm/agencies/${AGENCY.limited}`, { scopes: ['client-read'] })
  t.match(res.json(), { created: true })
  t.equal((await v4(app, `${AGENCY.limited}/clients`, { authorization: NORTHWIND })).statusCode, 200, 'new subscription')
  t.equal((await ctl(app, 'PATCH', `/agencies/${AGENCY.main}`, { active: false })).statusCode, 200)
  t.equal((await v4(app, `${AGENCY.main}/offices`)).statusCode, 403, 'inactive agency')
  await ctl(app, 'PATCH', `/agencies/${AGENCY.main}`, { active: true })

  res = await ctl(app, 'POST', '/integrations', { clientId: 'new-vendor', clientSecret: 's3cret', name: 'New', agencies: [{ agencyId: AGENCY.main, scopes: ['client-read'] }] })
  t.equal(res.statusCode, 201)
  const nv = { authorization: 'Basic ' + Buffer.from('new-vendor:s3cret').toString('base64') }
  t.same((await app.inject({ url: '/vendor/agencies?version=3.0', headers: nv })).json(), [AGENCY.main])
  t.equal((await ctl(app, 'POST', '/integrations', { clientId: 'new-vendor', clientSecret: 'x', name: 'x', agencies: [] })).statusCode, 409)
  t.equal((await ctl(app, 'POST', '/integrations', { clientId: 'v2', clientSecret: 'x', name: 'x', agencies: [{ agencyId: 4242, scopes: [] }] })).statusCode, 400)
  t.equal((await ctl(app, 'DELETE', '/integrations/new-vendor')).statusCode, 204)
  t.equal((await app.inject({ url: '/vendor/agencies?version=3.0', headers: nv })).statusCode, 401)

  const agency = { agencyId: 3001, name: 'New Agency', defaultOfficeId: 1, offices: [{ officeId: 1, officeDescription: 'Main' }], users: [], clients: [] }
  t.equal((await ctl(app, 'POST', '/agencies', agency)).statusCode, 201)
  t.equal((await ctl(app, 'POST', '/agencies', agency)).statusCode, 409)
  t.equal((await ctl(app, 'POST', '/agencies/3001/offices', { officeId: 2, officeDescription: 'Branch' })).statusCode, 201)
  t.equal((await ctl(app, 'POST', '/agencies/3001/users', { userId: 5, username: 'ABC', email: 'abc@example.com', homeOffice: 2 })).statusCode, 201)
  t.equal((await ctl(app, 'POST', '/agencies/3001/users', { userId: 6, username: 'TOOLONG' })).statusCode, 400)
  await ctl(app, 'PATCH', '/integrations/abc/agencies/3001', { scopes: ['user-list'] })
  t.same((await v4(app, '3001/users')).json(), [{ userId: 5, username: 'ABC', email: 'abc@example.com', homeOffice: 2 }])
  t.equal((await ctl(app, 'DELETE', '/agencies/3001/offices/1')).statusCode, 409, 'the default office stays')
  t.equal((await ctl(app, 'DELETE', '/agencies/3001/offices/2')).statusCode, 204)
  t.equal((await ctl(app, 'DELETE', '/agencies/3001/users/5')).statusCode, 204)
  t.equal((await ctl(app, 'DELETE', '/agencies/3001')).statusCode, 204)
  t.equal((await ctl(app, 'DELETE', '/agencies/3001')).statusCode, 404)
  t.equal((await ctl(app, 'PATCH', '/agencies/9999', { connected: true })).statusCode, 404)
})

t.test('agency-side client changes move modified and show in changed clients', async (t) => {
  const clock = new Clock()
  const app = await build(t, { clock })
  clock.set(Date.parse('2026-11-22T10:00:00Z'), true)
  const since = '2026-11-22T09:59:59Z'
  const c = live(AGENCY.main, 5)

  let res = await ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/${c.clientNumber}`, { details: { status: 'DeadFile' } })
  t.equal(res.statusCode, 200, res.body)
  t.match(res.json().details, { status: 'DeadFile', modified: '2026-11-22T10:00:00.000Z', id: c.details.id })
  t.same((await v4(app, `${AGENCY.main}/clients?asOf=${since}`)).json(), [c.clientNumber])

  const fresh = { details: { ...c.details, modified: undefined, officeId: 2 }, people: c.people, policies: [{ id: randomUUID(), modified: '2026-11-22T10:00:00Z', policyNumber: 'PUT-POL-1' }] }
  res = await ctl(app, 'PUT', `/agencies/${AGENCY.main}/clients/9000`, fresh)
  t.equal(res.statusCode, 201, res.body)
  t.equal(res.json().details.modified, '2026-11-22T10:00:00.000Z')
  t.same((await v4(app, `${AGENCY.main}/clients/search?policyNumber=PUT-POL-1`)).json().map((x: { clientNumber: number }) => x.clientNumber), [9000])
  res = await ctl(app, 'PUT', `/agencies/${AGENCY.main}/clients/9000`, { ...fresh, policies: [] })
  t.equal(res.statusCode, 200, 'replaced')
  t.same((await v4(app, `${AGENCY.main}/clients/search?policyNumber=PUT-POL-1`)).json(), [], 'policy index follows the replacement')

  const listed = (await v4(app, `${AGENCY.main}/clients`)).json()
  t.ok(listed.includes(9000), 'the full listing shows the new client')
  res = await ctl(app, 'DELETE', `/agencies/${AGENCY.main}/clients/9000`)
  t.equal(res.statusCode, 200)
  t.notOk((await v4(app, `${AGENCY.main}/clients`)).json().includes(9000), 'the cached full listing follows the deletion')
  t.ok((await v4(app, `${AGENCY.main}/clients?deleted=true`)).json().includes(9000))
  t.equal((await v4(app, `${AGENCY.main}/client/9000`)).statusCode, 404)
  t.ok((await v4(app, `${AGENCY.main}/clients?deleted=true&asOf=${since}`)).json().includes(9000))

  res = await ctl(app, 'PUT', `/agencies/${AGENCY.main}/clients/9001`, { details: { id: 'nope', officeId: 1 } })
  t.equal(res.statusCode, 400)
  t.ok(res.json().errors.length >= 2, 'every error with its path')
  t.ok(res.json().errors.some((e: { field: string }) => e.field.startsWith('details.')))
  t.equal((await ctl(app, 'PUT', `/agencies/${AGENCY.main}/clients/9001`, { clientNumber: 1, details: {} })).statusCode, 400)
  t.equal((await ctl(app, 'PUT', `/agencies/${AGENCY.main}/clients/9001`, { ...fresh, details: { ...fresh.details, officeId: 99 } })).statusCode, 400)
  t.equal((await ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/123456`, { deleted: true })).statusCode, 404)
  t.equal((await ctl(app, 'GET', '/agencies/4242/clients/1')).statusCode, 404)
  const found = (await ctl(app, 'GET', `/agencies/${AGENCY.main}/clients?q=${encodeURIComponent(c.policies![0].policyNumber)}`)).json()
  t.same(found.map((x: { clientNumber: number }) => x.clientNumber), [c.clientNumber])
})

t.test('clock: get, set, freeze, advance; writes are stamped with it', async (t) => {
  const app = await build(t)
  let res = await ctl(app, 'PUT', '/clock', { now: '2027-01-01T00:00:00Z', frozen: true })
  t.same(res.json(), { now: '2027-01-01T00:00:00.000Z', frozen: true })
  res = await ctl(app, 'POST', '/clock/advance', { seconds: 90 })
  t.same(res.json(), { now: '2027-01-01T00:01:30.000Z', frozen: true })
  const c = live(AGENCY.main)
  await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/log?version=4.0`, headers: auth, payload: logNote() })
  t.equal((await v4(app, `${AGENCY.main}/client/${c.clientNumber}?include=Details`)).json().details.modified, '2027-01-01T00:01:30.000Z')
  t.same((await v4(app, `${AGENCY.main}/clients?asOf=2027-01-01T00:01:29Z`)).json(), [c.clientNumber])
  res = await ctl(app, 'PUT', '/clock', { now: '2027-01-01T00:01:30Z' })
  t.same(res.json(), { now: '2027-01-01T00:01:30.000Z', frozen: true }, 'still frozen where it was')
  t.equal((await ctl(app, 'PUT', '/clock', { now: 'soon' })).statusCode, 400)
  t.equal((await ctl(app, 'POST', '/clock/advance', { seconds: -5 })).statusCode, 400)
  res = await ctl(app, 'PUT', '/clock', { frozen: false })
  t.equal(res.json().frozen, false)
  t.ok(Date.parse(res.json().now) >= Date.parse('2027-01-01T00:01:30Z'))
  t.equal((await ctl(app, 'GET', '/clock')).json().frozen, false)
})

t.test('request journal: fields, bodies, no credentials, filters, bounds, clear', async (t) => {
  const app = await build(t, { config: { journalSize: 5 } })
  const c = live(AGENCY.main)
  await v4(app, `${AGENCY.main}/client/${c.clientNumber}`)
  await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/log?version=4.0`, headers: auth, payload: { ...logNote(), mood: 'happy' } })
  const file = attachment(Buffer.from('%PDF-'))
  await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/attachment?version=4.0`, headers: { ...auth, ...file.headers }, payload: file.payload })
  await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: 'Basic ' + Buffer.from('abc:wrong').toString('base64') } })
  let entries = (await ctl(app, 'GET', '/requests')).json()
  t.equal(entries.length, 4)
  t.match(entries[0], { method: 'GET', path: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}`, version: '4.0', query: { version: '4.0' }, integration: 'abc', agencyId: AGENCY.main, status: 200 })
  t.type(entries[0].durationMs, 'number')
  t.notOk('body' in entries[0], 'reads carry no body')
  t.match(entries[1], { method: 'POST', status: 200, warnings: ['ignored unknown key mood'], body: { mood: 'happy' } })
  t.match(entries[2].body, { binary: true, gzip: true, bytes: file.payload.length, headers: { refid: file.headers.RefId } })
  t.match(entries[3], { status: 401, integration: null })
  const text = JSON.stringify(entries)
  t.notOk(text.includes(DEMO.slice(6)) || /authorization/i.test(text), 'no credentials journaled')

  t.equal((await ctl(app, 'GET', '/requests?method=post')).json().length, 2)
  t.equal((await ctl(app, 'GET', '/requests?status=401')).json().length, 1)
  t.equal((await ctl(app, 'GET', '/requests?path=/vendor/agency/*/client/*/attachment')).json().length, 1)
  t.equal((await ctl(app, 'GET', `/requests?since=${entries[2].id}`)).json().length, 1)
  t.equal((await ctl(app, 'GET', '/requests?limit=1')).json()[0].id, entries[3].id)
  const previous = entries
  for (let i = 0; i < 10; i++) await app.inject({ url: '/vendor/agencies?version=4.0', headers: auth })
  entries = (await ctl(app, 'GET', '/requests')).json()
  t.equal(entries.length, 5, 'bounded: oldest dropped')
  t.same(entries.map((e: { path: string }) => e.path), Array(5).fill('/vendor/agencies'), 'the newest kept')
  t.ok(entries[0].id > previous.at(-1).id, 'ids keep rising')
  t.equal((await ctl(app, 'DELETE', '/requests')).statusCode, 204)
  t.same((await ctl(app, 'GET', '/requests')).json(), [])
  t.equal((await ctl(app, 'GET', '/requests?limit=0')).statusCode, 400)
})

t.test('faults: status for the next N, every Nth with a delay, seeded probability, hit counts', async (t) => {
  const app = await build(t)
  let res = await ctl(app, 'POST', '/faults', { match: { method: 'POST', path: '/vendor/agency/*/client', version: '4.0' }, effect: { status: 429, headers: { 'retry-after': '1' } }, times: 2 })
  t.equal(res.statusCode, 201)
  const first = res.json()
  const codes = []
  for (let i = 0; i < 3; i++) codes.push((await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client?version=4.0`, headers: auth, payload: createClientBody() })).statusCode)
  t.same(codes, [429, 429, 200])

  res = await ctl(app, 'POST', '/faults', { match: { method: 'GET', path: '/vendor/agency/*/client/*' }, effect: { status: 503, delayMs: 120, body: 'try later' }, every: 3 })
  const second = res.json()
  const timings: [number, number][] = []
  for (let i = 0; i < 6; i++) {
    const started = Date.now()
    const r = await v4(app, `${AGENCY.main}/client/${live(AGENCY.main).clientNumber}`)
    timings.push([r.statusCode, Date.now() - started])
  }
  t.same(timings.map(([s]) => s), [200, 200, 503, 200, 200, 503])
  t.ok(timings[2][1] >= 110 && timings[5][1] >= 110, 'answered after the delay')
  const listed = (await ctl(app, 'GET', '/faults')).json()
  t.match(listed, [{ id: first.id, hits: 2, exhausted: true }, { id: second.id, hits: 2, matched: 6 }])
  const journal = (await ctl(app, 'GET', '/requests?status=503')).json()
  t.equal(journal[0].fault, second.id)

  t.equal((await ctl(app, 'DELETE', '/faults')).statusCode, 204)
  const draw = async (seed: number) => {
    await ctl(app, 'DELETE', '/faults')
    await ctl(app, 'POST', '/faults', { match: { clientId: 'abc' }, effect: { status: 500 }, probability: 0.5, seed })
    const out = []
    for (let i = 0; i < 20; i++) out.push((await app.inject({ url: '/vendor/agencies?version=4.0', headers: auth })).statusCode)
    return out
  }
  const a = await draw(42)
  t.same(await draw(42), a, 'the same seed draws the same faults')
  t.ok(a.includes(500) && a.includes(200))
  t.notSame(await draw(7), a)
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: NORTHWIND } })).statusCode, 200, 'other integrations unaffected')

  t.equal((await ctl(app, 'POST', '/faults', { effect: {} })).statusCode, 400)
  t.equal((await ctl(app, 'POST', '/faults', { effect: { status: 42 } })).statusCode, 400)
  t.equal((await ctl(app, 'POST', '/faults', { effect: { status: 500, drop: true } })).statusCode, 400)
  t.equal((await ctl(app, 'POST', '/faults', { match: { version: '2.0' }, effect: { status: 500 } })).statusCode, 400)
  t.equal((await ctl(app, 'DELETE', '/faults/fault-999')).statusCode, 404)
})

t.test('control token: every control call but health needs the bearer token', async (t) => {
  const app = await build(t, { config: { controlToken: 'let-me-in' } })
  t.equal((await ctl(app, 'GET', '/health')).statusCode, 200)
  const res = await ctl(app, 'GET', '/info')
  t.equal(res.statusCode, 401)
  t.match(res.json().detail, /Bearer/)
  t.equal((await app.inject({ url: '/_sandbox/info', headers: { authorization: 'Bearer nope' } })).statusCode, 401)
  t.equal((await app.inject({ url: '/_sandbox/info', headers: { authorization: 'Bearer let-me-in' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { authorization: DEMO } })).statusCode, 401)
  t.equal((await v4(app, `${AGENCY.main}/offices`)).statusCode, 200, 'the vendor API is unaffected')
})

t.test('simulator: clock-time changes, deterministic from the seed, found by changed clients', async (t) => {
  const run = async (seed: number) => {
    const clock = new Clock()
    clock.set(Date.parse('2026-12-01T00:00:00Z'), true)
    const app = await build(t, { clock })
    const res = await ctl(app, 'POST', '/simulator', { ratePerMinute: 30, seed, agencies: [AGENCY.main], clockTime: true })
    t.equal(res.statusCode, 200, res.body)
    await ctl(app, 'POST', '/clock/advance', { seconds: 120 })
    const changed = (await v4(app, `${AGENCY.main}/clients?asOf=2026-11-30T23:59:59Z`)).json()
    const deletedIds = (await v4(app, `${AGENCY.main}/clients?deleted=true&asOf=2026-11-30T23:59:59Z`)).json()
    const status = (await ctl(app, 'GET', '/simulator')).json()
    const batch = (await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: auth, payload: { clientNumbers: changed.slice(0, 200) } })).json()
    await ctl(app, 'DELETE', '/simulator')
    return { changed, deletedIds, status, batch }
  }
  const a = await run(11)
  t.equal(a.status.changes, 60, '30 a minute for two minutes')
  t.ok(a.changed.length + a.deletedIds.length > 0)
  t.same(await run(11), a, 'same seed, same changes')
  t.notSame((await run(12)).batch, a.batch, 'another seed, other changes')
  for (const c of a.batch) t.ok(Date.parse(c.details.modified) > Date.parse('2026-11-30T23:59:59Z'))
})

t.test('answers the sandbox keeps in memory follow every change made through the control plane', async (t) => {
  const app = await build(t)
  const client = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients.find((c) => !c.deleted && (c.policies ?? []).length > 0)!
  const policyNumber = client.policies![0].policyNumber
  const n = client.clientNumber
  const search = () => v4(app, `${AGENCY.main}/clients/search?policyNumber=${encodeURIComponent(policyNumber)}`)
  const batch = async () => {
    const res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: auth, payload: { clientNumbers: [n, 999_999] } })
    t.equal(res.statusCode, 200)
    return res.json() as { clientNumber: number; details: { status: string } }[]
  }

  // read each twice, so the second answer comes from memory
  for (let i = 0; i < 2; i++) {
    t.equal((await v4(app, `${AGENCY.main}/client/${n}`)).statusCode, 200)
    t.ok((await search()).json().some((c: { clientNumber: number }) => c.clientNumber === n))
    t.ok((await v4(app, `${AGENCY.main}/clients`)).json().includes(n))
    t.same((await batch()).map((c) => c.clientNumber), [n])
  }
  t.equal((await ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/${n}`, { details: { status: 'DeadFile' } })).statusCode, 200)
  t.equal((await batch())[0].details.status, 'DeadFile', 'a batch read shows the changed details')
  t.equal((await ctl(app, 'PUT', `/agencies/${AGENCY.main}/clients/999999`, { details: { ...client.details, modified: undefined } })).statusCode, 201)
  t.same((await batch()).map((c) => c.clientNumber), [n, 999_999], 'a batch read shows a client it had found absent, once created')
  t.equal((await ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/${n}`, { deleted: true })).statusCode, 200)
  t.same((await batch()).map((c) => c.clientNumber), [999_999], 'a deleted client is gone from batch reads')
  t.equal((await v4(app, `${AGENCY.main}/client/${n}`)).statusCode, 404, 'a deleted client is gone from single reads')
  t.notOk((await search()).json().some((c: { clientNumber: number }) => c.clientNumber === n), '... from search')
  t.notOk((await v4(app, `${AGENCY.main}/clients`)).json().includes(n), '... and from the full listing')
  t.ok((await v4(app, `${AGENCY.main}/clients?deleted=true`)).json().includes(n))

  // grants: opted out, then back in; a scope taken away
  t.equal((await v4(app, `${AGENCY.main}/offices`)).statusCode, 200)
  t.equal((await ctl(app, 'PATCH', `/integrations/abc/agencies/${AGENCY.main}`, { optedOut: true })).statusCode, 200)
  t.equal((await v4(app, `${AGENCY.main}/offices`)).statusCode, 403, 'opting out takes effect at once')
  t.equal((await ctl(app, 'PATCH', `/integrations/abc/agencies/${AGENCY.main}`, { optedOut: false, scopes: ['client-read'] })).statusCode, 200)
  t.equal((await v4(app, `${AGENCY.main}/clients`)).statusCode, 200)
  t.equal((await v4(app, `${AGENCY.main}/users`)).statusCode, 403, 'a scope taken away is refused at once')

  // credentials: accepted, then the integration is removed
  const who = { authorization: 'Basic ' + Buffer.from('cache-check:s3cret').toString('base64') }
  t.equal((await ctl(app, 'POST', '/integrations', { clientId: 'cache-check', clientSecret: 's3cret', name: 'Cache check', agencies: [] })).statusCode, 201)
  for (let i = 0; i < 2; i++) t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: who })).statusCode, 200)
  t.equal((await ctl(app, 'DELETE', '/integrations/cache-check')).statusCode, 204)
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: who })).statusCode, 401, 'removed credentials are refused at once')
})
