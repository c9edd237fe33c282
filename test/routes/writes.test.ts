import t from 'tap'
import { randomUUID } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { AGENCY, build, DEMO, demoFixture, NORTHWIND, overPostgres } from '../helpers/app.js'
import { attachment, b64, createClientBody, logNote, receipt } from '../helpers/writes.js'
import { tempDir } from '../helpers/temp-dir.js'
import { Clock } from '../../src/domain/clock.js'
import type { FastifyInstance } from 'fastify'

const auth = { authorization: DEMO }
const main = () => demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!
const liveClient = (agencyId: number = AGENCY.main, i = 0) =>
  demoFixture().agencies.find((a) => a.agencyId === agencyId)!.clients.filter((c) => !c.deleted)[i]
const post = (app: FastifyInstance, path: string, payload: unknown, headers: Record<string, string> = auth) =>
  app.inject({ method: 'POST', url: `/vendor/agency/${path}${path.includes('?') ? '&' : '?'}version=4.0`, headers, payload: payload as object })
const writes = async (app: FastifyInstance, agencyId: number, query = '') =>
  (await app.inject({ url: `/_sandbox/agencies/${agencyId}/writes${query}` })).json()
const modified = async (app: FastifyInstance, agencyId: number, n: number) =>
  (await app.inject({ url: `/vendor/agency/${agencyId}/client/${n}?version=4.0&include=Details`, headers: auth })).json().details.modified

t.test('log note: created now, in either casing, moves modified so changed-clients finds it', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const before = await modified(app, AGENCY.main, c.clientNumber)
  const syncTime = new Date().toISOString()
  await new Promise((resolve) => setTimeout(resolve, 5))

  let res = await post(app, `${AGENCY.main}/client/${c.clientNumber}/log`, logNote({ policyId: c.policies![0].id }))
  t.equal(res.statusCode, 200)
  t.equal(res.body, 'Created')
  t.match(res.headers['content-type'], /text\/plain/)

  const pascal = {
    RefId: randomUUID(),
    TS: '2026-11-20T11:00:00Z',
    Channel: 1,
    Note: 'Spoke to insured',
    Task: { AssignedToRole: 'CSR', Description: 'Call back', DueDate: '2026-11-25T09:00:00Z', Title: 'Call back' }
  }
  res = await post(app, `${AGENCY.main}/client/${c.clientNumber}/log`, pascal)
  // `action` is no alias of Channel since 3.0 (test/fidelity/observed-live.test.ts)
  t.equal(res.statusCode, 200, 'PascalCase keys bind')

  const after = await modified(app, AGENCY.main, c.clientNumber)
  t.not(after, before)
  t.ok(Date.parse(after) > Date.parse(syncTime))
  const changed = (await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=${syncTime}`, headers: auth })).json()
  t.same(changed, [c.clientNumber], 'the next changed-clients call finds exactly this client')

  const list = await writes(app, AGENCY.main, `?kind=log&clientNumber=${c.clientNumber}`)
  t.equal(list.length, 2)
  t.match(list[1], {
    kind: 'log',
    status: 'applied',
    refId: pascal.RefId,
    integration: 'abc',
    version: '4.0',
    data: { channel: 1, note: 'Spoke to insured', task: { assignedToRole: 'CSR', title: 'Call back' } }
  })
  t.ok(list[1].appliedAt)
})

t.test('log note validation names each field', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${AGENCY.main}/client/${c.clientNumber}/log`
  const cases: [string, Record<string, unknown>, string][] = [
    ['channel 0', logNote({ channel: 0 }), 'Channel'],
    ['channel 57', logNote({ channel: 57 }), 'Channel'],
    ['no RefId', { ...logNote(), refId: undefined }, 'RefId'],
    ['bad RefId', logNote({ refId: 'not-a-guid' }), 'RefId'],
    ['bad TS', logNote({ ts: 'tomorrow' }), 'TS'],
    ['no note', { ...logNote(), note: undefined }, 'Note'],
    ['foreign policy', logNote({ policyId: randomUUID() }), 'PolicyId'],
    ['task without email', logNote({ task: { assignedToRole: 'SpecifiedUser', description: 'x', dueDate: '2026-12-01T00:00:00Z', title: 'x' } }), 'Task.AssignedToEmail'],
    ['task to unknown email', logNote({ task: { assignedToRole: 'SpecifiedUser', assignedToEmail: 'nobody@example.com', description: 'x', dueDate: '2026-12-01T00:00:00Z', title: 'x' } }), 'Task.AssignedToEmail'],
    ['task bad role', logNote({ task: { assignedToRole: 'Boss', description: 'x', dueDate: '2026-12-01T00:00:00Z', title: 'x' } }), 'Task.AssignedToRole']
  ]
  for (const [name, body, field] of cases) {
    const res = await post(app, path, body)
    t.equal(res.statusCode, 400, name)
    t.ok(res.json().errors.some((e: { field: string }) => e.field === field), `${name}: names ${field} (${JSON.stringify(res.json().errors)})`)
  }
  t.same(await writes(app, AGENCY.main, '?kind=log'), [], 'nothing was written')

  const active = main().users.find((u) => u.active && u.email)!
  const res = await post(app, path, logNote({ task: { assignedToRole: 'SpecifiedUser', assignedToEmail: active.email!.toUpperCase(), description: 'x', dueDate: '2026-12-01T00:00:00Z', title: 'x' } }))
  t.equal(res.statusCode, 200, 'SpecifiedUser with an active user email')
})

t.test('writes need the scope, an available agency and a live client', async (t) => {
  const app = await build(t)
  const c = liveClient()
  let res = await post(app, `${AGENCY.main}/client/${c.clientNumber}/log`, logNote(), { authorization: NORTHWIND })
  t.equal(res.statusCode, 403)
  t.match(res.json().detail, /create-log-attachment-task/)
  res = await post(app, `${AGENCY.optedOut}/client/${c.clientNumber}/log`, logNote())
  t.equal(res.statusCode, 403)
  res = await post(app, `${AGENCY.main}/client/999999/log`, logNote())
  t.equal(res.statusCode, 404)
  const gone = main().clients.find((x) => x.deleted)!
  res = await post(app, `${AGENCY.main}/client/${gone.clientNumber}/log`, logNote())
  t.equal(res.statusCode, 404)
  res = await post(app, `${AGENCY.main}/client/${c.clientNumber}/log`, logNote(), {})
  t.equal(res.statusCode, 401)
  const limited = liveClient(AGENCY.limited)
  res = await post(app, `${AGENCY.limited}/client/${limited.clientNumber}/log`, logNote())
  t.equal(res.statusCode, 200, 'agency 1002 grants create-log-attachment-task')
})

t.test('repeated RefId: same body is not duplicated, a different body is 409', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const body = logNote()
  const path = `${AGENCY.main}/client/${c.clientNumber}/log`
  t.equal((await post(app, path, body)).statusCode, 200)
  const reordered = { note: body.note, channel: body.channel, ts: body.ts, RefId: body.refId }
  t.equal((await post(app, path, reordered)).statusCode, 200, 'same body in another key order and casing')
  t.equal((await writes(app, AGENCY.main, '?kind=log')).length, 1)
  const res = await post(app, path, { ...body, note: 'something else' })
  t.equal(res.statusCode, 409)
  t.match(res.json().detail, new RegExp(body.refId))
  t.equal((await writes(app, AGENCY.main, '?kind=log')).length, 1)
})

t.test('a client that is not live answers 404 before anything else about the write, and nothing of it is kept', async (t) => {
  const app = await build(t)
  const [c, other] = [liveClient(AGENCY.main, 0), liveClient(AGENCY.main, 1)]
  const gone = main().clients.find((x) => x.deleted)!
  const count = async () => (await writes(app, AGENCY.main, '?kind=log')).length
  const before = await count()

  // a new RefId: refused by the write that would move modified, and rolled back with it
  let res = await post(app, `${AGENCY.main}/client/${gone.clientNumber}/log`, logNote())
  t.equal(res.statusCode, 404)
  t.equal(await count(), before, 'no write kept for a deleted client')
  res = await post(app, `${AGENCY.main}/client/999999/log`, logNote())
  t.equal(res.statusCode, 404)
  t.equal(await count(), before, 'no write kept for a client that never was')
  res = await post(app, `${AGENCY.disconnected}/client/999999/log`, logNote())
  t.equal(res.statusCode, 404, 'nor kept pending for a disconnected agency')
  t.equal((await writes(app, AGENCY.disconnected)).length, 0)
  const file = attachment(Buffer.from('%PDF-1.4 demo'))
  res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${gone.clientNumber}/attachment?version=4.0`, headers: { ...auth, ...file.headers }, payload: file.payload })
  t.equal(res.statusCode, 404, 'an attachment too')
  t.equal((await writes(app, AGENCY.main, '?kind=attachment')).length, 0)

  // the domain's field errors (a policy not the client's): the missing client is answered first
  const strangePolicy = { ...logNote(), policyId: randomUUID() }
  res = await post(app, `${AGENCY.main}/client/${gone.clientNumber}/log`, strangePolicy)
  t.equal(res.statusCode, 404, 'not the 400 of its PolicyId')
  res = await post(app, `${AGENCY.main}/client/${c.clientNumber}/log`, strangePolicy)
  t.equal(res.statusCode, 400, 'a live client gets the 400')
  t.match(res.json().detail, /PolicyId/)

  // a RefId used before, once its client is deleted: 404, with either body
  const body = logNote()
  t.equal((await post(app, `${AGENCY.main}/client/${other.clientNumber}/log`, body)).statusCode, 200)
  const deleted = await app.inject({ method: 'DELETE', url: `/_sandbox/agencies/${AGENCY.main}/clients/${other.clientNumber}` })
  t.equal(deleted.statusCode, 200)
  t.equal((await post(app, `${AGENCY.main}/client/${other.clientNumber}/log`, body)).statusCode, 404, 'the same body')
  t.equal((await post(app, `${AGENCY.main}/client/${other.clientNumber}/log`, { ...body, note: 'another' })).statusCode, 404, 'another body')
  t.equal(await count(), before + 1)
  // the RefId stays the agency's: sent for another client, it names a different write (409)
  t.equal((await post(app, `${AGENCY.main}/client/${c.clientNumber}/log`, body)).statusCode, 409, 'a RefId is the agency\'s, not the client\'s')
})

t.test('disconnected agency: 202 pending, applied in order on reconnect, modified moved', async (t) => {
  const app = await build(t)
  const [a, b] = [liveClient(AGENCY.disconnected, 0), liveClient(AGENCY.disconnected, 1)]
  const before = await modified(app, AGENCY.disconnected, a.clientNumber)
  const first = logNote()
  let res = await post(app, `${AGENCY.disconnected}/client/${a.clientNumber}/log`, first)
  t.equal(res.statusCode, 202)
  t.equal(res.body, 'Saved; it will be created when the agency next connects')
  const file = attachment(Buffer.from('%PDF-1.4 demo'))
  res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.disconnected}/client/${b.clientNumber}/attachment?version=4.0`, headers: { ...auth, ...file.headers }, payload: file.payload })
  t.equal(res.statusCode, 202)
  t.equal(res.body, 'Saved; it will be created when the agency next connects', 'an attachment answers its outcome as a note does (in hosted mode too)')
  res = await post(app, `${AGENCY.disconnected}/client/${a.clientNumber}/receipts`, [receipt()])
  t.equal(res.statusCode, 202)
  t.equal(res.json()[0].code, 200)

  t.equal(await modified(app, AGENCY.disconnected, a.clientNumber), before, 'pending writes do not move modified')
  const pending = await writes(app, AGENCY.disconnected, '?status=pending')
  t.same(pending.map((w: { kind: string }) => w.kind), ['log', 'attachment', 'receipt'])
  t.equal((await post(app, `${AGENCY.disconnected}/client/${a.clientNumber}/log`, first)).statusCode, 202, 'a repeat while pending answers 202')

  res = await app.inject({ method: 'PATCH', url: `/_sandbox/agencies/${AGENCY.disconnected}`, payload: { connected: true } })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { connected: true, appliedPendingWrites: 3 })
  const applied = await writes(app, AGENCY.disconnected, '?status=applied')
  t.same(applied.map((w: { kind: string }) => w.kind), ['log', 'attachment', 'receipt'], 'arrival order kept')
  t.same(applied.map((w: { seq: number }) => w.seq), pending.map((w: { seq: number }) => w.seq))
  t.same(await writes(app, AGENCY.disconnected, '?status=pending'), [])
  t.not(await modified(app, AGENCY.disconnected, a.clientNumber), before, 'applying moved modified')
  t.equal((await post(app, `${AGENCY.disconnected}/client/${a.clientNumber}/log`, first)).statusCode, 200, 'the repeat now answers 200')
  t.equal((await post(app, `${AGENCY.disconnected}/client/${a.clientNumber}/log`, logNote())).statusCode, 200, 'new writes apply at once')

  res = await app.inject({ method: 'PATCH', url: '/_sandbox/agencies/424242', payload: { connected: true } })
  t.equal(res.statusCode, 404)
  res = await app.inject({ method: 'PATCH', url: `/_sandbox/agencies/${AGENCY.main}`, payload: { connected: 'yes please' } })
  t.equal(res.statusCode, 400)
})

t.test('pending writes survive a restart', { skip: overPostgres }, async (t) => {
  const { join } = await import('node:path')
  const db = join(tempDir(t, 'sandbox-pending-'), 'sandbox.db')
  const first = await build(t, { config: { db } })
  const c = liveClient(AGENCY.disconnected)
  t.equal((await post(first, `${AGENCY.disconnected}/client/${c.clientNumber}/log`, logNote())).statusCode, 202)
  await first.close()
  const second = await build(t, { config: { db } })
  t.equal((await writes(second, AGENCY.disconnected, '?status=pending')).length, 1)
  const res = await second.inject({ method: 'PATCH', url: `/_sandbox/agencies/${AGENCY.disconnected}`, payload: { connected: true } })
  t.equal(res.json().appliedPendingWrites, 1)
})

t.test('attachment: round trip byte for byte, types, gzip rules, base64 headers, task group', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const url = `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/attachment?version=4.0`
  // a pdf's signature, then arbitrary bytes
  const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 256))])
  const file = attachment(bytes, { FileExt: '.PDF' })
  let res = await app.inject({ method: 'POST', url, headers: { ...auth, ...file.headers }, payload: file.payload })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.body, 'Created')
  const [w] = await writes(app, AGENCY.main, '?kind=attachment')
  t.match(w.data, { fileName: 'application signée', fileExt: 'pdf', description: 'Signed application', logNote: 'Application received', size: bytes.length, channel: 33 })
  res = await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/attachments/${file.headers.RefId}/content` })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/pdf')
  t.ok(res.rawPayload.equals(bytes), 'the stored bytes are the decompressed file')

  res = await app.inject({ method: 'POST', url, headers: { ...auth, ...attachment(bytes).headers }, payload: bytes })
  t.equal(res.statusCode, 415, 'not gzip')
  const bomb = gzipSync(Buffer.alloc(6 * 1024 * 1024))
  t.ok(bomb.length < 100_000)
  res = await app.inject({ method: 'POST', url, headers: { ...auth, ...attachment(bytes).headers }, payload: bomb })
  t.equal(res.statusCode, 400, 'over 5 MiB decompressed')
  t.equal(res.json().detail, 'File exceeds max size of 5 MB.', 'the live sentence')
  res = await app.inject({ method: 'POST', url, headers: { ...auth, ...attachment(bytes).headers }, payload: gzipSync(Buffer.concat([Buffer.from('%PDF-'), Buffer.alloc(5 * 1024 * 1024 - 5, 1)])) })
  t.equal(res.statusCode, 200, 'exactly 5 MiB is accepted')

  const bad: [Record<string, string | undefined>, string, number][] = [
    [{ Desc: '***' }, 'Desc', 400],
    [{ FileName: 'abc' }, 'FileName', 400],
    [{ FileExt: 'exe' }, 'FileExt', 400],
    [{ FileExt: 'txt' }, 'FileExt', 400],
    [{ RefId: undefined }, 'RefId', 400],
    [{ Channel: '99' }, 'Channel', 400],
    [{ TaskTitle: b64('Review') }, 'TaskAssignedTo', 400],
    [{ TaskAssignedTo: 'SpecifiedUser', TaskDescription: b64('d'), TaskDueDate: '2026-12-01T00:00:00Z', TaskTitle: b64('t') }, 'TaskAssignedToEmail', 400]
  ]
  for (const [over, field, status] of bad) {
    const f = attachment(bytes, over)
    res = await app.inject({ method: 'POST', url, headers: { ...auth, ...f.headers }, payload: f.payload })
    t.equal(res.statusCode, status, JSON.stringify(over))
    t.ok(res.json().errors?.some((e: { field: string }) => e.field === field), `names ${field}: ${res.body}`)
  }
  const withTask = attachment(bytes, { TaskAssignedTo: 'Producer', TaskDescription: b64('Review the file'), TaskDueDate: '2026-12-01T00:00:00Z', TaskTitle: b64('Review'), TaskCategory: b64('Docs') })
  res = await app.inject({ method: 'POST', url, headers: { ...auth, ...withTask.headers }, payload: withTask.payload })
  t.equal(res.statusCode, 200)
  const last = (await writes(app, AGENCY.main, '?kind=attachment')).at(-1)
  t.match(last.data.task, { assignedToRole: 'Producer', description: 'Review the file', title: 'Review', category: 'Docs' })
  t.equal((await writes(app, AGENCY.main, '?kind=attachment')).length, 3, 'rejected attachments left nothing behind')
})

t.test('receipts: each item answered in order; valid ones recorded even when others fail', async (t) => {
  const app = await build(t)
  const c = main().clients.find((x) => !x.deleted && (x.invoices ?? []).length > 0)!
  const inv = c.invoices![0]
  const ok1 = receipt({ invoices: [{ invoiceId: inv.id, amount: 50.25 }], total: 50.25, payMethod: 'Check' })
  const badInvoice = receipt({ invoices: [{ invoiceId: randomUUID(), amount: 10 }] })
  const badTotal = receipt({ invoices: [{ invoiceId: inv.id, amount: 10 }], total: 11 })
  const negative = receipt({ invoices: [{ invoiceId: inv.id, amount: -1 }] })
  const noNote = { ...receipt(), logNote: undefined }
  const ok2 = receipt({ channel: '4' })
  const res = await post(app, `${AGENCY.main}/client/${c.clientNumber}/receipts`, [ok1, badInvoice, badTotal, negative, noNote, ok2])
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(body.map((r: { code: number }) => r.code), [200, 400, 400, 400, 400, 200])
  t.same(body.map((r: { refId: string }) => r.refId), [ok1, badInvoice, badTotal, negative, noNote, ok2].map((r) => r.refId))
  t.equal(body[0].message, null)
  t.match(body[1].message, /InvoiceId.*not an open invoice/)
  t.match(body[2].message, /Total.*sum/)
  t.match(body[3].message, /Amount/)
  t.match(body[4].message, /LogNote/)
  const recorded = await writes(app, AGENCY.main, '?kind=receipt')
  t.same(recorded.map((w: { refId: string }) => w.refId), [ok1.refId, ok2.refId])
  t.match(recorded[0].data, { payMethod: 'Check', officeId: c.details.officeId })
  t.match(recorded[1].data, { payMethod: 'Other', officeId: c.details.officeId }, 'defaults')

  const again = await post(app, `${AGENCY.main}/client/${c.clientNumber}/receipts`, [ok1, { ...ok2, logNote: 'changed' }])
  t.same(again.json(), [
    { refId: ok1.refId, code: 200, message: 'duplicate refId; already recorded' },
    { refId: ok2.refId, code: 409, message: again.json()[1].message }
  ])
  t.equal((await writes(app, AGENCY.main, '?kind=receipt')).length, 2)

  const notArray = await post(app, `${AGENCY.main}/client/${c.clientNumber}/receipts`, { refId: 'x' })
  t.equal(notArray.statusCode, 400)
  const empty = await post(app, `${AGENCY.main}/client/${c.clientNumber}/receipts`, [])
  t.equal(empty.statusCode, 400)
})

t.test('create client: read back field by field', async (t) => {
  const app = await build(t)
  const body = createClientBody({ Task: { AssignedToRole: 'Csr', Description: 'Welcome call', DueDate: '2026-11-27T15:00:00Z', Title: 'Welcome' } })
  const res = await post(app, `${AGENCY.main}/client`, body)
  t.equal(res.statusCode, 200, res.body)
  const { clientNumber } = res.json()
  t.equal(clientNumber, Math.max(...main().clients.map((c) => c.clientNumber)) + 1)

  const read = (await app.inject({ url: `/vendor/agency/${AGENCY.main}/client/${clientNumber}?version=4.0`, headers: auth })).json()
  const agency = main()
  const username = (id: number | undefined) => agency.users.find((u) => u.userId === id)?.username
  t.match(read.details, {
    isPersonal: true,
    isCommercial: false,
    status: 'Prospect',
    officeId: agency.defaultOfficeId,
    source: 'partner',
    csr: username(agency.defaultUsers?.Csr),
    producer: username(agency.defaultUsers?.Producer),
    mailingAddress: { address1: '12 Analytical Way', city: 'Portland', state: 'ME', zip: '04101' }
  })
  t.same(read.people.map((p: { firstName: string; mainContactType: string }) => [p.firstName, p.mainContactType]), [['Ada', 'First'], ['William', 'Second']])
  t.equal(read.people[0].dateOfBirth, '1985-12-10T00:00:00')
  t.same(read.details.mainContacts, read.people.map((p: { id: string }) => p.id))
  const contacts = read.contacts.map((c: { type: string; data: string; personId: string | null }) => [c.type, c.data, c.personId])
  t.same(contacts, [['HomePhone', '207-555-0100', null], ['HomeEmail', 'ada@example.com', read.people[0].id]])
  t.match(read.policies[0], {
    policyNumber: 'NEW-POL-0001',
    policyState: 'ME',
    applicationType: 'Personal',
    effectiveDate: '2026-12-01T00:00:00',
    loBs: [{ code: 'AUTOP', name: 'Private Passenger Automobile' }, { code: 'HOME', name: 'Homeowners' }]
  })
  const found = (await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients/search?version=4.0&policyNumber=NEW-POL-0001`, headers: auth })).json()
  t.same(found.map((c: { clientNumber: number }) => c.clientNumber), [clientNumber])
  const [note] = await writes(app, AGENCY.main, `?kind=client&clientNumber=${clientNumber}`)
  t.match(note.data, { channel: 29, note: 'New client from the partner portal', task: { assignedToRole: 'Csr', assignedToUserId: agency.defaultUsers?.Csr } })

  const commercial = await post(app, `${AGENCY.main}/client`, createClientBody({
    BusinessDetail: { BusinessType: 'LLC', CompanyName: 'Harbor Bakery LLC', FeinNum: '123456789' }, Status: 'Active', OfficeId: 2
  }))
  t.equal(commercial.statusCode, 200)
  const c2 = (await app.inject({ url: `/vendor/agency/${AGENCY.main}/client/${commercial.json().clientNumber}?version=4.0&include=Details`, headers: auth })).json()
  t.match(c2.details, { isCommercial: true, isPersonal: false, companyName: 'Harbor Bakery LLC', businessType: 'LLC', feinNum: '123456789', status: 'Active', officeId: 2 })
})

t.test('create client: every failing field at once, with its path; nothing written', async (t) => {
  const app = await build(t)
  const before = (await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: auth })).json().length
  const body = createClientBody({
    People: [
      { FirstName: 'A'.repeat(15), LastName: 'Ok', MainContactType: 'Second' },
      { FirstName: 'B', MainContactType: 'Second', Contacts: Array.from({ length: 6 }, () => ({ Type: 'HomePhone', Value: '1' })) }
    ],
    MailingAddress: { State: 'Maine' },
    Policy: { LOBs: ['AUTOP', 'NOPE'], EffectiveDate: '1969-12-31' },
    Source: 'x'.repeat(15),
    Status: 'Customer'
  })
  const res = await post(app, `${AGENCY.main}/client`, body)
  t.equal(res.statusCode, 400)
  const fields = res.json().errors.map((e: { field: string }) => e.field)
  for (const f of ['People[0].FirstName', 'People[1].Contacts', 'MailingAddress.State', 'Policy.LOBs[1]', 'Source', 'Status', 'People', 'Policy.EffectiveDate']) {
    t.ok(fields.includes(f), `reports ${f} (${fields.join(', ')})`)
  }
  const noRole = await post(app, `${AGENCY.main}/client`, createClientBody({ Task: { AssignedToRole: 'Agent2', Description: 'x', DueDate: '2026-11-27T15:00:00Z', Title: 'x' } }))
  t.equal(noRole.statusCode, 400)
  t.match(noRole.json().errors, [{ field: 'Task.AssignedToRole', message: /no default user for the Agent2 role/ }])
  const badOffice = await post(app, `${AGENCY.main}/client`, createClientBody({ OfficeId: 99 }))
  t.equal(badOffice.statusCode, 400)
  t.match(badOffice.json().errors, [{ field: 'OfficeId' }])
  const after = (await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: auth })).json().length
  t.equal(after, before, 'no client was created')
  t.same(await writes(app, AGENCY.main, '?kind=client'), [])
})

t.test('create client: a list far over its limit is refused on its first items over the limit, not item by item', async (t) => {
  const app = await build(t)
  // 5,000 people of which none is valid: the answer names the limit and the first 12 people only.
  const res = await post(app, `${AGENCY.main}/client`, createClientBody({ People: Array.from({ length: 5_000 }, () => ({})) }))
  t.equal(res.statusCode, 400)
  const errors = res.json().errors as Array<{ field: string, message: string }>
  t.match(errors, [{ field: 'People', message: /at most 11 items/ }], 'the limit is named')
  const people = new Set(errors.map((e) => /^People\[(\d+)\]/.exec(e.field)?.[1]).filter((n) => n !== undefined).map(Number))
  t.ok(people.size > 0 && Math.max(...people) <= 11, `only the first 12 people were looked at (${[...people].join(', ')})`)
})

t.test('create client: client-create scope, 4.0 only', async (t) => {
  const app = await build(t)
  let res = await post(app, `${AGENCY.limited}/client`, createClientBody())
  t.equal(res.statusCode, 403)
  t.match(res.json().detail, /client-create/)
  res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client?version=3.0`, headers: auth, payload: createClientBody() })
  t.equal(res.statusCode, 404)
})

t.test('create client: 25 per second per integration, then 429 with Retry-After: 1', async (t) => {
  const app = await build(t)
  const minimal = { People: [{ FirstName: 'R', MainContactType: 'First' }], Log: { Channel: 1, Note: 'n', TS: '2026-11-20T10:00:00Z' } }
  const started = Date.now()
  const codes: number[] = []
  let limited: { headers: Record<string, unknown>; json(): { status: number } } | undefined
  for (let i = 0; i < 30; i++) {
    const res = await post(app, `${AGENCY.main}/client`, minimal)
    codes.push(res.statusCode)
    if (res.statusCode === 429 && limited === undefined) limited = res
  }
  t.ok(Date.now() - started < 1000, 'the burst fits in one second')
  t.equal(codes.filter((c) => c === 200).length, 25)
  t.same(codes.slice(25), [429, 429, 429, 429, 429])
  t.equal(limited!.headers['retry-after'], '1')
  t.equal(limited!.json().status, 429)
  const other = await post(app, `${AGENCY.northwindOnly}/client`, minimal, { authorization: NORTHWIND })
  t.equal(other.statusCode, 200, 'another integration has its own budget')
  await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() - started)))
  const res = await post(app, `${AGENCY.main}/client`, minimal)
  t.equal(res.statusCode, 200, 'accepted again after a second')
})

t.test('timestamps must be real instants, not just the right shape', async (t) => {
  const app = await build(t)
  const c = liveClient()
  for (const ts of ['9999-99-99T99:99:99Z', '2024-02-30T10:00:00Z', '2024-01-01T24:00:00Z']) {
    const res = await post(app, `${AGENCY.main}/client/${c.clientNumber}/log`, logNote({ ts }))
    t.equal(res.statusCode, 400, ts)
    t.match(res.json().errors, [{ field: 'TS' }])
  }
  const res = await post(app, `${AGENCY.main}/client`, createClientBody({ Log: { Channel: 1, Note: 'n', TS: '2023-02-29T00:00:00Z' } }))
  t.equal(res.statusCode, 400)
  t.match(res.json().errors, [{ field: 'Log.TS' }])
})

// The create-client budget counts accepted creations only, and is checked last: 401, 403, 400, then 429.
const minimalClient = { People: [{ FirstName: 'R', MainContactType: 'First' }], Log: { Channel: 1, Note: 'n', TS: '2026-11-20T10:00:00Z' } }
const invalidClient = { People: [{ FirstName: 'R', MainContactType: 'Second' }], Log: { Channel: 99, Note: '', TS: 'soon' } }
const createCodes = async (app: FastifyInstance, agencyId: number, body: unknown, n: number, headers: Record<string, string> = auth) => {
  const codes: number[] = []
  for (let i = 0; i < n; i++) codes.push((await post(app, `${agencyId}/client`, body, headers)).statusCode)
  return codes
}
const times = (n: number, code: number) => Array.from({ length: n }, () => code)

/** An app whose clock's real time (the budget's time) stands still until `pass` moves it: a burst takes no time on a slow machine. */
async function buildStill (t: Parameters<typeof build>[0]) {
  let now = Date.now()
  const app = await build(t, { clock: new Clock(() => now) })
  return { app, pass: (ms: number) => { now += ms } }
}

t.test('regression: 30 create-client calls on a forbidden agency, then 5 valid calls on an allowed agency: all 5 are created', async (t) => {
  const { app } = await buildStill(t)
  t.same(await createCodes(app, AGENCY.limited, minimalClient, 30), times(30, 403), 'the agency has not granted client-create: 30 × 403, never 429')
  t.same(await createCodes(app, AGENCY.main, minimalClient, 5), times(5, 200), 'refused calls used none of the budget')
})

t.test('regression: 25 invalid create-client bodies, then valid calls succeed (only accepted creations count)', async (t) => {
  const { app } = await buildStill(t)
  t.same(await createCodes(app, AGENCY.main, invalidClient, 25), times(25, 400))
  t.same(await createCodes(app, AGENCY.main, createClientBody({ OfficeId: 99 }), 5), times(5, 400), 'a body the agency\'s data refuses does not count either')
  t.same(await createCodes(app, AGENCY.main, minimalClient, 25), times(25, 200), 'the whole budget is still there')
  t.same(await createCodes(app, AGENCY.main, minimalClient, 1), [429], 'and then it is used up')
})

t.test('regression: the 26th valid create-client call in a second answers 429 with Retry-After: 1', async (t) => {
  const { app, pass } = await buildStill(t)
  const listed = async () => (await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: auth })).json().length
  const before = await listed()
  const first = await post(app, `${AGENCY.main}/client`, minimalClient)
  t.equal(first.statusCode, 200)
  t.match(first.headers, { 'x-ratelimit-limit': '25', 'x-ratelimit-remaining': '24', 'x-ratelimit-reset': '1' }, 'the budget left is announced')
  pass(500)
  t.same(await createCodes(app, AGENCY.main, minimalClient, 24), times(24, 200))
  const over = await post(app, `${AGENCY.main}/client`, minimalClient)
  t.equal(over.statusCode, 429)
  t.equal(over.headers['retry-after'], '1')
  t.match(over.headers, { 'x-ratelimit-limit': '25', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' })
  t.match(over.headers['content-type'], /application\/problem\+json/)
  t.match(over.json(), { status: 429, detail: /At most 25 create-client requests per second per integration/ })
  t.equal(await listed(), before + 25, 'exactly 25 clients were created')
  pass(499)
  t.equal((await post(app, `${AGENCY.main}/client`, minimalClient)).statusCode, 429, 'the first creation is still in the window')
  pass(1)
  t.equal((await post(app, `${AGENCY.main}/client`, minimalClient)).statusCode, 200, 'a second after it, there is room for one')
  t.equal((await post(app, `${AGENCY.main}/client`, minimalClient)).statusCode, 429, 'and one only')
})

t.test('regression: over the create-client rate the checks keep their order: 401, 403, 400, then 429', async (t) => {
  const { app } = await buildStill(t)
  t.same(await createCodes(app, AGENCY.main, minimalClient, 25), times(25, 200), 'the budget is used up')
  t.equal((await post(app, `${AGENCY.main}/client`, invalidClient, {})).statusCode, 401, 'no credentials: 401')
  const forbidden = await post(app, `${AGENCY.limited}/client`, invalidClient)
  t.equal(forbidden.statusCode, 403, 'a forbidden agency with a bad body over the rate: 403')
  t.match(forbidden.json().detail, /client-create/)
  const invalid = await post(app, `${AGENCY.main}/client`, invalidClient)
  t.equal(invalid.statusCode, 400, 'an allowed agency with a bad body over the rate: 400')
  t.ok(invalid.json().errors.some((e: { field: string }) => e.field === 'People'), 'the rules are reported with the schema errors')
  t.equal((await post(app, `${AGENCY.main}/client`, createClientBody({ OfficeId: 99 }))).statusCode, 400, 'the agency\'s data is checked before the budget')
  t.equal((await post(app, `${AGENCY.main}/client`, minimalClient)).statusCode, 429, 'a valid body over the rate: 429')
})
