import t from 'tap'
import { AGENCY, build } from '../helpers/app.js'
import { auth, fieldsOf, journaled, liveClient, vendor, writesOf } from '../helpers/fidelity.js'
import { createClientBody, logNote } from '../helpers/writes.js'

/**
 * Behaviour nothing on the record decides: the sandbox's choices (docs/contract.md, "Behaviour where the
 * spec is silent", Evidence "our choice"). Where the .NET binder would be laxer, the sandbox is strict
 * and says so, so that code passing here does not lean on a leniency nobody observed.
 */

const main = AGENCY.main
const ROW = '[B: Binding habits of the live (.NET) service]'

t.test(`${ROW} a number that is no member of the enum is refused (.NET would bind it as an undefined value)`, async (t) => {
  const app = await build(t)
  for (const Status of [4, -1, 1.5, '4', '02x']) {
    const res = await vendor(app, 'POST', `${main}/client`, 'version=4.0', createClientBody({ Status }))
    t.equal(res.statusCode, 400, `Status ${JSON.stringify(Status)}`)
    t.same(fieldsOf(res.json()), ['Status'])
  }
})

t.test(`${ROW} numbers as text are plain digits: no spaces or signs (int.Parse would take them)`, async (t) => {
  const app = await build(t)
  const c = liveClient()
  for (const channel of [' 29', '29 ', '+29']) {
    const res = await vendor(app, 'POST', `${main}/client/${c.clientNumber}/log`, 'version=4.0', logNote({ channel }))
    t.equal(res.statusCode, 400, `channel ${JSON.stringify(channel)}`)
    t.same(fieldsOf(res.json()), ['Channel'])
  }
  for (const officeId of [' 2', '+2', '2 ']) {
    const res = await vendor(app, 'GET', `${main}/clients`, `version=4.0&officeId=${encodeURIComponent(officeId)}`)
    t.equal(res.statusCode, 400, `officeId=${JSON.stringify(officeId)}`)
    t.same(fieldsOf(res.json()), ['officeId'])
  }
})

t.test(`${ROW} one body key given twice in different casings: the same value binds once, different values are refused (key order decides nothing)`, async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${main}/client/${c.clientNumber}/log`
  const note = JSON.stringify(logNote({ channel: 29 }))
  const journalPath = `/vendor/agency/${path}`
  let res = await vendor(app, 'POST', path, 'version=4.0', note.replace('"channel":29', '"channel":29,"Channel":29'))
  t.equal(res.statusCode, 200, 'the same value')
  t.same((await journaled(app, journalPath)).warnings, ['ignored duplicate key Channel (same value as channel)'])
  for (const [first, second] of [[29, 30], [30, 29]]) {
    res = await vendor(app, 'POST', path, 'version=4.0', note.replace('"channel":29', `"channel":${first},"CHANNEL":${second}`))
    t.equal(res.statusCode, 400, `${first} then ${second}`)
    t.same(res.json().errors, [{ field: 'Channel', message: 'is given twice with different values (as channel and CHANNEL); send it once' }])
  }
  t.equal((await writesOf(app, main)).length, 1)
  // a query parameter given twice binds its first value instead ([B: A query parameter given twice], dotnet-binding.test.ts)
})

t.test(`${ROW} version given twice with different values is refused; the same version twice is that version`, async (t) => {
  const app = await build(t)
  let res = await app.inject({ url: '/vendor/agencies?version=4.0&Version=3.0', headers: auth })
  t.equal(res.statusCode, 400)
  t.match(res.json().detail, /ambiguous version: the request gives version '4\.0' and '3\.0'; give it once/)
  t.same(fieldsOf(res.json()), ['version'])
  res = await app.inject({ url: '/vendor/agencies?version=4.0&VERSION=4.0', headers: auth })
  t.equal(res.statusCode, 200)
  t.type(res.json()[0], 'object')
  res = await app.inject({ url: '/vendor/agencies?version=4.0&VERSION=4', headers: auth })
  t.equal(res.statusCode, 400, 'the same version in two spellings is two values all the same')
  t.same(fieldsOf(res.json()), ['version'])
})

t.test('[B: Unsupported `version`] `4` and `3` are read as 4.0 and 3.0, in any parameter casing', async (t) => {
  const app = await build(t)
  t.type((await app.inject({ url: '/vendor/agencies?Version=4', headers: auth })).json()[0], 'object')
  t.type((await app.inject({ url: '/vendor/agencies?VERSION=3', headers: auth })).json()[0], 'number')
  const res = await app.inject({ url: '/vendor/agencies?Version=5.0', headers: auth })
  t.equal(res.statusCode, 400)
  t.match(res.json().detail, /unsupported version '5\.0'; use 4\.0 or 3\.0, or omit it for version 1/)
})

t.test('[B: Request casing] unknown body keys are ignored and journaled as warnings, with their path', async (t) => {
  const app = await build(t)
  const res = await vendor(app, 'POST', `${main}/client`, 'version=4.0', createClientBody({
    Nickname: 'x', People: [{ FirstName: 'A', MainContactType: 'First', Hobby: 'chess' }]
  }))
  t.equal(res.statusCode, 200)
  t.same((await journaled(app, `/vendor/agency/${main}/client`)).warnings, ['ignored unknown key people[0].Hobby', 'ignored unknown key Nickname'])
})

t.test('[B: Clock] any time can be set, even back from a frozen future (the answer says it moved back); DELETE returns to real time, running', async (t) => {
  const app = await build(t)
  const clock = (method: 'PUT' | 'DELETE' | 'GET', payload?: object) => app.inject({ method, url: '/_sandbox/clock', ...(payload === undefined ? {} : { payload }) })
  let res = await clock('PUT', { now: '2030-01-01T00:00:00Z', frozen: true })
  t.same(res.json(), { now: '2030-01-01T00:00:00.000Z', frozen: true })
  const real = Date.now()
  res = await clock('PUT', { now: new Date(real).toISOString(), frozen: false })
  t.equal(res.statusCode, 200, 'back from a frozen future in one call')
  t.equal(res.json().movedBackwards, true, 'the answer says it moved backwards')
  t.equal(res.json().frozen, false)
  res = await clock('PUT', { now: '2031-01-01T00:00:00Z', frozen: true })
  t.equal(res.json().movedBackwards, undefined, 'forwards: no flag')
  res = await clock('DELETE')
  t.equal(res.statusCode, 200)
  t.equal(res.json().frozen, false, 'running')
  t.ok(Math.abs(Date.parse(res.json().now) - Date.now()) < 5000, 'real time')
  t.equal((await clock('GET')).json().frozen, false)
})

t.test('[B: `Denied` header] a 3.0 read on an agency without include support names only groups the request asked for', async (t) => {
  const app = await build(t)
  const c = liveClient(AGENCY.limited)
  const read = (query: string) => vendor(app, 'GET', `${AGENCY.limited}/client/${c.clientNumber}`, `version=3.0${query}`)
  for (const query of ['', '&include=Details', '&include=Policies,nonsense']) {
    const res = await read(query)
    t.equal(res.statusCode, 200, query)
    t.equal(res.headers.denied, undefined, `nobody asked for invoices (${query || 'default list'})`)
    t.notOk('invoices' in res.json(), 'and none are served')
  }
  const res = await read('&include=details,INVOICES')
  t.equal(res.headers.denied, 'Invoices', 'asked for explicitly: withheld and named')
})

t.test('[B: Offices] 3.0 and 1 list the same offices as 4.0 (office 0 and archived ones included), in their shape without `archived`', async (t) => {
  const app = await build(t)
  const v4 = (await vendor(app, 'GET', `${main}/offices`, 'version=4.0')).json() as { archived: boolean }[]
  for (const query of ['version=3.0', '']) {
    const res = await vendor(app, 'GET', `${main}/offices`, query)
    t.equal(res.statusCode, 200, query || 'version 1')
    t.same(res.json(), v4.map(({ archived: _archived, ...office }) => office), `${query || 'version 1'}: same offices, no archived`)
  }
  const res = await vendor(app, 'GET', `${main}/clients`, 'version=4.0&officeId=0')
  t.equal(res.statusCode, 200, 'office 0 is listed, so the changed-clients listing can be filtered by it')
})

t.test('[B: Offices] an archived office cannot be the office of a new client: 400 naming OfficeId with the fix; nothing is created', async (t) => {
  const app = await build(t)
  const before = (await vendor(app, 'GET', `${main}/clients`, 'version=4.0')).json() as number[]
  const res = await vendor(app, 'POST', `${main}/client`, 'version=4.0', createClientBody({ OfficeId: 4 }))
  t.equal(res.statusCode, 400)
  t.match(res.headers['content-type'], /application\/problem\+json/)
  t.same(fieldsOf(res.json()), ['OfficeId'])
  t.match(res.json().errors[0].message, /office 4 is archived.*archived: false.*leave OfficeId out/)
  t.same((await vendor(app, 'GET', `${main}/clients`, 'version=4.0')).json(), before, 'no client was created')
  const open = await vendor(app, 'POST', `${main}/client`, 'version=4.0', createClientBody({ OfficeId: 2 }))
  t.equal(open.statusCode, 200, `an open office: ${open.body.slice(0, 120)}`)
  // the default office receives clients sent without OfficeId, so it cannot be archived either
  const patch = await app.inject({ method: 'PATCH', url: `/_sandbox/agencies/${main}`, payload: { defaultOfficeId: 4 } })
  t.equal(patch.statusCode, 400)
  t.same(fieldsOf(patch.json()), ['defaultOfficeId'])
  t.match(patch.json().errors[0].message, /archived/)
})
