import t, { type Test } from 'tap'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { Value } from '@sinclair/typebox/value'
import { Faker, base, en, en_US } from '@faker-js/faker'
import { createFaker, generateClient, generateDemoFixture, generateFixture, writeFixture } from '../src/fixture/generate.js'
import { Rand } from '../src/fixture/generate/random.js'
import { FixtureSchema, type Fixture, type FixtureAgency, type FixtureClient } from '../src/fixture/schema.js'
import { BUSINESS_TYPES, CONTACT_TYPES, SCOPES } from '../src/schemas/common.js'
import { LINES_OF_BUSINESS } from '../src/schemas/lob.js'
import { runCli } from './helpers/process.js'

const NOW = Date.parse('2026-11-01T00:00:00Z')
const DAY = 86_400_000
const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const LOCAL_DATE = /^\d{4}-\d{2}-\d{2}T00:00:00$/
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const PHONE = /^\(\d{3}\) \d{3}-\d{4}( x\d+)?$/
const PERSONAL_LOBS = new Set(['AUTOP', 'HOME', 'PUMBR', 'BOAT', 'CYCLE', 'FLOOD'])
const COMMERCIAL_LOBS = new Set(['BOP', 'CGL', 'WORK', 'AUTOB', 'PROP', 'CUMBR'])

/** Passes when the fixture matches FixtureSchema; otherwise fails with the first errors. */
function checkSchema (t: Test, fixture: unknown, name: string): void {
  if (Value.Check(FixtureSchema, fixture)) {
    t.pass(`${name} matches FixtureSchema`)
    return
  }
  const errors = [...Value.Errors(FixtureSchema, fixture)].slice(0, 8).map((e) => `${e.path}: ${e.message}`)
  t.fail(`${name} does not match FixtureSchema`, { errors })
}

const dupes = <T>(values: T[]): T[] => values.filter((v, i) => values.indexOf(v) !== i)
const dupesBySet = <T>(values: T[]): number => values.length - new Set(values).size

function modifiedOf (c: FixtureClient): string[] {
  return [...(c.people ?? []), ...(c.contacts ?? []), ...(c.claims ?? []), ...(c.policies ?? [])].map((r) => r.modified)
}

/** Every rule a generated client must keep; returns a list of problems (empty when fine). */
function clientProblems (c: FixtureClient, now: number): string[] {
  const p: string[] = []
  const at = `client ${c.clientNumber}`
  const d = c.details
  const people = c.people ?? []
  const contacts = c.contacts ?? []
  const policies = c.policies ?? []
  const claims = c.claims ?? []
  const invoices = c.invoices ?? []

  if (!GUID.test(d.id)) p.push(`${at}: details.id ${d.id}`)
  if (!ISO_MS_Z.test(d.modified)) p.push(`${at}: details.modified ${d.modified} is not ISO with ms and Z`)
  const latest = Date.parse(d.modified)
  if (latest > now || latest < now - 400 * DAY) p.push(`${at}: details.modified ${d.modified} out of range`)
  for (const m of modifiedOf(c)) {
    if (!ISO_MS_Z.test(m)) p.push(`${at}: record modified ${m}`)
    if (Date.parse(m) > latest) p.push(`${at}: record modified ${m} after details.modified ${d.modified}`)
  }
  if (d.clientType !== 'Customer') p.push(`${at}: clientType ${String(d.clientType)}`)
  if (d.isPersonal === d.isCommercial) p.push(`${at}: isPersonal and isCommercial agree`)
  if (typeof d.producer !== 'string' || d.producer.length !== 3) p.push(`${at}: producer ${String(d.producer)}`)
  if (typeof d.csr !== 'string' || d.csr.length !== 3) p.push(`${at}: csr ${String(d.csr)}`)
  if (typeof d.clientSince !== 'string' || !LOCAL_DATE.test(d.clientSince)) p.push(`${at}: clientSince ${String(d.clientSince)}`)
  for (const a of [d.mailingAddress, d.physicalAddress]) {
    if (a === undefined || a === null || !a.address1 || !a.city || !/^[A-Z]{2}$/.test(a.state ?? '') || !/^\d{5}$/.test(a.zip ?? '') || !a.county || a.countryCode !== 'US') {
      p.push(`${at}: address ${JSON.stringify(a)}`)
    }
  }
  if (d.isCommercial) {
    if (!d.companyName) p.push(`${at}: commercial without companyName`)
    if (!(BUSINESS_TYPES as readonly unknown[]).includes(d.businessType)) p.push(`${at}: businessType ${String(d.businessType)}`)
    if (!/^\d{9}$/.test(d.feinNum ?? '')) p.push(`${at}: feinNum ${String(d.feinNum)}`)
  } else if (d.companyName || d.businessType || d.feinNum) {
    p.push(`${at}: personal client with business fields`)
  }

  const personIds = people.map((x) => x.id)
  if (people.length === 0) p.push(`${at}: no people`)
  if (people.filter((x) => x.mainContactType === 'First').length !== 1) p.push(`${at}: not exactly one First`)
  if (people.filter((x) => x.mainContactType === 'Second').length > 1) p.push(`${at}: more than one Second`)
  for (const x of people) {
    if (!GUID.test(x.id) || !x.firstName || !x.lastName) p.push(`${at}: person ${x.id}`)
    if (x.dateOfBirth !== undefined && x.dateOfBirth !== null && !LOCAL_DATE.test(x.dateOfBirth)) p.push(`${at}: dateOfBirth ${x.dateOfBirth}`)
  }
  for (const id of d.mainContacts ?? []) if (!personIds.includes(id)) p.push(`${at}: mainContacts ${id} is not a person`)

  for (const x of contacts) {
    if (!GUID.test(x.id)) p.push(`${at}: contact id ${x.id}`)
    if (!(CONTACT_TYPES as readonly string[]).includes(x.type)) p.push(`${at}: contact type ${x.type}`)
    if (x.personId !== null && !personIds.includes(x.personId)) p.push(`${at}: contact of unknown person ${x.personId}`)
    if (x.type.endsWith('Email') && !/^[^@\s]+@[^@\s]+\.[a-z]+$/.test(x.data)) p.push(`${at}: ${x.type} ${x.data}`)
    if ((x.type.endsWith('Phone') || x.type === 'Fax') && !PHONE.test(x.data)) p.push(`${at}: ${x.type} ${x.data}`)
    if (x.type.endsWith('Website') && !x.data.startsWith('https://')) p.push(`${at}: ${x.type} ${x.data}`)
  }

  if (policies.length < 1 || policies.length > 4) p.push(`${at}: ${policies.length} policies`)
  policies.forEach((x, i) => {
    if (!GUID.test(x.id)) p.push(`${at}: policy id ${x.id}`)
    if (x.policyIndex !== i) p.push(`${at}: policyIndex ${String(x.policyIndex)} at ${i}`)
    if (!['Active', 'Cancelled', 'Expired', 'Quote'].includes(x.status ?? '')) p.push(`${at}: policy status ${String(x.status)}`)
    if (x.term !== 6 && x.term !== 12) p.push(`${at}: term ${String(x.term)}`)
    if (!x.carrier) p.push(`${at}: policy without carrier`)
    if (typeof x.premium !== 'number' || x.premium <= 0) p.push(`${at}: premium ${String(x.premium)}`)
    for (const date of [x.effectiveDate, x.expirationDate]) {
      if (typeof date !== 'string' || !LOCAL_DATE.test(date)) p.push(`${at}: policy date ${String(date)}`)
    }
    if ((x.effectiveDate ?? '') >= (x.expirationDate ?? '')) p.push(`${at}: effective not before expiration`)
    if (x.status === 'Active' && !(Date.parse(`${x.effectiveDate ?? ''}Z`) <= now && Date.parse(`${x.expirationDate ?? ''}Z`) > now)) {
      p.push(`${at}: active policy ${x.policyNumber} not in force now`)
    }
    const lobs = x.loBs ?? []
    if (lobs.length === 0) p.push(`${at}: policy without loBs`)
    for (const lob of lobs) {
      if (LINES_OF_BUSINESS[lob.code] !== lob.name) p.push(`${at}: LOB ${lob.code} ${String(lob.name)}`)
      if (!(d.isPersonal ? PERSONAL_LOBS : COMMERCIAL_LOBS).has(lob.code)) p.push(`${at}: LOB ${lob.code} on a ${d.isPersonal ? 'personal' : 'commercial'} client`)
    }
    const coverages = x.coverages ?? []
    if (coverages.length === 0 || coverages.some((cv) => !cv.code || !cv.description)) p.push(`${at}: coverages of ${x.policyNumber}`)
    if (coverages.some((cv) => cv.premium !== undefined && !/^\d+\.\d{2}$/.test(String(cv.premium)))) p.push(`${at}: coverage premium not a string such as "412.00"`)
    const sum = coverages.reduce((s, cv) => s + Number(cv.premium ?? 0), 0)
    if (Math.abs(sum - (x.premium ?? 0)) > 0.005) p.push(`${at}: coverage premiums ${sum} != ${String(x.premium)}`)
    for (const key of ['drivers', 'autos', 'additionalInterests', 'locations'] as const) {
      if (!Array.isArray(x[key])) p.push(`${at}: policy ${key} is not an array`)
    }
    if (x.officeId !== d.officeId) p.push(`${at}: policy office ${String(x.officeId)}`)
    if (x.agent1 !== d.producer) p.push(`${at}: agent1 ${String(x.agent1)}`)
  })
  const policyNumbers = policies.map((x) => x.policyNumber)
  const policyIds = policies.map((x) => x.id)

  if (claims.length > 2) p.push(`${at}: ${claims.length} claims`)
  for (const x of claims) {
    if (!GUID.test(x.id) || !x.claimNumber || !x.claimStatus || typeof x.lossAmount !== 'number') p.push(`${at}: claim ${JSON.stringify(x)}`)
    if (!policyNumbers.includes(x.policyNumber ?? '')) p.push(`${at}: claim on unknown policy ${String(x.policyNumber)}`)
    if (typeof x.lossDate !== 'string' || !LOCAL_DATE.test(x.lossDate) || Date.parse(`${x.lossDate}Z`) > now) p.push(`${at}: lossDate ${String(x.lossDate)}`)
  }

  if (invoices.length > 2) p.push(`${at}: ${invoices.length} invoices`)
  for (const x of invoices) {
    if (!GUID.test(x.id) || !x.invoiceNumber) p.push(`${at}: invoice ${JSON.stringify(x)}`)
    if (!policyIds.includes(x.policyId ?? '')) p.push(`${at}: invoice of unknown policy ${String(x.policyId)}`)
    if (!DATE_ONLY.test(x.date ?? '') || !DATE_ONLY.test(x.dueDate ?? '') || (x.dueDate ?? '') <= (x.date ?? '')) p.push(`${at}: invoice dates ${String(x.date)} ${String(x.dueDate)}`)
    if (!(x.balance > 0 && x.balance <= x.total)) p.push(`${at}: invoice balance ${x.balance} of ${x.total}`)
  }
  return p
}

/** The rules every generated agency keeps (both fixtures). */
function checkAgency (t: Test, a: FixtureAgency, now: number, users: [number, number]): void {
  t.test(`agency ${a.agencyId}`, async (t) => {
    const officeIds = a.offices.map((o) => o.officeId)
    t.same(dupes(officeIds), [], 'office ids unique')
    t.equal(a.offices.filter((o) => o.primaryOffice).length, 1, 'exactly one primary office')
    t.equal(a.defaultOfficeId, a.offices.find((o) => o.primaryOffice)?.officeId, 'default office is the primary one')
    t.ok(a.offices.every((o) => o.addressLine1 && o.city && /^[A-Z]{2}$/.test(o.state) && /^\d{5}$/.test(o.zipcode)), 'offices have addresses')

    t.ok(a.users.length >= users[0] && a.users.length <= users[1], `${users[0]}-${users[1]} users (${a.users.length})`)
    t.same(dupes(a.users.map((u) => u.userId)), [], 'user ids unique')
    t.same(dupes(a.users.map((u) => u.username)), [], 'usernames unique')
    t.ok(a.users.every((u) => /^[A-Z]{3}$/.test(u.username)), 'usernames are 3 upper-case letters')
    t.ok(a.users.some((u) => !u.active), 'at least one inactive user')
    t.ok(a.users.every((u) => u.homeOffice !== undefined && officeIds.includes(u.homeOffice)), 'home offices exist')
    for (const [role, userId] of Object.entries(a.defaultUsers ?? {})) {
      t.ok(a.users.find((u) => u.userId === userId)?.active, `default ${role} is an active user`)
    }

    t.same(dupes(a.clients.map((c) => c.clientNumber)), [], 'client numbers unique')
    t.equal(dupesBySet(a.clients.flatMap((c) => (c.policies ?? []).map((x) => x.policyNumber))), 0, 'policy numbers unique in the agency')
    const legacy = a.clients.flatMap((c) => [...(c.people ?? []), ...(c.contacts ?? []), ...(c.claims ?? []), ...(c.policies ?? [])].map((r) => r.legacyId))
    t.ok(legacy.every((id) => Number.isInteger(id)), 'every record has an integer legacyId')
    t.equal(dupesBySet(legacy), 0, 'legacyIds unique in the agency')
    const usernames = a.users.map((u) => u.username)
    t.ok(a.clients.every((c) => usernames.includes(c.details.producer ?? '') && usernames.includes(c.details.csr ?? '')), 'producers and CSRs are agency users')
    t.ok(a.clients.every((c) => officeIds.includes(c.details.officeId)), 'clients belong to agency offices')

    const problems = a.clients.flatMap((c) => clientProblems(c, now))
    t.same(problems.slice(0, 20), [], `clients keep the rules (${problems.length} problems)`)
    for (const c of a.clients) {
      const all = [c.details.modified, ...modifiedOf(c)].sort()
      if (all[all.length - 1] !== c.details.modified) t.fail(`client ${c.clientNumber}: details.modified is not the latest`)
    }
  })
}

const richness = (c: FixtureClient): Record<string, boolean> => ({
  people: (c.people ?? []).length >= 2,
  clientContacts: (c.contacts ?? []).some((x) => x.personId === null),
  personContacts: (c.contacts ?? []).some((x) => x.personId !== null),
  policies: (c.policies ?? []).length >= 2,
  claims: (c.claims ?? []).length >= 1,
  invoices: (c.invoices ?? []).length >= 1
})
const allRich = { people: true, clientContacts: true, personContacts: true, policies: true, claims: true, invoices: true }

t.test('demo fixture', async (t) => {
  const demo = generateDemoFixture()

  t.test('is deterministic', async (t) => {
    t.strictSame(generateDemoFixture(), demo)
  })

  t.test('matches the schema', async (t) => checkSchema(t, demo, 'demo fixture'))

  t.test('integrations', async (t) => {
    const all = [...SCOPES]
    t.strictSame(demo.integrations, [
      {
        clientId: 'abc',
        clientSecret: '123',
        name: 'Demo Partner',
        agencies: [
          { agencyId: 1001, scopes: all },
          { agencyId: 1002, scopes: ['client-read', 'create-log-attachment-task'] },
          { agencyId: 1003, scopes: ['client-read'], optedOut: true },
          { agencyId: 1004, scopes: all },
          { agencyId: 1005, scopes: ['client-read'] }
        ]
      },
      {
        clientId: 'northwind-crm',
        clientSecret: 'nw-sandbox-secret',
        name: 'Northwind CRM',
        agencies: [{ agencyId: 1001, scopes: ['client-read'] }, { agencyId: 2001, scopes: all }]
      },
      { clientId: 'idle-vendor', clientSecret: 'idle-secret', name: 'Idle Vendor', agencies: [] }
    ])
    t.same(all, ['client-read', 'create-log-attachment-task', 'client-create', 'user-list', 'invoice-read'])
  })

  t.test('agencies', async (t) => {
    const expected = [
      { agencyId: 1001, name: 'Harbor Insurance Group', active: true, connected: true, supportsIncludes: true, offices: 3, clients: 260, roles: ['Agent1', 'Csr', 'Producer'] },
      { agencyId: 1002, name: 'Summit Risk Partners', active: true, connected: true, supportsIncludes: false, offices: 2, clients: 30, roles: ['Producer'] },
      { agencyId: 1003, name: 'Lakeside Agency', active: true, connected: true, supportsIncludes: true, offices: 2, clients: 10 },
      { agencyId: 1004, name: 'Prairie Mutual Agency', active: true, connected: false, supportsIncludes: true, offices: 2, clients: 20, roles: ['Csr', 'Producer'] },
      { agencyId: 1005, name: 'Old Town Insurance', active: false, connected: true, supportsIncludes: true, offices: 2, clients: 5 },
      { agencyId: 2001, name: 'Coastal Benefits LLC', active: true, connected: true, supportsIncludes: true, offices: 2, clients: 15, roles: ['Csr'] }
    ]
    t.same(demo.agencies.map((a) => a.agencyId), expected.map((e) => e.agencyId), 'agency ids')
    for (const e of expected) {
      const a = demo.agencies.find((x) => x.agencyId === e.agencyId)
      if (a === undefined) continue
      t.equal(a.name, e.name)
      t.equal(a.active ?? true, e.active, `${e.agencyId} active`)
      t.equal(a.connected ?? true, e.connected, `${e.agencyId} connected`)
      t.equal(a.supportsIncludes ?? true, e.supportsIncludes, `${e.agencyId} supportsIncludes`)
      t.equal(a.offices.length, e.offices, `${e.agencyId} offices`)
      t.same(a.clients.map((c) => c.clientNumber), Array.from({ length: e.clients }, (_, i) => 1000 + i), `${e.agencyId} client numbers`)
      if (e.roles !== undefined) t.same(Object.keys(a.defaultUsers ?? {}).sort(), e.roles, `${e.agencyId} default users`)
      t.equal(a.clients.filter((c) => c.deleted === true).length, e.agencyId === 1001 ? 6 : 0, `${e.agencyId} deleted clients`)
      checkAgency(t, a, NOW, [5, 8])
    }
    // policy numbers carry a prefix of their agency
    const prefixes = demo.agencies.map((a) => new Set(a.clients.flatMap((c) => (c.policies ?? []).map((x) => x.policyNumber.replace(/\d+-\d+$/, '')))))
    t.ok(prefixes.every((s) => s.size === 1), 'one policy number prefix per agency')
    t.equal(new Set(prefixes.flatMap((s) => [...s])).size, demo.agencies.length, 'a different prefix for each agency')
  })

  t.test('agency 1001 showcase clients', async (t) => {
    const harbor = demo.agencies.find((a) => a.agencyId === 1001)
    if (harbor === undefined) return t.fail('no agency 1001')
    const [first, second] = harbor.clients
    t.equal(first.clientNumber, 1000)
    t.ok(first.details.isPersonal && !first.details.isCommercial, 'client 1000 is personal')
    t.strictSame(richness(first), allRich, 'client 1000 has every data group')
    t.equal(second.clientNumber, 1001)
    t.ok(second.details.isCommercial && !second.details.isPersonal, 'client 1001 is commercial')
    t.strictSame(richness(second), allRich, 'client 1001 has every data group')
    t.notOk(first.deleted ?? second.deleted, 'showcase clients are not deleted')
    const recentDeleted = harbor.clients.filter((c) => c.deleted === true && Date.parse(c.details.modified) >= NOW - 30 * DAY)
    t.ok(recentDeleted.length >= 1, 'a client deleted within the last 30 days')
  })

  t.test('mix of clients', async (t) => {
    const clients = demo.agencies.flatMap((a) => a.clients)
    const personal = clients.filter((c) => c.details.isPersonal).length / clients.length
    t.ok(personal > 0.6 && personal < 0.8, `about 70% personal (${personal.toFixed(2)})`)
    t.ok(clients.some((c) => (c.people ?? []).some((x) => x.mainContactType === 'Second')), 'some spouses')
    const statuses = new Set(clients.map((c) => c.details.status))
    t.ok(statuses.has('Active') && statuses.has('Prospect') && statuses.size >= 3, `statuses ${[...statuses].join(', ')}`)
  })

  t.test('the committed fixtures/demo.json is the generated demo', async (t) => {
    const text = readFileSync(new URL('../fixtures/demo.json', import.meta.url), 'utf8')
    t.ok(text.startsWith('{\n  "$schema": "./schema.json",\n'), '$schema is the first key, 2-space indent')
    t.ok(text.endsWith('}\n'), 'trailing newline')
    const { $schema, ...committed } = JSON.parse(text) as Fixture
    t.equal($schema, './schema.json')
    t.strictSame(committed, demo, 'run `node dist/scripts/generate-demo.js` after changing the generator')
    t.ok(text.length < 2_000_000, `demo.json is ${(text.length / 1e6).toFixed(2)} MB`)
  })

  t.test('the committed fixtures/schema.json is FixtureSchema', async (t) => {
    const schema = JSON.parse(readFileSync(new URL('../fixtures/schema.json', import.meta.url), 'utf8')) as Record<string, unknown>
    t.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#')
    t.equal(schema.$id, 'https://agency-sandbox.local/fixture.schema.json')
    const rest = Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema' && key !== '$id'))
    t.strictSame(rest, JSON.parse(JSON.stringify(FixtureSchema)))
  })
})

t.test('generic fixture', async (t) => {
  const opts = { agencies: 2, clients: 300, seed: 7 }
  const fixture = generateFixture(opts)

  t.test('is deterministic', async (t) => {
    t.strictSame(generateFixture(opts), fixture)
  })

  t.test('matches the schema', async (t) => checkSchema(t, fixture, 'generic fixture'))

  t.test('shape', async (t) => {
    t.same(fixture.agencies.map((a) => a.agencyId), [1001, 1002])
    t.strictSame(fixture.integrations.map((i) => ({ clientId: i.clientId, clientSecret: i.clientSecret })), [{ clientId: 'abc', clientSecret: '123' }])
    t.strictSame(fixture.integrations[0].agencies, [
      { agencyId: 1001, scopes: [...SCOPES] },
      { agencyId: 1002, scopes: [...SCOPES] }
    ])
    for (const a of fixture.agencies) {
      t.ok(a.offices.length >= 2 && a.offices.length <= 3, `${a.agencyId}: 2-3 offices`)
      t.ok(a.defaultUsers?.Csr !== undefined && a.defaultUsers.Producer !== undefined, `${a.agencyId}: default Csr and Producer`)
      t.same(a.clients.map((c) => c.clientNumber), Array.from({ length: 300 }, (_, i) => 1000 + i), `${a.agencyId}: client numbers`)
      checkAgency(t, a, NOW, [6, 10])
    }
    const clients = fixture.agencies.flatMap((a) => a.clients)
    const deleted = clients.filter((c) => c.deleted === true).length
    t.ok(deleted <= 20, `about 1% deleted (${deleted} of ${clients.length})`)
  })

  t.test('a different seed gives different data', async (t) => {
    const other = generateFixture({ ...opts, seed: 8 })
    t.notSame(other.agencies[0].clients[0], fixture.agencies[0].clients[0])
    t.notSame(other.agencies[0].users, fixture.agencies[0].users)
  })

  t.test('now and progress', async (t) => {
    const calls: [number, number][] = []
    const now = new Date('2025-03-01T00:00:00Z')
    const small = generateFixture({ agencies: 1, clients: 2500, seed: 1, now, onProgress: (done, total) => calls.push([done, total]) })
    t.strictSame(calls, [[1000, 2500], [2000, 2500], [2500, 2500]], 'progress every 1,000 clients and at the end')
    const latest = Math.max(...small.agencies[0].clients.map((c) => Date.parse(c.details.modified)))
    t.ok(latest <= now.getTime() && latest > now.getTime() - 30 * DAY, 'modified times follow `now`')
    t.same(small.agencies[0].clients.flatMap((c) => clientProblems(c, now.getTime())).slice(0, 10), [])
  })
})

t.test('streamed fixture', async (t) => {
  t.test('the same bytes as the in-memory fixture, written as they are generated', async (t) => {
    const opts = { agencies: 2, clients: 1500, seed: 7 }
    const expected = JSON.stringify(generateFixture(opts)) + '\n'
    const chunks: Buffer[] = []
    let progressCalls = 0
    let progressAtFirstChunk = -1
    let mostBuffered = 0
    // a slow reader that takes one byte before it asks for more: the writer must wait on it
    const slow = new Writable({
      highWaterMark: 1,
      write (chunk: Buffer, _encoding, done) {
        if (progressAtFirstChunk < 0) progressAtFirstChunk = progressCalls
        chunks.push(chunk)
        mostBuffered = Math.max(mostBuffered, slow.writableLength)
        setImmediate(done)
      }
    })
    await writeFixture({ ...opts, onProgress: () => { progressCalls++ } }, slow)
    const text = Buffer.concat(chunks).toString('utf8')
    t.equal(text.length, expected.length, 'same length')
    t.ok(text === expected, 'same text as JSON.stringify(generateFixture(opts)) + newline')
    t.ok(chunks.length >= 4, `written in pieces (${chunks.length})`)
    t.equal(progressAtFirstChunk, 0, 'the first piece is written before the first 1,000 clients are made')
    t.ok(mostBuffered <= 512 * 1024, `the writer waits on the reader: at most ${mostBuffered} bytes wait, of ${text.length}`)
    t.equal(progressCalls, 3, 'progress at 1,000, 2,000 and 3,000 clients')
    t.ok(slow.writableFinished, 'the output is ended')
  })

  t.test('no agencies, no clients', async (t) => {
    for (const opts of [{ agencies: 0, clients: 5, seed: 1 }, { agencies: 2, clients: 0, seed: 1 }]) {
      const chunks: Buffer[] = []
      const sink = new Writable({ write (chunk: Buffer, _encoding, done) { chunks.push(chunk); done() } })
      await writeFixture(opts, sink)
      t.equal(Buffer.concat(chunks).toString('utf8'), JSON.stringify(generateFixture(opts)) + '\n', JSON.stringify(opts))
    }
  })
})

t.test('CLI generate streams the same bytes and reports in words', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-generate-'))
  const file = join(dir, 'one.json')
  let res = await runCli(['generate', '--agencies', '1', '--clients', '2500', '--seed', '3', '--out', file])
  t.equal(res.code, 0, res.stderr)
  t.ok(readFileSync(file, 'utf8') === JSON.stringify(generateFixture({ agencies: 1, clients: 2500, seed: 3 })) + '\n', 'the file is the in-memory fixture')
  t.match(res.stderr, /wrote .*one\.json: 1 agency x 2500 clients in \d+\.\d s/, 'one agency, in the singular')
  t.notMatch(res.stderr, /1 agencies/, 'never "1 agencies"')
  // standard error is a pipe here, not a terminal: plain lines, no bar
  t.match(res.stderr, /^generated 1000\/2500 clients \(40%\)$/m, 'a plain line at each tenth reached')
  t.match(res.stderr, /^generated 2500\/2500 clients \(100%\)$/m, 'and at the end')
  t.notMatch(res.stderr, /\r/, 'no carriage returns')

  res = await runCli(['generate', '--agencies', '2', '--clients', '1', '--seed', '3', '--out', join(dir, 'two.json')])
  t.match(res.stderr, /2 agencies x 1 client in/, 'one client, in the singular')

  res = await runCli(['generate', '--agencies', '2', '--clients', '40', '--seed', '5'])
  t.equal(res.code, 0, res.stderr)
  t.ok(res.stdout === JSON.stringify(generateFixture({ agencies: 2, clients: 40, seed: 5 })) + '\n', 'standard output gets the same bytes')

  res = await runCli(['generate', '--clients', '10', '--out', join(dir, 'no-such-dir', 'x.json')])
  t.equal(res.code, 1, 'an output that cannot be written fails')
  t.match(res.stderr, /cannot write .*x\.json: ENOENT/, 'and says which file and why')
})

t.test('the seeded generator draws what faker draws', async (t) => {
  const seeds: (number | number[])[] = [0, 7, 20261101, 2 ** 32 + 5, -7, 1.5, [7, 1001], [], [1.5, -3, 2 ** 35]]
  for (const seed of seeds) {
    const theirs = new Faker({ locale: [en_US, en, base] })
    theirs.seed(seed)
    const ours = createFaker(seed)
    const drawn = (f: Faker): unknown[] => Array.from({ length: 1500 }, (_, i) => (i % 2 === 0 ? f.number.float() : f.person.firstName()))
    t.strictSame(drawn(ours), drawn(theirs), `seed ${JSON.stringify(seed)}`)
  }
  // the generator's own draws compute what faker's number and helpers functions compute
  const theirDraws = new Faker({ locale: [en_US, en, base] })
  theirDraws.seed(3)
  const rand = new Rand(createFaker(3))
  const weights = [{ weight: 76, value: 'a' }, { weight: 11, value: 'b' }, { weight: 5, value: 'c' }, { weight: 8, value: 'd' }]
  const ranges: [number, number][] = [[0, 1], [5, 5], [201, 989], [0, 0xffffffff], [-40, 40], [Date.parse('2020-01-01'), Date.parse('2026-01-01')]]
  const mine: unknown[] = []
  const faker: unknown[] = []
  for (let i = 0; i < 400; i++) {
    for (const [min, max] of ranges) {
      mine.push(rand.int(min, max))
      faker.push(theirDraws.number.int({ min, max }))
    }
    mine.push(rand.weighted(weights), rand.chance(0.3), rand.pick(['x', 'y', 'z']), rand.pick(['only']))
    faker.push(theirDraws.helpers.weightedArrayElement(weights), theirDraws.number.float() < 0.3,
      ['x', 'y', 'z'][theirDraws.number.int(2)], ['only'][theirDraws.number.int(0)])
  }
  t.strictSame(mine, faker, 'int, weighted, chance and pick draw as faker does')

  // clients drawn through faker's own generator (not the twister) are the same clients
  const opts = { officeIds: [1, 2], now: new Date('2026-05-01T00:00:00Z'), userNames: ['ABC', 'DEF'], policyNumberPrefix: 'T-' }
  const theirs = new Faker({ locale: [en_US, en, base] })
  theirs.seed(42)
  const ours = createFaker(42)
  const clients = (f: Faker): unknown[] => Array.from({ length: 30 }, (_, i) => generateClient(f, { ...opts, clientNumber: 1000 + i, rich: i % 3 === 0 }))
  t.strictSame(clients(ours), clients(theirs), 'generateClient over a Faker of faker\'s making')
})
