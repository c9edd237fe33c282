import t from 'tap'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { closeDatabase, openDatabase } from '../../src/db/database.js'
import { createRepositories, UnitOfWork } from '../../src/db/index.js'
import { ANY_TABLE, writtenTable } from '../../src/db/unit-of-work.js'
import { loadWorld } from '../../src/domain/world.js'
import { AGENCY, demoFixture } from '../helpers/app.js'

const migrationsDir = join(ROOT, 'migrations')

/** A migrated in-memory database, its unit of work and a count of the commits it signalled. */
function setup (t: { teardown(fn: () => unknown): void }) {
  const db = openDatabase({ file: ':memory:', migrationsDir })
  t.teardown(() => closeDatabase(db))
  const sql = new UnitOfWork(db)
  const signals = { count: 0 }
  sql.onCommit(() => signals.count++)
  return { db, sql, signals, repositories: createRepositories(sql) }
}

t.test('a transaction signals once, after its COMMIT; nested ones join it', async (t) => {
  const { db, sql, signals } = setup(t)
  const insert = sql.command<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)')
  let seenInside = -1
  sql.transaction(() => {
    insert.run('a', '1')
    sql.transaction(() => insert.run('b', '2'))
    sql.transaction(() => sql.transaction(() => insert.run('c', '3')))
    seenInside = signals.count
    t.ok(sql.inTransaction && db.inTransaction)
  })
  t.equal(seenInside, 0, 'nothing is signalled before the outermost commit')
  t.equal(signals.count, 1, 'one signal for the whole transaction')
  t.notOk(sql.inTransaction)
  t.equal(db.prepare('SELECT count(*) AS n FROM meta').pluck().get(), 3)
})

t.test('a rollback signals nothing, and leaves nothing written', async (t) => {
  const { db, sql, signals } = setup(t)
  const insert = sql.command<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)')
  t.throws(() => sql.transaction(() => {
    insert.run('a', '1')
    throw new Error('rules say no')
  }), /rules say no/)
  t.equal(signals.count, 0, 'no change signal on rollback')
  t.throws(() => insert.run('x', '1') && insert.run('x', '2'), /UNIQUE/, 'a failing command rolls back too')
  t.equal(signals.count, 1, 'the first command committed and signalled; the failing one did not')
  t.equal(db.prepare('SELECT count(*) AS n FROM meta').pluck().get(), 1)
  t.notOk(sql.inTransaction)

  // an inner failure caught by the outer call undoes the inner writes only
  sql.transaction(() => {
    insert.run('kept', '1')
    t.throws(() => sql.transaction(() => {
      insert.run('undone', '1')
      throw new Error('inner')
    }))
  })
  t.same(db.prepare("SELECT key FROM meta WHERE key IN ('kept', 'undone')").pluck().all(), ['kept'])
  t.equal(signals.count, 2)
})

t.test('a command outside any transaction runs in its own, and signals its commit', async (t) => {
  const { signals, repositories } = setup(t)
  repositories.meta.set('k', 'v')
  t.equal(signals.count, 1)
  t.equal(repositories.meta.get('k'), 'v')
  t.equal(signals.count, 1, 'reads signal nothing')
})

t.test('a query cannot write: writes exist only as commands, which always end in a signalled commit', async (t) => {
  const { sql } = setup(t)
  t.throws(() => sql.query("UPDATE meta SET value = 'x'"), /must not change the database/)
  t.throws(() => sql.query('DELETE FROM clients'), /must not change the database/)
  t.throws(() => sql.query("INSERT INTO meta (key, value) VALUES ('a', 'b')"), /must not change the database/)
  t.doesNotThrow(() => sql.query('SELECT count(*) FROM clients'))
})

t.test('loading a world signals one change, however many rows it writes', async (t) => {
  const { repositories, signals } = setup(t)
  const fixture = demoFixture()
  loadWorld(repositories, fixture, 'demo', new Date().toISOString())
  t.equal(signals.count, 1, 'one signal for the whole world')
  t.ok(repositories.clients.countClients() > 100, 'of many rows')
  t.equal(repositories.agencies.getAgency(AGENCY.main)?.agencyId, AGENCY.main)
  loadWorld(repositories, fixture, 'demo', new Date().toISOString())
  t.equal(signals.count, 2, 'and one for the next')
})

t.test('a log command alone signals nothing; with a command in the same transaction, one signal', async (t) => {
  const { db, sql, signals } = setup(t)
  const log = sql.logCommand<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)')
  const write = sql.command<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)')
  log.run('log-1', 'x')
  sql.transaction(() => log.run('log-2', 'x'))
  t.equal(signals.count, 0, 'only logs were written: nothing any answer is derived from changed')
  t.equal(db.prepare("SELECT count(*) FROM meta WHERE key LIKE 'log-%'").pluck().get(), 2, 'but they were written')
  sql.transaction(() => {
    log.run('log-3', 'x')
    write.run('data', 'x')
  })
  t.equal(signals.count, 1, 'a command in the transaction signals its commit')
  sql.transaction(() => log.run('log-4', 'x'))
  t.equal(signals.count, 1, 'the next log-only transaction signals nothing again')
})

t.test('a commit names the tables its commands wrote, or any table when the SQL does not say', async (t) => {
  t.equal(writtenTable('INSERT INTO writes (a) VALUES (?)'), 'writes')
  t.equal(writtenTable('insert or ignore into main.policies (a) values (?)'), 'policies')
  t.equal(writtenTable('UPDATE clients SET details = ? WHERE agency_id = ?'), 'clients')
  t.equal(writtenTable('  DELETE FROM Subscriptions WHERE client_id = ?'), 'subscriptions')
  t.equal(writtenTable('INSERT INTO temp.staged_clients SELECT 1'), ANY_TABLE, 'another schema')
  t.equal(writtenTable('WITH x AS (SELECT 1) DELETE FROM agencies'), ANY_TABLE, 'a statement that does not begin with its write')
  const { sql } = setup(t)
  const tables: string[][] = []
  sql.onCommit((c) => tables.push([...c.tables].sort()))
  sql.transaction(() => {
    sql.command<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)').run('a', '1')
    sql.command<[string]>('UPDATE meta SET value = ? WHERE key = \'a\'').run('2')
  })
  sql.command<[string]>('DELETE FROM meta WHERE key = ?').run('a')
  t.same(tables, [['meta'], ['meta']])
})

t.test('works run together share one commit; each that throws undoes its own writes only', async (t) => {
  const { db, sql, signals } = setup(t)
  const insert = sql.command<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)')
  const outcomes = sql.together([
    () => { insert.run('first', '1'); return 'one' },
    // a work that writes and then fails, outside any transaction of its own
    () => { insert.run('undone', '1'); throw new Error('refused') },
    () => { insert.run('last', '1'); return 'three' }
  ])
  t.same(outcomes.map((o) => ('value' in o ? o.value : (o.error as Error).message)), ['one', 'refused', 'three'])
  t.equal(signals.count, 1, 'one commit')
  t.same(db.prepare("SELECT key FROM meta WHERE key IN ('first', 'undone', 'last') ORDER BY key").pluck().all(), ['first', 'last'])
})

t.test('works run together: when SQLite ends the transaction, none of them is applied and it throws', async (t) => {
  const { db, sql, signals } = setup(t)
  const insert = sql.command<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)')
  let ranAfter = false
  t.throws(() => sql.together([
    () => insert.run('before', '1'),
    // as an I/O error or a full disk does: SQLite rolls the whole transaction back
    () => { db.exec('ROLLBACK'); throw new Error('disk full') },
    () => { ranAfter = true; insert.run('after', '1') }
  ]), /disk full/)
  t.notOk(ranAfter, 'the works after it do not run')
  t.equal(signals.count, 0)
  t.notOk(db.inTransaction)
  t.same(db.prepare("SELECT key FROM meta WHERE key IN ('before', 'after')").pluck().all(), [], 'nothing applied')
})
