import t from 'tap'
import { gzipSync } from 'node:zlib'
import { AGENCY, build, demoFixture } from '../helpers/app.js'
import { auth, fieldsOf, journaled, liveClient, vendor, writesOf } from '../helpers/fidelity.js'
import { attachment, b64, createClientBody, logNote, receipt } from '../helpers/writes.js'
import type { FastifyInstance } from 'fastify'

/**
 * The live service is an ASP.NET application (sandbox contract, section A), so its model
 * binder's habits apply to requests ([B: Binding habits of the live (.NET) service]): query
 * names and booleans in any case, enum names in any case or by number, numbers as digit strings
 * and nothing laxer, real calendar dates, unknown query parameters ignored.
 */

const ROW = '[B: Binding habits of the live (.NET) service]'
const main = AGENCY.main
const create = (app: FastifyInstance, body: object) => vendor(app, 'POST', `${main}/client`, 'version=4.0', body)
const readBack = async (app: FastifyInstance, clientNumber: number) =>
  (await vendor(app, 'GET', `${main}/client/${clientNumber}`, 'version=4.0')).json()

t.test(`${ROW} query parameter names bind in any case`, async (t) => {
  const app = await build(t)
  // Version selects the version: 4.0 lists agencies with scopes, version 1 bare ids
  for (const query of ['Version=4.0', 'VERSION=4.0', 'version=4.0', 'vErSiOn=4']) {
    const agencies = await app.inject({ url: `/vendor/agencies?${query}`, headers: auth })
    t.equal(agencies.statusCode, 200, query)
    t.type(agencies.json()[0], 'object', `${query} is version 4.0 (objects with scopes)`)
  }
  const v3 = (await vendor(app, 'GET', `${main}/client/${liveClient().clientNumber}`, 'Version=3.0&Include=Details')).json()
  t.same(Object.keys(v3), ['clientNumber', 'details'], 'Version=3.0 and Include= bind')
  t.equal((await journaled(app, `/vendor/agency/${main}/client/`)).version, '3.0', 'the journal reads the version the same way')

  const fixture = demoFixture().agencies.find((a) => a.agencyId === main)!.clients
  const live = fixture.filter((c) => !c.deleted)
  const newest = live.map((c) => c.details.modified).sort().at(-2)!
  const asOf = (await vendor(app, 'GET', `${main}/clients`, `Version=4.0&AsOf=${encodeURIComponent(newest)}`)).json()
  t.ok(asOf.length >= 1 && asOf.length < live.length, `AsOf= filters (${asOf.length} of ${live.length})`)
  const deleted = (await vendor(app, 'GET', `${main}/clients`, 'version=4.0&Deleted=true')).json()
  t.same(deleted, fixture.filter((c) => c.deleted).map((c) => c.clientNumber).sort((a, b) => a - b), 'Deleted= binds')
  const office = (await vendor(app, 'GET', `${main}/clients`, 'version=4.0&OfficeId=2')).json()
  t.same(office, live.filter((c) => c.details.officeId === 2).map((c) => c.clientNumber).sort((a, b) => a - b), 'OfficeId= binds')

  const policyNumber = live.find((c) => (c.policies ?? []).some((p) => p.policyNumber))!.policies!.find((p) => p.policyNumber)!.policyNumber!
  const found = await vendor(app, 'GET', `${main}/clients/search`, `Version=4.0&PolicyNumber=${encodeURIComponent(policyNumber)}`)
  t.equal(found.statusCode, 200, 'PolicyNumber= binds (it is required)')
  t.ok(found.json().length >= 1)
})

t.test(`${ROW} booleans bind in any case`, async (t) => {
  const app = await build(t)
  const expected = (await vendor(app, 'GET', `${main}/clients`, 'version=4.0&deleted=true')).json()
  const all = (await vendor(app, 'GET', `${main}/clients`, 'version=4.0')).json()
  for (const value of ['True', 'TRUE', 'tRuE']) {
    const res = await vendor(app, 'GET', `${main}/clients`, `version=4.0&deleted=${value}`)
    t.equal(res.statusCode, 200, value)
    t.same(res.json(), expected, `deleted=${value}`)
  }
  for (const value of ['False', 'FALSE']) t.same((await vendor(app, 'GET', `${main}/clients`, `version=4.0&deleted=${value}`)).json(), all, value)
  for (const value of ['yes', '1', 'truthy', '']) {
    const res = await vendor(app, 'GET', `${main}/clients`, `version=4.0&deleted=${value}`)
    t.equal(res.statusCode, 400, `deleted=${value}: bool.Parse refuses it`)
    t.same(fieldsOf(res.json()), ['deleted'])
  }
})

t.test(`${ROW} enum names bind in any case; read-back stays canonical`, async (t) => {
  const app = await build(t)
  const res = await create(app, createClientBody({
    Status: 'prospect',
    People: [{ FirstName: 'Ada', MainContactType: 'first', Contacts: [{ Type: 'homeemail', Value: 'ada@example.com' }] }],
    Contacts: [{ type: 'WORKPHONE', value: '207-555-0100' }],
    Policy: { PolicyNumber: 'CASE-1', LOBs: ['autop', 'Home'], ApplicationType: 'personal' },
    Task: { AssignedToRole: 'csr', Description: 'Welcome call', DueDate: '2026-11-27T15:00:00Z', Title: 'Welcome' }
  }))
  t.equal(res.statusCode, 200, JSON.stringify(res.json()))
  const client = await readBack(app, res.json().clientNumber)
  t.equal(client.details.status, 'Prospect')
  t.equal(client.people[0].mainContactType, 'First')
  t.same(client.contacts.map((c: { type: string }) => c.type).sort(), ['HomeEmail', 'WorkPhone'])
  t.same(client.policies[0].loBs.map((l: { code: string }) => l.code), ['AUTOP', 'HOME'])
  t.equal(client.policies[0].applicationType, 'Personal')
  const task = (await writesOf(app, main, '?kind=client'))[0].data.task as { assignedToRole: string }
  t.equal(task.assignedToRole, 'Csr', 'the create-client spelling of the role')

  const c = liveClient()
  const note = await vendor(app, 'POST', `${main}/client/${c.clientNumber}/log`, 'version=4.0', logNote({
    task: { assignedToRole: 'csr', description: 'Call back', dueDate: '2026-11-25T09:00:00Z', title: 'Call back' }
  }))
  t.equal(note.statusCode, 200)
  t.equal(((await writesOf(app, main, '?kind=log'))[0].data.task as { assignedToRole: string }).assignedToRole, 'CSR')

  const bad = await create(app, createClientBody({ Status: 'customer' }))
  t.equal(bad.statusCode, 400, 'an unknown name is still refused')
  t.same(fieldsOf(bad.json()), ['Status'])
})

t.test(`${ROW} a numbered enum binds by its number (declaration order from 0, as the spec lists the members)`, async (t) => {
  const app = await build(t)
  const res = await create(app, createClientBody({
    Status: 0, // ClientStatus: Active 0, DeadFile 1, Prospect 2, Lead 3
    People: [{ FirstName: 'Ada', MainContactType: 1, Contacts: [{ Type: 5, Value: 'ada@example.com' }] }, { FirstName: 'Bo', MainContactType: '2' }],
    Contacts: [],
    Policy: { ApplicationType: 7 }, // Personal
    BusinessDetail: { BusinessType: 4, CompanyName: 'Harbor Bakery LLC' }, // LLC
    Task: { AssignedToRole: 2, Description: 'Welcome call', DueDate: '2026-11-27T15:00:00Z', Title: 'Welcome' } // Csr
  }))
  t.equal(res.statusCode, 200, JSON.stringify(res.json()))
  const client = await readBack(app, res.json().clientNumber)
  t.equal(client.details.status, 'Active')
  t.equal(client.details.businessType, 'LLC')
  t.same(client.people.map((p: { mainContactType: string }) => p.mainContactType), ['First', 'Second'])
  t.same(client.contacts.map((c: { type: string }) => c.type), ['HomeEmail'])
  t.equal(client.policies[0].applicationType, 'Personal')
  t.equal(((await writesOf(app, main, '?kind=client'))[0].data.task as { assignedToRole: string }).assignedToRole, 'Csr')

  const lob = await create(app, createClientBody({ Policy: { LOBs: [9] } }))
  t.equal(lob.statusCode, 400, 'line-of-business codes are strings, not a .NET enum: no numbers')
  t.same(fieldsOf(lob.json()), ['Policy.LOBs[0]'])
})

t.test(`${ROW} integers: JSON numbers or strings of plain digits, nothing laxer`, async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${main}/client/${c.clientNumber}/log`
  const ok = await vendor(app, 'POST', path, 'version=4.0', logNote({ channel: '29' }))
  t.equal(ok.statusCode, 200, '"29" binds')
  t.equal((await writesOf(app, main))[0].data.channel, 29)
  for (const channel of [true, false, [29], '0x1d', '1e1', '29.0', 29.5, {}, 'Infinity', '99999999999999999999', null]) {
    const res = await vendor(app, 'POST', path, 'version=4.0', logNote({ channel }))
    t.equal(res.statusCode, 400, `channel ${JSON.stringify(channel)}`)
    t.same(fieldsOf(res.json()), ['Channel'], `channel ${JSON.stringify(channel)} names Channel`)
  }
  for (const raw of ['1e999', '-1e999', '2.9e1', '1E400']) {
    const payload = JSON.stringify(logNote({ channel: 0 })).replace('"channel":0', `"channel":${raw}`)
    const res = await vendor(app, 'POST', path, 'version=4.0', payload)
    t.equal(res.statusCode, raw === '2.9e1' ? 200 : 400, `channel ${raw} (JSON reads 2.9e1 as 29)`)
  }
  t.equal((await writesOf(app, main)).length, 2, 'only "29" and 2.9e1 were written')

  const office = await create(app, createClientBody({ OfficeId: '2' }))
  t.equal(office.statusCode, 200, 'OfficeId "2" binds')
  for (const OfficeId of [true, [2], '0x2', '2.0']) {
    const res = await create(app, createClientBody({ OfficeId }))
    t.equal(res.statusCode, 400, `OfficeId ${JSON.stringify(OfficeId)}`)
    t.ok(fieldsOf(res.json()).includes('OfficeId'))
  }
  for (const officeId of ['2.0', '0x2', '1e1', '99999999999', 'true']) {
    const res = await vendor(app, 'GET', `${main}/clients`, `version=4.0&officeId=${encodeURIComponent(officeId)}`)
    t.equal(res.statusCode, 400, `query officeId=${officeId}`)
    t.same(fieldsOf(res.json()), ['officeId'])
  }
  const batch = await vendor(app, 'POST', `${main}/clients`, 'version=4.0&include=Details', [String(c.clientNumber)])
  t.equal(batch.statusCode, 200, 'a bare array of numeric strings binds')
  t.equal(batch.json()[0].clientNumber, c.clientNumber)
  const lax = await vendor(app, 'POST', `${main}/clients`, 'version=4.0', { clientNumbers: [true] })
  t.equal(lax.statusCode, 400, 'a JSON true is no client number')
})

t.test(`${ROW} receipts: numbers as decimal strings bind; booleans and arrays do not`, async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${main}/client/${c.clientNumber}/receipts`
  const res = await vendor(app, 'POST', path, 'version=4.0', [
    receipt({ channel: '4', total: '0' }), receipt({ channel: true }), receipt({ total: [1] }), receipt({ officeId: '0x1' })
  ])
  t.equal(res.statusCode, 200)
  t.same(res.json().map((a: { code: number }) => a.code), [200, 400, 400, 400])
  t.match(res.json()[1].message, /Channel/)
  t.match(res.json()[2].message, /Total/)
  t.match(res.json()[3].message, /OfficeId/)
})

t.test(`${ROW} every DateOnly and DateTime must be a real calendar value`, async (t) => {
  const app = await build(t)
  const c = liveClient()
  const bodyCases: [string, object, string][] = [
    ['DateOfBirth', createClientBody({ People: [{ FirstName: 'A', MainContactType: 'First', DateOfBirth: '1990-02-30' }] }), 'People[0].DateOfBirth'],
    ['DateOfBirth with a time', createClientBody({ People: [{ FirstName: 'A', MainContactType: 'First', DateOfBirth: '1990-04-31T00:00:00' }] }), 'People[0].DateOfBirth'],
    ['EffectiveDate', createClientBody({ Policy: { EffectiveDate: '2026-02-29' } }), 'Policy.EffectiveDate'],
    ['Log.TS', createClientBody({ Log: { Channel: 1, Note: 'n', TS: '2026-06-31T10:00:00Z' } }), 'Log.TS'],
    ['Task.DueDate', createClientBody({ Task: { AssignedToRole: 'SpecifiedUser', AssignedToEmail: 'x@example.com', Description: 'd', DueDate: '2026-11-31T09:00:00Z', Title: 't' } }), 'Task.DueDate']
  ]
  for (const [name, body, field] of bodyCases) {
    const res = await create(app, body)
    t.equal(res.statusCode, 400, name)
    t.same(fieldsOf(res.json()), [field], `${name} names ${field}`)
    t.match(res.json().errors[0].message, /^must be a real calendar date/)
  }
  const leap = await create(app, createClientBody({ People: [{ FirstName: 'A', MainContactType: 'First', DateOfBirth: '2000-02-29' }] }))
  t.equal(leap.statusCode, 200, 'a leap day is a real date')
  t.equal((await readBack(app, leap.json().clientNumber)).people[0].dateOfBirth, '2000-02-29T00:00:00')

  const log = `${main}/client/${c.clientNumber}/log`
  for (const [body, field] of [
    [logNote({ ts: '2026-02-29T10:00:00Z' }), 'TS'],
    [logNote({ task: { assignedToRole: 'CSR', description: 'd', dueDate: '2026-09-31T00:00:00', title: 't' } }), 'Task.DueDate']
  ] as const) {
    const res = await vendor(app, 'POST', log, 'version=4.0', body)
    t.equal(res.statusCode, 400, field)
    t.same(fieldsOf(res.json()), [field])
  }
  const v1 = await vendor(app, 'POST', `${main}/client/${c.clientNumber}`, '', {
    Action: 1, Body: 'b', Description: 'd', RefId: logNote().refId, TS: '2026-11-20T10:00:00Z', Suspense: { DueDate: '2026-02-30T00:00:00Z', SuspendedFor: 'CSR' }
  })
  t.equal(v1.statusCode, 400, 'version 1 Suspense.DueDate')
  t.same(fieldsOf(v1.json()), ['Suspense.DueDate'])

  const receipts = await vendor(app, 'POST', `${main}/client/${c.clientNumber}/receipts`, 'version=4.0', [receipt({ ts: '2025-02-29T00:00:00Z' }), receipt()])
  t.same(receipts.json().map((a: { code: number }) => a.code), [400, 200])
  t.match(receipts.json()[0].message, /TS/)

  const file = Buffer.from('%PDF-1.4 test')
  for (const [header, value] of [['TS', '2026-04-31T10:00:00Z'], ['TaskDueDate', '2026-02-30T00:00:00Z']] as const) {
    const task = header === 'TaskDueDate' ? { TaskAssignedTo: 'CSR', TaskDescription: b64('d'), TaskTitle: b64('t') } : {}
    const { headers, payload } = attachment(file, { ...task, [header]: value })
    const injected = await app.inject({ method: 'POST', url: `/vendor/agency/${main}/client/${c.clientNumber}/attachment?version=4.0`, headers: { ...auth, ...headers }, payload })
    t.equal(injected.statusCode, 400, `header ${header}`)
    t.same(fieldsOf(injected.json()), [header])
  }
  const v1Headers = {
    'content-type': 'application/octet-stream',
    Action: '1',
    Desc: b64('d'),
    FileExt: 'pdf',
    FileName: b64('f'),
    LogBody: b64('b'),
    LogDescription: b64('d'),
    RefId: logNote().refId,
    SuspendedFor: 'csr',
    SuspendedForInitials: 'ABC',
    SuspenseCategory: b64('c'),
    SuspenseDueDate: '2026-02-30T00:00:00Z',
    TS: '2026-11-20T10:00:00Z'
  }
  const v1File = await app.inject({ method: 'POST', url: `/vendor/agency/${main}/client/${c.clientNumber}/attachment`, headers: { ...auth, ...v1Headers }, payload: gzipSync(file) })
  t.equal(v1File.statusCode, 400, 'version 1 SuspenseDueDate header')
  t.same(fieldsOf(v1File.json()), ['SuspenseDueDate'])

  const asOf = await vendor(app, 'GET', `${main}/clients`, 'version=4.0&asOf=2024-02-30')
  t.equal(asOf.statusCode, 400, 'asOf')
  t.same(fieldsOf(asOf.json()), ['asOf'])
})

t.test(`${ROW} a JSON null is an absent value`, async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${main}/client/${c.clientNumber}/log`
  const res = await vendor(app, 'POST', path, 'version=4.0', logNote({ policyId: null, task: null }))
  t.equal(res.statusCode, 200, 'optional PolicyId and Task sent as null, as a C# client serialises unset properties')
  const missing = await vendor(app, 'POST', path, 'version=4.0', logNote({ note: null }))
  t.equal(missing.statusCode, 400)
  t.same(missing.json().errors, [{ field: 'Note', message: 'is required' }])
  const client = await create(app, createClientBody({ BusinessDetail: null, Policy: { PolicyNumber: null, LOBs: null } }))
  t.equal(client.statusCode, 200)
})

t.test(`${ROW} unknown query parameters are ignored and journaled as warnings`, async (t) => {
  const app = await build(t)
  const c = liveClient()
  const reads = [
    ['/vendor/agencies', 'version=4.0'],
    [`/vendor/agency/${main}/offices`, 'version=4.0'],
    [`/vendor/agency/${main}/clients`, 'version=4.0'],
    [`/vendor/agency/${main}/client/${c.clientNumber}`, 'version=4.0'],
    [`/vendor/agency/${main}/client/${c.clientNumber}`, 'version=3.0'],
    [`/vendor/agency/${main}/client/${c.clientNumber}`, ''],
    [`/vendor/agency/${main}/clients/search`, 'version=4.0&policyNumber=NONE']
  ]
  for (const [path, query] of reads) {
    const extra = 'expand=people&limit=10&offset=0'
    const res = await app.inject({ url: `${path}?${query === '' ? '' : `${query}&`}${extra}`, headers: auth })
    t.equal(res.statusCode, 200, `${path}?${query}`)
    const entry = await journaled(app, path)
    t.same(entry.warnings, ['ignored unknown query parameter expand', 'ignored unknown query parameter limit', 'ignored unknown query parameter offset'], `${path}?${query}`)
  }
  const note = await vendor(app, 'POST', `${main}/client/${c.clientNumber}/log`, 'version=4.0&source=crm', logNote())
  t.equal(note.statusCode, 200, 'writes too')
  t.same((await journaled(app, `/vendor/agency/${main}/client/${c.clientNumber}/log`)).warnings, ['ignored unknown query parameter source'])
})

t.test('[B: A query parameter given twice] a scalar binds its first value, as ASP.NET Core MVC binds it; only a repeated version with different values is 400', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const client = `${main}/client/${c.clientNumber}`
  // a third-party client's documented example
  let res = await vendor(app, 'GET', client, 'version=4.0&include=Details&include=Policies')
  t.equal(res.statusCode, 200, 'include=Details&include=Policies')
  t.same(Object.keys(res.json()), ['clientNumber', 'details'], 'include reads Details, the first value')
  t.same((await journaled(app, `/vendor/agency/${client}`)).warnings, ['query parameter include given 2 times: the first value binds, the others are ignored'])
  res = await vendor(app, 'GET', client, 'version=4.0&include=Policies&Include=Details')
  t.same(Object.keys(res.json()), ['clientNumber', 'policies'], 'in two casings too, whatever the second says')
  t.same((await journaled(app, `/vendor/agency/${client}`)).warnings, ['query parameter Include repeats include: the first value binds, the others are ignored'])
  res = await vendor(app, 'POST', `${main}/clients`, 'version=3.0&include=Details&include=Policies', { clientNumbers: [c.clientNumber] })
  t.same(Object.keys(res.json()[0]), ['clientNumber', 'details'], 'batch reads too')

  const numbers = demoFixture().agencies.find((a) => a.agencyId === main)!.clients.filter((x) => !x.deleted)
    .map((x) => ({ clientNumber: x.clientNumber, policyNumber: x.policies?.[0]?.policyNumber ?? '' }))
  const [one, two] = numbers.filter((x) => x.policyNumber !== '')
  for (const [a, b] of [[one, two], [two, one]]) {
    res = await vendor(app, 'GET', `${main}/clients/search`, `version=4.0&policyNumber=${a.policyNumber}&PolicyNumber=${b.policyNumber}`)
    t.equal(res.statusCode, 200)
    t.same(res.json().map((x: { clientNumber: number }) => x.clientNumber), [a.clientNumber], `policyNumber reads ${a.policyNumber}`)
  }

  const ids = async (query: string) => {
    const answer = await vendor(app, 'GET', `${main}/clients`, `version=4.0&${query}`)
    t.equal(answer.statusCode, 200, query)
    return answer.json() as number[]
  }
  t.same(await ids('asOf=2999-01-01T00:00:00Z&asOf=2000-01-01T00:00:00Z'), [], 'asOf reads the first (nothing changed after 2999)')
  t.same(await ids('asOf=2000-01-01T00:00:00Z&asOf=2999-01-01T00:00:00Z'), await ids(''), 'asOf reads the first (everything changed after 2000)')
  t.same(await ids('officeId=1&OfficeId=2'), await ids('officeId=1'), 'officeId reads 1')
  t.same(await ids('officeId=2&officeId=x'), await ids('officeId=2'), 'a second value that would not bind is not read at all')
  t.same(await ids('deleted=true&deleted=false'), await ids('deleted=true'), 'deleted reads true')
  t.same(await ids('deleted=false&Deleted=true'), await ids(''), 'deleted reads false')

  res = await vendor(app, 'GET', client, 'version=4.0&version=3.0')
  t.equal(res.statusCode, 400, 'a repeated version with different values is ambiguous')
  t.match(res.json().detail, /ambiguous version/)
  res = await vendor(app, 'GET', client, 'version=3.0&version=3.0&include=Details')
  t.equal(res.statusCode, 200, 'the same version twice is that version')
  t.same(Object.keys(res.json()), ['clientNumber', 'details'])
})

t.test(`${ROW} attachment header values: enumerations in any case`, async (t) => {
  const app = await build(t)
  const c = liveClient()
  const { headers, payload } = attachment(Buffer.from('%PDF-1.4 test'), {
    TaskAssignedTo: 'csr', TaskDescription: b64('Review'), TaskDueDate: '2026-11-27T15:00:00Z', TaskTitle: b64('Review')
  })
  const res = await app.inject({ method: 'POST', url: `/vendor/agency/${main}/client/${c.clientNumber}/attachment?Version=4.0`, headers: { ...auth, ...headers }, payload })
  t.equal(res.statusCode, 200, res.body)
  const written = (await writesOf(app, main, '?kind=attachment'))[0]
  t.equal((written.data.task as { assignedToRole: string }).assignedToRole, 'CSR')
})
