import t, { type Test } from 'tap'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { closeDatabase, openDatabase, type Db } from '../../src/db/database.js'
import { checkpointAside, RESTART_FRAMES } from '../../src/db/checkpoints.js'
import { ROOT } from '../../src/config.js'
import { AGENCY, DEMO, build } from '../helpers/app.js'

const migrationsDir = join(ROOT, 'migrations')
/** The compiled thread (`npm run build`), as the app finds it when it runs from source. */
const WORKER = new URL(`file://${join(ROOT, 'dist', 'src', 'db', 'checkpoint-worker.js')}`)
const MiB = 1024 * 1024

function fileDb (t: Test): Db {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-ckpt-'))
  const db = openDatabase({ file: join(dir, 'x.db'), migrationsDir })
  db.exec('CREATE TABLE pages (id INTEGER PRIMARY KEY, body BLOB NOT NULL)')
  t.teardown(() => {
    closeDatabase(db)
    rmSync(dir, { recursive: true, force: true })
  })
  return db
}

const walBytes = (db: Db) => statSync(`${db.name}-wal`, { throwIfNoEntry: false })?.size ?? 0

/** Commits of about a page each (a new row), yielding to the event loop every 20, until `bytes` went through the log; the log's largest size. */
async function write (db: Db, bytes: number): Promise<number> {
  // new rows, not rows rewritten: a copy of a few pages written again and again would catch up
  const insert = db.prepare('INSERT INTO pages (body) VALUES (?)')
  const commit = db.transaction((body: Buffer) => insert.run(body))
  let largest = 0
  for (let written = 0, n = 0; written < bytes; written += 4096, n++) {
    commit(randomBytes(3000))
    if (n % 20 === 0) {
      largest = Math.max(largest, walBytes(db))
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  return Math.max(largest, walBytes(db))
}

async function until (what: () => boolean, ms = 3000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (what()) return true
  return what()
}

t.test('a database that is hardly written never starts the thread, and SQLite copies as it always did', async (t) => {
  const db = fileDb(t)
  const checkpoints = checkpointAside(db, WORKER)
  t.teardown(() => checkpoints.stop())
  await write(db, 256 * 1024)
  await sleep(300)
  t.equal(checkpoints.aside, false)
  t.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000)
})

t.test('once the log grows the thread copies it, and writes that never pause keep the log bounded', async (t) => {
  const db = fileDb(t)
  const checkpoints = checkpointAside(db, WORKER)
  t.teardown(() => checkpoints.stop())
  await write(db, 3 * MiB)
  t.ok(await until(() => checkpoints.aside), 'the thread started')
  t.ok(await until(() => db.pragma('wal_autocheckpoint', { simple: true }) === 0), 'the writer no longer copies')
  // 400 MiB through the log as fast as one thread writes (several times what a server writes),
  // never pausing for more than a turn of the event loop: the thread's copies never catch up with
  // it, and a log that never started over would hold all of it (the writer copies the rest once
  // the log holds RESTART_FRAMES)
  const largest = await write(db, 400 * MiB)
  t.ok(largest < 300 * MiB, `the log stayed under 300 MiB (largest ${(largest / MiB).toFixed(1)} MiB; it starts over past ${RESTART_FRAMES} frames)`)
  const rows = db.prepare('SELECT count(*) FROM pages').pluck().get() as number
  await checkpoints.stop()
  closeDatabase(db)
  t.notOk(existsSync(`${db.name}-wal`), 'the writer closed last: the log was copied and removed')
  const again = openDatabase({ file: db.name, migrationsDir })
  t.teardown(() => closeDatabase(again))
  t.equal(again.prepare('SELECT count(*) FROM pages').pluck().get(), rows, 'every commit is in the database file')
  t.equal(again.pragma('integrity_check', { simple: true }), 'ok')
})

t.test('a thread that cannot run gives the copies back to SQLite, and says why', async (t) => {
  const db = fileDb(t)
  const reasons: string[] = []
  const checkpoints = checkpointAside(db, new URL('file:///nowhere/checkpoint-worker.js'), { failed: (reason) => reasons.push(reason) })
  t.teardown(() => checkpoints.stop())
  await write(db, 3 * MiB)
  t.ok(await until(() => reasons.length > 0), 'the failure was told')
  t.match(reasons[0], /checkpoint thread/)
  t.equal(checkpoints.aside, false)
  t.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000, "SQLite's own rule is back")
})

t.test('a database in memory has no log to copy', async (t) => {
  const db = openDatabase({ file: ':memory:', migrationsDir })
  t.teardown(() => closeDatabase(db))
  const checkpoints = checkpointAside(db, WORKER)
  t.equal(checkpoints.aside, false)
  await checkpoints.stop()
})

t.test('the sandbox over a file database copies its log aside and closes it whole', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-ckpt-app-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'sandbox.db')
  const app = await build(t, { config: { db: file } })
  const lines: string[] = []
  for (const level of ['info', 'warn'] as const) {
    const log = app.log[level].bind(app.log)
    app.log[level] = ((...args: unknown[]) => { lines.push(`${level}: ${String(args[0])}`); return (log as (...a: unknown[]) => void)(...args) }) as typeof app.log.info
  }
  const refIds = Array.from({ length: 1500 }, () => randomUUID())
  for (const [i, refId] of refIds.entries()) {
    const res = await app.inject({
      method: 'POST',
      url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`,
      headers: { authorization: DEMO, 'content-type': 'application/json' },
      payload: { refId, ts: '2026-11-20T10:00:00Z', channel: 29, note: 'Called' }
    })
    if (res.statusCode !== 200) t.fail(`note ${i}: ${res.statusCode} ${res.body}`)
  }
  t.ok(await until(() => lines.some((l) => /^info: .*on a thread of its own/.test(l))), 'the log is copied aside')
  await app.close()
  t.notOk(existsSync(`${file}-wal`), 'closed whole: the thread closed first, the log was copied and removed')
  t.same(lines.filter((l) => l.startsWith('warn: ') && /log is copied/.test(l)), [], 'no checkpoint failure')
  const db = openDatabase({ file, migrationsDir })
  t.teardown(() => closeDatabase(db))
  t.equal(db.prepare('SELECT count(*) FROM writes WHERE ref_id IN (SELECT value FROM json_each(?))').pluck().get(JSON.stringify(refIds)), refIds.length, 'every note is in the database file')
})
