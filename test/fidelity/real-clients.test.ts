import t from 'tap'
import { randomUUID } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { AGENCY, DEMO, demoFixture } from '../helpers/app.js'
import { serveProcess } from '../helpers/process.js'

/**
 * Real clients against a real sandbox process (the built CLI: `npm run build` first). The first
 * drives it the way a typical C# client does: an HttpClient, System.Text.Json with default
 * options (PascalCase property names, unset properties sent as null, enums as numbers unless a
 * converter writes their names, whose case is whatever the caller typed), and query strings
 * built from .NET values (`bool.ToString()` is `True`, `Version=4.0`). Every call must succeed.
 * The second sends the mistakes seen in public clients; each must be a clear 4xx naming what to
 * fix. Contract rows: [B: Binding habits of the live (.NET) service], [B: Log note `action` in
 * 3.0/4.0], [A: Log note bodies seen from real callers], [B: Attachment].
 */

type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number, type: string, body: any }>

/** An HttpClient: base address, Basic credentials, JSON bodies; answers parsed by their content type. */
function httpClient (base: string): Call {
  return async (method, path, body, headers = {}) => {
    const json = body !== undefined && !Buffer.isBuffer(body)
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: DEMO, accept: 'application/json', ...(json ? { 'content-type': 'application/json; charset=utf-8' } : {}), ...headers },
      ...(body === undefined ? {} : { body: json ? JSON.stringify(body) : body as Buffer })
    })
    const type = res.headers.get('content-type') ?? ''
    const text = await res.text()
    return { status: res.status, type, body: /json/.test(type) ? JSON.parse(text) : text }
  }
}

const main = AGENCY.main
const demo = demoFixture().agencies.find((a) => a.agencyId === main)!
const client = demo.clients.filter((c) => !c.deleted)[0]
const invoiced = demo.clients.find((c) => !c.deleted && (c.invoices ?? []).length > 0)!
const invoice = invoiced.invoices![0]
const policyNumber = demo.clients.flatMap((c) => c.policies ?? []).find((p) => p.policyNumber)!.policyNumber!
const pdf = Buffer.from('%PDF-1.4\n% a small file\n')
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')

/** A C# LogNote record serialised by System.Text.Json: PascalCase, nulls for what is unset. */
const csharpLogNote = () => ({ RefId: randomUUID(), TS: '2026-11-20T10:00:00', Channel: 29, Note: '<p>Called</p>', PolicyId: null, Task: null })

t.test('a typical C# client: PascalCase bodies, True/False and Version=4.0 in queries, enum names in any case or numbers', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:' })
  t.teardown(() => { served.child.kill() })
  const call = httpClient(served.url)
  const ok = async (label: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const res = await call(method, path, body, headers)
    t.equal(res.status, 200, `${label}: ${JSON.stringify(res.body).slice(0, 300)}`)
    return res.body
  }
  const agencies = await ok('agencies', 'GET', '/vendor/agencies?Version=4.0')
  t.type(agencies[0], 'object', 'Version=4.0 is version 4.0')
  const all = await ok('changed clients', 'GET', `/vendor/agency/${main}/clients?Version=4.0&Deleted=False`)
  const since = await ok('changed since', 'GET', `/vendor/agency/${main}/clients?Version=4.0&Deleted=False&AsOf=2999-01-01T00:00:00`)
  t.ok(all.length > 0)
  t.same(since, [], 'AsOf binds')
  const deleted = await ok('deleted', 'GET', `/vendor/agency/${main}/clients?Version=4.0&Deleted=True`)
  t.same(deleted, demo.clients.filter((c) => c.deleted).map((c) => c.clientNumber).sort((a, b) => a - b))
  const one = await ok('client', 'GET', `/vendor/agency/${main}/client/${client.clientNumber}?Version=4.0&Include=Details,People`)
  t.same(Object.keys(one), ['clientNumber', 'details', 'people'])
  await ok('batch', 'POST', `/vendor/agency/${main}/clients?Version=4.0`, { ClientNumbers: [client.clientNumber] })
  t.ok((await ok('search', 'GET', `/vendor/agency/${main}/clients/search?Version=4.0&PolicyNumber=${encodeURIComponent(policyNumber)}`)).length >= 1)

  t.equal(await ok('log note', 'POST', `/vendor/agency/${main}/client/${client.clientNumber}/log?Version=4.0`, csharpLogNote()), 'Created')
  t.equal(await ok('log note with a task', 'POST', `/vendor/agency/${main}/client/${client.clientNumber}/log?Version=4.0`, {
    ...csharpLogNote(), Task: { AssignedToRole: 'Csr', AssignedToEmail: null, Category: null, Description: 'Call back', DueDate: '2026-11-25T09:00:00Z', Title: 'Call back' }
  }), 'Created')

  const created = await ok('create client (names)', 'POST', `/vendor/agency/${main}/client?Version=4.0`, {
    BusinessDetail: null,
    Contacts: null,
    MailingAddress: null,
    OfficeId: null,
    Source: null,
    People: [{
      FirstName: 'Ada',
      LastName: 'Lovelace',
      MainContactType: 'first',
      DateOfBirth: '1985-12-10',
      DriverLicenseNumber: null,
      Contacts: [{ Type: 'homeEmail', Value: 'ada@example.com' }]
    }],
    Log: { Channel: 29, Note: 'New client from the portal', PolicyId: null, TS: '2026-11-20T10:00:00' },
    Policy: { ApplicationType: null, EffectiveDate: '2026-12-01', LOBs: ['autop'], PolicyNumber: null, State: 'ME' },
    Status: 'prospect',
    Task: { AssignedToRole: 'csr', AssignedToEmail: null, Category: null, Description: 'Welcome call', DueDate: '2026-11-27T15:00:00Z', Title: 'Welcome' }
  })
  const read = await ok('read back', 'GET', `/vendor/agency/${main}/client/${created.clientNumber}?Version=4.0`)
  t.equal(read.details.status, 'Prospect', 'read-back is canonical')
  t.equal(read.people[0].mainContactType, 'First')
  t.equal(read.contacts[0].type, 'HomeEmail')
  t.same(read.policies[0].loBs.map((l: { code: string }) => l.code), ['AUTOP'])

  // without JsonStringEnumConverter, System.Text.Json writes enums as their numbers
  const numbered = await ok('create client (numbers)', 'POST', `/vendor/agency/${main}/client?Version=4.0`, {
    People: [{ FirstName: 'Bo', MainContactType: 1, Contacts: [{ Type: 3, Value: '207-555-0101' }] }],
    Log: { Channel: 29, Note: 'n', PolicyId: null, TS: '2026-11-20T10:00:00' },
    Status: 3
  })
  const readNumbered = await ok('read back', 'GET', `/vendor/agency/${main}/client/${numbered.clientNumber}?Version=4.0`)
  t.equal(readNumbered.details.status, 'Lead')
  t.equal(readNumbered.contacts[0].type, 'CellPhone')

  const receipts = await ok('receipts', 'POST', `/vendor/agency/${main}/client/${invoiced.clientNumber}/receipts?Version=4.0`, [{
    RefId: randomUUID(),
    TS: '2026-11-20T10:00:00',
    Channel: 4,
    LogNote: 'Paid by card',
    Total: invoice.balance,
    Invoices: [{ InvoiceId: invoice.id, Amount: invoice.balance }],
    OfficeId: null,
    PayMethod: null,
    PolicyId: null,
    Task: null
  }])
  t.same(receipts.map((r: { code: number }) => r.code), [200])

  const attached = await ok('attachment', 'POST', `/vendor/agency/${main}/client/${client.clientNumber}/attachment?Version=4.0`, gzipSync(pdf), {
    'content-type': 'application/octet-stream',
    RefId: randomUUID(),
    TS: '2026-11-20T10:00:00',
    Channel: '33',
    Desc: b64('Signed application'),
    FileName: b64('application'),
    FileExt: 'pdf',
    LogNote: b64('Application received')
  })
  t.equal(attached, 'Created')
})

t.test('the mistakes seen in public clients: each is a clear 4xx naming what to fix', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:' })
  t.teardown(() => { served.child.kill() })
  const call = httpClient(served.url)
  const log = `/vendor/agency/${main}/client/${client.clientNumber}/log?version=4.0`
  const { Channel: _channel, ...withoutChannel } = csharpLogNote()

  let res = await call('POST', log, { ...withoutChannel, action: 29 })
  t.equal(res.status, 400, '`action` instead of `channel`')
  t.match(res.type, /problem\+json/)
  t.equal(res.body.detail, 'Invalid Channel', 'as the live service answers')
  t.same(res.body.errors, [{ field: 'Channel', message: 'is required' }])

  res = await call('POST', log, [csharpLogNote()])
  t.equal(res.status, 400, 'a log body wrapped in an array')
  t.same(res.body.errors, [{ field: '(body)', message: 'must be a JSON object' }])

  const headers = {
    RefId: randomUUID(), TS: '2026-11-20T10:00:00Z', Channel: '33', Desc: b64('d'), FileName: b64('f'), FileExt: 'pdf', LogNote: b64('n')
  }
  const jsonFile = { fileName: 'f.pdf', content: pdf.toString('base64') }
  res = await call('POST', `/vendor/agency/${main}/client/${client.clientNumber}/attachment?version=4.0`, jsonFile, headers)
  t.equal(res.status, 415, 'a JSON attachment body instead of gzip')
  t.match(res.body.detail, /gzip/)
  res = await call('POST', `/vendor/agency/${main}/client/${client.clientNumber}/attachment?version=4.0`, jsonFile)
  t.equal(res.status, 400, 'the same without the metadata headers')
  t.ok(res.body.errors.some((e: { field: string }) => e.field === 'RefId'), 'names the missing headers')

  const writes = await (await fetch(`${served.url}/_sandbox/agencies/${main}/writes`)).json()
  t.same(writes, [], 'none of them wrote anything')
})
