import t from 'tap'
import Database from 'better-sqlite3'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase, closeDatabase, listMigrations, migrate } from '../../src/db/database.js'
import { ROOT } from '../../src/config.js'
import { AGENCY, DEMO, build, testConfig } from '../helpers/app.js'
import { tempDir } from '../helpers/temp-dir.js'

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
  const dir = tempDir(t, 'sandbox-mig-')
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
  const dir = tempDir(t, 'sandbox-db-')
  const file = join(dir, 'nested', 'sandbox.db')
  const first = await build(t, { config: { db: file } })
  t.equal(first.worlds.startUp.seededNow, true, 'first start seeds')
  const db = openDatabase({ file, migrationsDir })
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  db.prepare('UPDATE agencies SET name = ? WHERE agency_id = ?').run('Renamed By Partner', AGENCY.main)
  db.prepare('DELETE FROM subscriptions WHERE agency_id = ?').run(AGENCY.limited)
  closeDatabase(db)
  await first.close()

  const second = await build(t, { config: { db: file } })
  t.equal(second.worlds.startUp.seededNow, false, 'later starts keep the data')
  t.equal(second.worlds.default.admin.listAgencies().find((a) => a.agencyId === AGENCY.main)?.name, 'Renamed By Partner')
  const res = await second.inject({ url: '/vendor/agencies?version=3.0', headers: { authorization: DEMO } })
  t.notOk(res.json().includes(AGENCY.limited), 'no reseed over the partner state')
})

t.test('the test config is in memory', async (t) => {
  t.equal(testConfig().db, ':memory:')
})
