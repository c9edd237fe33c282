import { gzipSync } from 'node:zlib'
import t from 'tap'
import { AGENCY, build, demoFixture } from '../helpers/app.js'
import { fieldsOf, journaled, liveClient, vendor, writesOf } from '../helpers/fidelity.js'
import { attachment, createClientBody, logNote, receipt, v1AttachmentHeaders } from '../helpers/writes.js'

/**
 * Facts observed on the live service (sandbox contract, section A, and the section B rows that
 * follow them): what it answered real callers, with its exact message texts. A failure here
 * means the sandbox accepts what the live service refuses, or the other way round.
 */

t.test('[B: Log note `action` in 3.0/4.0] `action` instead of `channel` is 400 `Invalid Channel` naming Channel; action is an ignored key', async (t) => {
  const app = await build(t)
  const c = liveClient()
  for (const version of ['4.0', '3.0']) {
    for (const key of ['action', 'Action', 'ACTION']) {
      const { channel: _channel, ...note } = logNote()
      const res = await vendor(app, 'POST', `${AGENCY.main}/client/${c.clientNumber}/log`, `version=${version}`, { ...note, [key]: 29 })
      t.equal(res.statusCode, 400, `${version}, ${key}`)
      t.match(res.headers['content-type'], /application\/problem\+json/)
      const body = res.json()
      t.equal(body.detail, 'Invalid Channel', 'the live sentence')
      t.same(body.errors, [{ field: 'Channel', message: 'is required' }])
      const entry = await journaled(app, `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/log`)
      t.same(entry.warnings, [`ignored unknown key ${key}`], 'the journal says action was ignored')
    }
  }
  t.same(await writesOf(app, AGENCY.main), [], 'nothing was written')
})

t.test('[B: Log note `action` in 3.0/4.0] an invalid Channel answers the same live sentence; other faults are listed with it', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${AGENCY.main}/client/${c.clientNumber}/log`
  let res = await vendor(app, 'POST', path, 'version=4.0', logNote({ channel: 57 }))
  t.equal(res.statusCode, 400)
  t.equal(res.json().detail, 'Invalid Channel')
  t.same(fieldsOf(res.json()), ['Channel'])
  res = await vendor(app, 'POST', path, 'version=4.0', logNote({ channel: undefined, refId: 'nope' }))
  t.equal(res.statusCode, 400)
  t.equal(res.json().detail, 'Invalid Channel; 2 fields are invalid; see errors')
  t.same(fieldsOf(res.json()).sort(), ['Channel', 'RefId'])
  res = await vendor(app, 'POST', path, 'version=4.0', logNote({ refId: 'nope' }))
  t.not(res.json().detail, 'Invalid Channel', 'the sentence is for Channel only')
})

t.test('[B: Log note `action` in 3.0/4.0] with both keys, channel binds and action is ignored, whatever the key order', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${AGENCY.main}/client/${c.clientNumber}/log`
  const { channel: _channel, ...note } = logNote()
  // JSON keys keep their order on the wire: both orders are sent
  const actionFirst = `{"action":9,${JSON.stringify({ ...note, channel: 29 }).slice(1)}`
  // another RefId: its last digit changed (a RefId already ending in f would be sent twice)
  const channelFirst = `${JSON.stringify({ ...note, refId: note.refId.replace(/.$/, (d) => (d === 'f' ? 'e' : 'f')), channel: 29 }).slice(0, -1)},"action":9}`
  for (const payload of [actionFirst, channelFirst]) {
    const res = await vendor(app, 'POST', path, 'version=4.0', payload)
    t.equal(res.statusCode, 200, payload.slice(0, 20))
  }
  const written = await writesOf(app, AGENCY.main)
  t.same(written.map((w) => w.data.channel), [29, 29], 'channel, never action')
})

t.test('[A: Log note bodies seen from real callers] a log body wrapped in an array is refused; a single object works', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${AGENCY.main}/client/${c.clientNumber}/log`
  let res = await vendor(app, 'POST', path, 'version=4.0', [logNote()])
  t.equal(res.statusCode, 400)
  t.same(res.json().errors, [{ field: '(body)', message: 'must be a JSON object' }])
  res = await vendor(app, 'POST', path, 'version=4.0', logNote())
  t.equal(res.statusCode, 200)
})

t.test('[A: Real callers send request bodies in either casing] the v4 caller\'s PascalCase create-client body, and the same in camelCase', async (t) => {
  const app = await build(t)
  // as section A quotes it: MainContactType "First", contact Type "HomeEmail", Log.Channel 29, Status "Prospect"
  const pascal = {
    People: [{ FirstName: 'Grace', LastName: 'Hopper', MainContactType: 'First', Contacts: [{ Type: 'HomeEmail', Value: 'grace@example.com' }] }],
    Log: { Channel: 29, Note: 'From the portal', TS: '2026-11-20T10:00:00Z' },
    Status: 'Prospect',
    MailingAddress: { Address1: '1 Navy Way', City: 'Arlington', State: 'VA', Zip: '22201' }
  }
  const camel = JSON.parse(JSON.stringify(pascal).replace(/"([A-Z])([A-Za-z0-9]*)":/g, (_m, a: string, b: string) => `"${a.toLowerCase()}${b}":`))
  for (const body of [pascal, camel]) {
    const res = await vendor(app, 'POST', `${AGENCY.main}/client`, 'version=4.0', body)
    t.equal(res.statusCode, 200, JSON.stringify(body).slice(0, 30))
    t.type(res.json().clientNumber, 'number')
  }
  const res = await vendor(app, 'POST', `${AGENCY.main}/client`, 'version=4.0', createClientBody())
  t.equal(res.statusCode, 200, 'the helper body of the route tests too')
})

t.test('[B: Attachment] the decompressed bytes must carry FileExt\'s signature: else 400 `Invalid file signature`, before the other headers', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${AGENCY.main}/client/${c.clientNumber}/attachment`
  const post = (content: Buffer, over: Record<string, string | undefined>, version = '4.0') => {
    const f = attachment(content, over)
    return vendor(app, 'POST', path, `version=${version}`, f.payload as unknown as object, f.headers)
  }
  const good: [string, Buffer][] = [
    ['pdf', Buffer.from('%PDF-1.7\n')],
    ['png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
    ['jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0])],
    ['jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xdb])],
    ['mp3', Buffer.from('ID3\u0004')],
    ['mp3', Buffer.from([0xff, 0xfb, 0x90, 0x00])],
    ['msg', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0])],
    ['eml', Buffer.from('From: a@example.com\r\nSubject: café\r\n\r\nHello')]
  ]
  for (const [ext, content] of good) {
    const res = await post(content, { FileExt: ext })
    t.equal(res.statusCode, 200, `${ext}: ${res.body}`)
  }
  const bad: [string, Buffer][] = [
    ['pdf', Buffer.from('just text sent as a pdf')],
    ['png', Buffer.from('%PDF-1.7')],
    ['jpg', Buffer.from([0xff, 0xd8, 0x00])],
    ['mp3', Buffer.from([0xff, 0x1b])],
    ['msg', Buffer.from([0xd0, 0xcf, 0x11, 0xe0])],
    ['eml', Buffer.from([0x48, 0x00, 0x69])],
    ['eml', Buffer.from([0xc3, 0x28])]
  ]
  for (const [ext, content] of bad) {
    // Desc is invalid too: the signature is what the live service reports first
    const res = await post(content, { FileExt: ext, Desc: '***' })
    t.equal(res.statusCode, 400, ext)
    t.equal(res.json().detail, 'Invalid file signature', `${ext}: the live sentence`)
  }
  t.equal((await writesOf(app, AGENCY.main, '?kind=attachment')).length, good.length, 'nothing recorded for a bad signature')
})

t.test('[B: Attachment] version 1 txt must be text; over 5 MiB decompressed is 400 `File exceeds max size of 5 MB.` (not 413)', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const path = `${AGENCY.main}/client/${c.clientNumber}/attachment`
  const v1 = (content: Buffer) => vendor(app, 'POST', path, '', gzipSync(content) as unknown as object, v1AttachmentHeaders())
  t.equal((await v1(Buffer.from('plain text'))).statusCode, 200)
  const res = await v1(Buffer.from('%PDF-\u0000binary'))
  t.equal(res.statusCode, 400)
  t.equal(res.json().detail, 'Invalid file signature')
  const f = attachment(Buffer.concat([Buffer.from('%PDF-'), Buffer.alloc(5 * 1024 * 1024)]))
  const big = await vendor(app, 'POST', path, 'version=4.0', f.payload as unknown as object, f.headers)
  t.equal(big.statusCode, 400)
  t.equal(big.json().detail, 'File exceeds max size of 5 MB.', 'the live sentence')
})

t.test('[B: Receipts answer] `total` is required (item 400 `Total is required`); with invoices it is their sum; without invoices the payment is recorded unapplied', async (t) => {
  const app = await build(t)
  const c = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients.find((x) => !x.deleted && (x.invoices ?? []).length > 0)!
  const inv = c.invoices![0]
  const { total: _total, ...noTotal } = receipt()
  const unapplied = receipt({ total: 80 })
  const applied = receipt({ invoices: [{ invoiceId: inv.id, amount: 12.5 }], total: 12.5 })
  const wrongSum = receipt({ invoices: [{ invoiceId: inv.id, amount: 12.5 }], total: 13 })
  const res = await vendor(app, 'POST', `${AGENCY.main}/client/${c.clientNumber}/receipts`, 'version=4.0', [noTotal, unapplied, applied, wrongSum])
  t.equal(res.statusCode, 200)
  const answers = res.json() as { refId: string, code: number, message: string | null }[]
  t.same(answers.map((a) => a.code), [400, 200, 200, 400])
  t.equal(answers[0].message, 'Total is required', 'the live sentence')
  t.equal(answers[0].refId, noTotal.refId)
  t.match(answers[3].message, /Total: must equal the sum of the invoice amounts \(12\.5\)/)
  const recorded = await writesOf(app, AGENCY.main, '?kind=receipt')
  t.same(recorded.map((w) => w.data.total), [80, 12.5], 'nothing recorded without total')
  t.notOk(recorded[0].data.invoices, 'recorded unapplied')
})

t.test('[A: Coverage `premium` is a string on the wire] the demo data serves coverage premiums as strings such as "412.00"', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const res = await vendor(app, 'GET', `${AGENCY.main}/client/${c.clientNumber}`, 'version=4.0&include=Policies')
  const coverages = (res.json().policies as { coverages?: { premium?: unknown }[] }[]).flatMap((p) => p.coverages ?? [])
  t.ok(coverages.length > 0)
  for (const cv of coverages) {
    t.type(cv.premium, 'string')
    t.match(cv.premium, /^\d+\.\d{2}$/, 'a string with two decimals')
  }
})

t.test('[A: Offices in 4.0 carry `archived` and the listing includes the agency-level office `0`] office 0 is listed first, described like `<agency name> (primary)`; every office has a boolean archived', async (t) => {
  const app = await build(t)
  for (const agency of demoFixture().agencies.filter((a) => a.agencyId === AGENCY.main || a.agencyId === AGENCY.limited)) {
    const res = await vendor(app, 'GET', `${agency.agencyId}/offices`, 'version=4.0')
    t.equal(res.statusCode, 200)
    const offices = res.json() as { officeId: number, officeDescription: string, archived: unknown }[]
    t.match(offices[0], { officeId: 0, officeDescription: `${agency.name} (primary)`, archived: false }, `${agency.agencyId}: the agency-level office`)
    t.ok(offices.length > 1, 'besides the real offices')
    t.ok(offices.every((o) => typeof o.archived === 'boolean'), 'archived on every office')
  }
  const harbor = (await vendor(app, 'GET', `${AGENCY.main}/offices`, 'version=4.0')).json() as { officeId: number, archived: boolean }[]
  t.same(harbor.filter((o) => o.archived).map((o) => o.officeId), [4], "the demo's closed branch is listed, archived")
})

t.test('[A: Timestamps] dates of a created client follow the live formats: clientSince, birth and policy dates without a zone, at midnight', async (t) => {
  const app = await build(t)
  await app.inject({ method: 'PUT', url: '/_sandbox/clock', payload: { now: '2026-11-22T15:45:12.345Z', frozen: true } })
  const body = createClientBody({
    People: [{ FirstName: 'Ada', LastName: 'Lovelace', MainContactType: 'First', DateOfBirth: '1985-12-10T08:30:00+02:00' }],
    Policy: { LOBs: ['AUTOP'], EffectiveDate: '2026-12-01T00:00:00Z', State: 'ME' }
  })
  const created = await vendor(app, 'POST', `${AGENCY.main}/client`, 'version=4.0', body)
  t.equal(created.statusCode, 200, created.body)
  const read = (await vendor(app, 'GET', `${AGENCY.main}/client/${created.json().clientNumber as number}`, 'version=4.0')).json()
  t.equal(read.details.clientSince, '2026-11-22T00:00:00', 'clientSince: the creation date, no zone')
  t.equal(read.people[0].dateOfBirth, '1985-12-10T00:00:00', 'the date of birth as sent, no time or zone')
  t.equal(read.policies[0].effectiveDate, '2026-12-01T00:00:00', 'policy dates no zone')
  t.equal(read.policies[0].policyNumber, '', 'a policy shell sent without a number')
})
