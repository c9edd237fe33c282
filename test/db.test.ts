import t from 'tap'
import Database from 'better-sqlite3'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, closeDatabase, listMigrations, migrate } from '../src/db/database.js'
import { ROOT } from '../src/config.js'
import fc from 'fast-check'
import { GROUP_KEYS, type ClientGroup } from '../src/schemas/client.js'
import { clientReaders } from '../src/versions/clients.js'
import { AGENCY, DEMO, build, demoFixture, testConfig } from './helpers/app.js'
import { createStore } from '../src/db/store.js'
import { createClients } from '../src/domain/clients.js'
import { loadWorld } from '../src/domain/world.js'

const migrationsDir = join(ROOT, 'migrations')

t.test('migrations apply from zero, in order, and re-running is a no-op', async (t) => {
  const db = openDatabase({ file: ':memory:', migrationsDir })
  t.teardown(() => closeDatabase(db))
  const last = listMigrations(migrationsDir).at(-1)!.version
  t.equal(db.pragma('user_version', { simple: true }), last)
  t.equal(migrate(db, migrationsDir), last)
  t.equal(db.pragma('foreign_keys', { simple: true }), 1)
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()
  t.ok(tables.includes('clients') && tables.includes('policies'))
})

t.test('a failing migration leaves the database at the previous version', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-mig-'))
  writeFileSync(join(dir, '001-ok.sql'), 'CREATE TABLE a (x INTEGER) STRICT;')
  writeFileSync(join(dir, '002-bad.sql'), 'CREATE TABLE b (x INTEGER) STRICT; INSERT INTO nowhere VALUES (1);')
  writeFileSync(join(dir, 'notes.txt'), 'not a migration')
  const file = join(dir, 'x.db')
  t.throws(() => openDatabase({ file, migrationsDir: dir }), /nowhere/)
  const db = new Database(file)
  t.teardown(() => db.close())
  t.equal(db.pragma('user_version', { simple: true }), 1)
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()
  t.same(tables, ['a'], 'the failed migration left nothing behind')
})

t.test('file databases use WAL and keep their data across restarts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-db-'))
  const file = join(dir, 'nested', 'sandbox.db')
  const first = await build(t, { config: { db: file } })
  t.equal(first.sandbox.seededNow, true, 'first start seeds')
  const db = openDatabase({ file, migrationsDir })
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  db.prepare('UPDATE agencies SET name = ? WHERE agency_id = ?').run('Renamed By Partner', AGENCY.main)
  db.prepare('DELETE FROM subscriptions WHERE agency_id = ?').run(AGENCY.limited)
  closeDatabase(db)
  await first.close()

  const second = await build(t, { config: { db: file } })
  t.equal(second.sandbox.seededNow, false, 'later starts keep the data')
  t.equal(second.sandbox.store.getAgency(AGENCY.main)?.name, 'Renamed By Partner')
  const res = await second.inject({ url: '/vendor/agencies?version=3.0', headers: { authorization: DEMO } })
  t.notOk(res.json().includes(AGENCY.limited), 'no reseed over the partner state')
})

t.test('the test config is in memory', async (t) => {
  t.equal(testConfig().db, ':memory:')
})

t.test('batch answers joined by SQLite equal the rows rendered one by one, for any numbers and groups', async (t) => {
  const app = await build(t)
  const { clients } = app.sandbox
  const agency = AGENCY.main
  const demoClients = demoFixture().agencies.find((a) => a.agencyId === agency)!.clients
  const known = demoClients.map((c) => c.clientNumber)
  t.ok(demoClients.some((c) => c.deleted === true), 'the demo agency has deleted clients to leave out')
  const groupNames = Object.keys(GROUP_KEYS) as ClientGroup[]
  const number = fc.oneof(fc.constantFrom(...known), fc.integer({ min: 1, max: 2_000_000 }))
  fc.assert(
    fc.property(
      fc.array(number, { maxLength: 60 }),
      fc.shuffledSubarray(groupNames),
      (numbers, groups) => {
        const columns = groups.map((g) => GROUP_KEYS[g])
        const joined = clients.batchJson(agency, numbers, columns).toString('utf8')
        const rendered = clientReaders['4.0'].render(clients.batch(agency, numbers), groups)
        return joined === rendered
      }
    ),
    { seed: 20261122, numRuns: 300 }
  )
  const all = clients.batchJson(agency, known.slice(0, 200).reverse(), ['details'])
  const ids = (JSON.parse(all.toString()) as { clientNumber: number }[]).map((c) => c.clientNumber)
  t.ok(ids.length > 1 && ids[0] > ids[1], 'in the order asked')
  t.same(JSON.parse(clients.batchJson(agency, [], ['details']).toString()), [])
})

t.test('batch answers stay whole when the cache of client bytes starts over in the middle of a request', async (t) => {
  const db = openDatabase({ file: ':memory:', migrationsDir })
  t.teardown(() => closeDatabase(db))
  // room for about three clients: nearly every batch starts the cache over while it reads
  const store = createStore(db, { fragmentCacheBytes: 10_000 })
  loadWorld(store, demoFixture(), 'demo', new Date().toISOString())
  const clients = createClients(store)
  const agency = AGENCY.main
  const known = demoFixture().agencies.find((a) => a.agencyId === agency)!.clients.map((c) => c.clientNumber)
  const groupNames = Object.keys(GROUP_KEYS) as ClientGroup[]
  fc.assert(
    fc.property(
      // a few clients asked often, so requests mix clients found in memory with clients read now
      fc.array(fc.oneof(fc.constantFrom(...known.slice(0, 8)), fc.constantFrom(...known), fc.integer({ min: 1, max: 2_000_000 })), { maxLength: 40 }),
      fc.shuffledSubarray(groupNames, { minLength: 1 }),
      (numbers, groups) => {
        const joined = clients.batchJson(agency, numbers, groups.map((g) => GROUP_KEYS[g])).toString('utf8')
        return joined === clientReaders['4.0'].render(clients.batch(agency, numbers), groups)
      }
    ),
    { seed: 20261123, numRuns: 200 }
  )
  const live = demoFixture().agencies.find((a) => a.agencyId === agency)!.clients.filter((c) => c.deleted !== true).map((c) => c.clientNumber)
  const numbersOf = (asked: number[]) =>
    (JSON.parse(clients.batchJson(agency, asked, ['details']).toString()) as { clientNumber: number }[]).map((c) => c.clientNumber)
  t.same(numbersOf(live.slice(0, 50)), live.slice(0, 50), 'fifty live clients asked, fifty answered in order, though only three fit')
  // a client kept from the last request, then enough new ones to start the cache over
  const kept = live.slice(48, 50)
  t.same(numbersOf([...kept, ...live.slice(60, 160)]), [...kept, ...live.slice(60, 160)], 'clients found in memory survive a start-over later in the same request')
})
