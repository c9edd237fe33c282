import t from 'tap'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { closeDatabase, openDatabase } from '../../src/db/database.js'
import { createClientRepository } from '../../src/db/clients.js'
import { createRepositories, UnitOfWork } from '../../src/db/index.js'
import { loadWorld } from '../../src/domain/world.js'
import { createReadModel } from '../../src/read-model/index.js'
import { AGENCY, demoFixture } from '../helpers/app.js'

const migrationsDir = join(ROOT, 'migrations')

/** The demo world with its read model, as the sandbox builds them. */
function setup (t: { teardown(fn: () => unknown): void }) {
  const db = openDatabase({ file: ':memory:', migrationsDir })
  t.teardown(() => closeDatabase(db))
  const sql = new UnitOfWork(db)
  const repositories = createRepositories(sql)
  const reads = createReadModel(repositories, repositories.changes)
  loadWorld(repositories, demoFixture(), 'demo', new Date().toISOString())
  const client = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients.find((c) => c.deleted !== true && (c.policies ?? []).length > 0)!
  return { sql, repositories, reads, n: client.clientNumber, policyNumber: client.policies![0].policyNumber! }
}

const companyOf = (json: string) => (JSON.parse(json) as { details: { companyName: unknown } }).details.companyName
const companiesOf = (json: string) => (JSON.parse(json) as { details: { companyName: unknown } }[]).map((c) => c.details.companyName)
const text = (body: string | Buffer) => body.toString()

t.test('a write method added to a repository invalidates every cached read, with no registration', async (t) => {
  const { sql, reads, n, policyNumber } = setup(t)
  // a repository extended with a write no list names and no cache knows about
  const clients = {
    ...createClientRepository(sql),
    renameCompany: (agencyId: number, clientNumber: number, name: string) =>
      sql.command<[string, number, number]>("UPDATE clients SET details = json_set(details, '$.companyName', ?) WHERE agency_id = ? AND client_number = ?")
        .run(name, agencyId, clientNumber)
  }
  // read each answer twice, so the second comes from memory
  for (let i = 0; i < 2; i++) {
    reads.clientJson(AGENCY.main, n, ['Details'])
    reads.batchJson(AGENCY.main, [n], ['Details'])
    reads.searchJson(AGENCY.main, policyNumber, ['Details'])
    reads.liveClient(AGENCY.main, n)
  }
  clients.renameCompany(AGENCY.main, n, 'Renamed Without Registration')
  const renamed = 'Renamed Without Registration'
  t.equal(companyOf(text(reads.clientJson(AGENCY.main, n, ['Details'])!.body)), renamed, 'one client')
  t.same(companiesOf(text(reads.batchJson(AGENCY.main, [n], ['Details']).body)), [renamed], 'batch read')
  t.same(companiesOf(text(reads.searchJson(AGENCY.main, policyNumber, ['Details']).body)), [renamed], 'search')
  t.equal(companyOf(`{"details":${reads.liveClient(AGENCY.main, n)!.details}}`), renamed, 'row')

  const deleteClient = sql.command<[number, number]>('UPDATE clients SET deleted = 1 WHERE agency_id = ? AND client_number = ?')
  const since = { deleted: false, officeId: null, sinceMs: 0 }
  const touch = sql.command<[number, number, number]>('UPDATE clients SET modified_ms = ? WHERE agency_id = ? AND client_number = ?')
  const future = Date.parse('2099-01-01T00:00:00Z')
  const recent = { ...since, sinceMs: future - 1 }
  for (let i = 0; i < 2; i++) {
    t.ok(JSON.parse(text(reads.changedIdsJson(AGENCY.main, { deleted: false, officeId: null, sinceMs: null }).body)).includes(n))
    t.same(JSON.parse(text(reads.changedIdsJson(AGENCY.main, recent).body)), [], 'nothing changed since a time to come (read twice: kept)')
  }
  touch.run(future, AGENCY.main, n)
  t.same(JSON.parse(text(reads.changedIdsJson(AGENCY.main, recent).body)), [n], 'a listing since an instant follows the change')
  deleteClient.run(AGENCY.main, n)
  t.notOk(JSON.parse(text(reads.changedIdsJson(AGENCY.main, { deleted: false, officeId: null, sinceMs: null }).body)).includes(n), 'full listing')
  t.equal(reads.clientJson(AGENCY.main, n, ['Details']), undefined, 'a deleted client is gone')
})

t.test('access answers follow ad-hoc writes too', async (t) => {
  const { sql, reads } = setup(t)
  t.ok(reads.credentials('abc', '123'))
  t.ok(reads.grant('abc', AGENCY.main))
  t.ok(reads.agencyList('abc').some((a) => a.agencyId === AGENCY.main))
  sql.command<[string, string]>('UPDATE integrations SET client_secret = ? WHERE client_id = ?').run('456', 'abc')
  t.equal(reads.credentials('abc', '123'), undefined, 'the old secret is refused at once')
  t.equal(reads.credentials('abc', '456')?.clientId, 'abc')
  sql.command('UPDATE agencies SET active = 0 WHERE agency_id = ?').run(AGENCY.main)
  t.equal(reads.grant('abc', AGENCY.main), undefined, 'an inactive agency grants nothing at once')
  t.notOk(reads.agencyList('abc').some((a) => a.agencyId === AGENCY.main))
  sql.command('UPDATE subscriptions SET opted_out = 1 WHERE client_id = ?').run('abc')
  t.same(reads.agencyList('abc'), [], 'an opt-out is seen at once')
  // a statement whose table is not told from its first words counts as writing any table
  sql.command("WITH s AS (SELECT 'xyz' AS secret) UPDATE integrations SET client_secret = (SELECT secret FROM s) WHERE client_id = ?").run('abc')
  t.equal(reads.credentials('abc', '456'), undefined, 'a write the read model cannot name drops what it keeps')
})

t.test('a write to clients and their writes leaves access as it was kept: nothing is read again', async (t) => {
  const { sql, repositories } = setup(t)
  const counted = { integrations: 0, subscriptions: 0, agencies: 0 }
  const reads = createReadModel({
    ...repositories,
    access: {
      ...repositories.access,
      getIntegration: (id) => { counted.integrations++; return repositories.access.getIntegration(id) },
      getSubscription: (id, agencyId) => { counted.subscriptions++; return repositories.access.getSubscription(id, agencyId) }
    },
    agencies: { ...repositories.agencies, getAgency: (id) => { counted.agencies++; return repositories.agencies.getAgency(id) } }
  }, repositories.changes)
  const readAccess = () => { t.ok(reads.credentials('abc', '123')); t.ok(reads.grant('abc', AGENCY.main)) }
  readAccess()
  const before = { ...counted }
  sql.command("UPDATE clients SET details = json_set(details, '$.modified', '2031-01-01T00:00:00Z') WHERE agency_id = ?").run(AGENCY.main)
  sql.command("INSERT INTO meta (key, value) VALUES ('bench', '1')").run()
  readAccess()
  t.same(counted, before, 'credentials, grant and agency kept across the commits')
  sql.command('UPDATE agencies SET name = name WHERE agency_id = ?').run(AGENCY.main)
  readAccess()
  t.ok(counted.agencies > before.agencies && counted.subscriptions > before.subscriptions, 'a write to agencies reads them again')
})

t.test('inside a transaction reads see its writes and keep nothing; a rollback leaves no trace', async (t) => {
  const { repositories, reads, n } = setup(t)
  const before = text(reads.clientJson(AGENCY.main, n, ['Details'])!.body)
  const row = repositories.clients.getClient(AGENCY.main, n)!
  const changed = { ...row, details: JSON.stringify({ ...JSON.parse(row.details), companyName: 'Never Committed' }) }
  t.throws(() => repositories.transaction(() => {
    repositories.clients.updateClient(changed)
    t.equal(companyOf(text(reads.clientJson(AGENCY.main, n, ['Details'])!.body)), 'Never Committed', 'the transaction reads its own write')
    t.same(companiesOf(text(reads.batchJson(AGENCY.main, [n], ['Details']).body)), ['Never Committed'])
    throw new Error('roll back')
  }), /roll back/)
  t.equal(text(reads.clientJson(AGENCY.main, n, ['Details'])!.body), before, 'the rolled-back write was never kept')
  t.equal(text(reads.batchJson(AGENCY.main, [n], ['Details']).body), `[${before}]`)
})

t.test("a write to one client's rows drops that client and its agency's listings and searches, and keeps the other clients", async (t) => {
  const { sql, repositories, n, policyNumber } = setup(t)
  const live = repositories.clients.listClients(AGENCY.main).filter((c) => !c.deleted && c.clientNumber !== n)
  const other = live[0].clientNumber
  const reads1 = { getClient: 0, search: 0, ids: 0, batch: 0 }
  const reads = createReadModel({
    ...repositories,
    clients: {
      ...repositories.clients,
      getClient: (a, c) => { reads1.getClient++; return repositories.clients.getClient(a, c) },
      searchByPolicyNumber: (a, p) => { reads1.search++; return repositories.clients.searchByPolicyNumber(a, p) },
      clientIds: (a, q) => { reads1.ids++; return repositories.clients.clientIds(a, q) },
      concatLiveClientsIn: (a, c, p) => { reads1.batch += c.length; return repositories.clients.concatLiveClientsIn(a, c, p) }
    }
  }, repositories.changes)
  const future = Date.parse('2099-01-01T00:00:00Z')
  const recent = { deleted: false, officeId: null, sinceMs: future - 1 }
  const readAll = () => ({
    one: text(reads.clientJson(AGENCY.main, n, ['Details'])!.body),
    other: text(reads.clientJson(AGENCY.main, other, ['Details'])!.body),
    batch: text(reads.batchJson(AGENCY.main, [n, other], ['Details']).body),
    search: text(reads.searchJson(AGENCY.main, policyNumber, ['Details']).body),
    recent: text(reads.changedIdsJson(AGENCY.main, recent).body)
  })
  readAll()
  const before = { ...reads1 }
  t.same(readAll(), readAll(), 'read again: the same answers')
  t.same(reads1, before, 'all from memory')

  // a log note's change of modified, committed on its own, outside any transaction
  const modified = '2099-01-01T00:00:00.000Z'
  repositories.clients.touchClient(AGENCY.main, n, modified, future)
  const after = readAll()
  const modifiedOf = (json: string) => (JSON.parse(`[${json}]`) as { details: { modified: string } }[]).flat().map((c) => c.details.modified)
  t.same(modifiedOf(after.one), [modified], 'the client written is read again')
  t.same(modifiedOf(after.batch)[0], modified, 'and in a batch')
  t.same(modifiedOf(after.search), [modified], "its agency's searches are read again")
  t.same(JSON.parse(after.recent), [n], "its agency's listings are read again")
  t.equal(reads1.getClient, before.getClient + 1, 'the other client stays kept: one client read')
  t.equal(reads1.batch, before.batch + 1, 'one client of the batch read again')

  // its policies are its rows too: a policy added is found at once
  repositories.clients.insertPolicy(AGENCY.main, other, { policyId: 'P-NEW', policyNumber, policyIndex: 99 })
  const numbers = (json: string) => (JSON.parse(json) as { clientNumber: number }[]).map((c) => c.clientNumber)
  t.same(numbers(readAll().search), [n, other].sort((a, b) => a - b), 'a policy added joins the search')

  // a write the unit of work cannot scope to one client drops everything, as before
  sql.command('UPDATE clients SET modified_ms = ? WHERE agency_id = ? AND client_number = ?').run(future, AGENCY.main, other)
  const count = reads1.getClient
  t.same(JSON.parse(readAll().recent), [n, other].sort((a, b) => a - b))
  t.equal(reads1.getClient, count + 2, 'every client read again')
})

t.test('one-client and search answers are kept as the bytes sent, until a write to their client or agency', async (t) => {
  const { repositories, reads, n, policyNumber } = setup(t)
  const search = () => reads.searchJson(AGENCY.main, policyNumber, ['Details']).body
  const one = () => reads.clientJson(AGENCY.main, n, ['Details'])!.body
  const sameBytes = (a: string | Buffer, b: string | Buffer) => Buffer.isBuffer(a) && a === b
  t.ok(sameBytes(search(), search()), 'a search read again answers the very bytes kept, not a new encoding')
  t.ok(sameBytes(one(), one()), 'and so does a client read again')
  t.not(reads.searchJson(AGENCY.main, policyNumber, ['Details', 'Contacts']).body, search(), 'other groups are another answer')
  const kept = search()
  repositories.clients.touchClient(AGENCY.main, n, '2099-01-01T00:00:00.000Z', Date.parse('2099-01-01T00:00:00Z'))
  const after = search()
  t.not(after, kept, 'a write to a client of its agency: the search is encoded again')
  t.match(after.toString(), /2099-01-01T00:00:00/, 'with the write in it')
  t.equal(search(), after, 'and kept again')
})
