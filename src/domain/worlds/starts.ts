import Database from 'better-sqlite3'
import { webcrypto } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { closeDatabase, openDatabase, PAGE_CACHE_KIB, type Db } from '../../db/database.js'
import { createRepositories, UnitOfWork } from '../../db/index.js'
import type { Fixture } from '../../fixture/schema.js'
import type { FixtureStamp } from '../../fixture/stamp.js'
import { loadWorld, type PreparedWorld } from '../world.js'
import { loadWorldInTurns, type ReplaceHooks } from '../world-load.js'
import type { Clock } from '../clock.js'
import type { WorldData } from './world-data.js'

/**
 * Where a world returns to when it is reset. The default world loads its start-up fixture into its
 * own database (a file, usually), in place. A world in memory keeps a snapshot of its database as
 * it began (SQLite's serialized form) and copies it anew: about a millisecond for a demo-sized
 * world, where loading the fixture again takes twenty.
 */

/**
 * A world's data to load, and where it came from: a fixture document, the rows prepared from one
 * (away from the event loop), or the snapshot of a database holding one (built away from the
 * event loop, for a world in memory: see WorldStart.swaps).
 */
export type WorldContent =
  | { fixture: Fixture | PreparedWorld, source: string, digest?: string }
  | { snapshot: Buffer, source: string, digest?: string }

/**
 * How a world's data returns to a starting point. `restore` loads the world's own start (or the
 * fixture given) and answers the database to use from then on: the same one when it loaded the
 * data in place (the default world's file), a new one when it made a fresh copy (a world in
 * memory, whose start is a snapshot copied in about a millisecond).
 */
export interface WorldStart {
  restore(data: WorldData, clock: Clock, fixture?: WorldContent): Promise<Db>
  /** What the world's own start is, for people: a fixture file, `(given at start)`, `fork of <id>`. */
  readonly source: string
  /**
   * The SHA-256 (hex) of what the data was loaded from when it is the start: the fixture that
   * seeded the database (recorded in it), or the snapshot a world in memory began as. Computed
   * once, away from the event loop.
   */
  digest(data: WorldData): Promise<string>
  /**
   * True when the world's database holds its data alone and can be swapped whole for a snapshot
   * (a world in memory); false when it also holds what must outlive a reset (the default world's
   * file keeps every world's examiner sessions), so a fixture is loaded into it in place.
   */
  readonly swaps: boolean
}

/** The start-up fixture, read (and validated) on first use, with the stamp of the file it came from. */
export type StartFixture = () => Promise<{ fixture: Fixture, stamp?: FixtureStamp }>

/** Tables of a world's data that refer to others (checked after a replacement: see replacingOn). */
const REFERRING_TABLES = ['subscriptions', 'offices', 'users', 'clients', 'policies', 'writes', 'attachment_content'] as const

/** Folds a database file's write-ahead log into it, elsewhere than on the event loop (the fixture worker). */
export type Checkpoint = (file: string) => Promise<void>

/**
 * Clients above which a replacement's write-ahead log is folded into the file by the worker (an 8
 * MiB fixture has 2,400; the demo 340): clients loaded, or removed (the log holds the pages of
 * both; a reset from an 8 MiB fixture back to the demo folded 20 MB into the file on the event loop).
 */
const CHECKPOINT_ELSEWHERE_CLIENTS = 1_000
/** SQLite's own bound on the write-ahead log, in pages, at which a commit folds the log into the file. */
const AUTOCHECKPOINT_PAGES = 1000
/** Checkpoints of a database asked for and not done yet; its commits fold the log in only when there are none. */
const checkpointsPending = new WeakMap<Db, number>()

/**
 * The transaction that replaces a world's data in place, with foreign keys unenforced while it
 * runs: emptying a table that others refer to is then one step, not a check and a delete per row
 * (an 8 MiB fixture's 2,400 clients: 1 to 5 ms instead of 20 to 30 on the event loop). What it
 * inserted is checked before it commits; a reference that leads nowhere rolls it back. For a
 * database file, its commit does not fold the write-ahead log into the file (20 to 30 ms more for
 * the same fixture): `checkpoint` does, on another connection, and commits do again after it.
 */
function replacingOn (db: Db, checkpoint?: Checkpoint): ReplaceHooks {
  const elsewhere = checkpoint !== undefined && !db.memory
  return {
    around (replace) {
      // the pragmas are ignored inside a transaction: they are set on the connection around it
      db.pragma('foreign_keys = OFF')
      if (elsewhere) {
        checkpointsPending.set(db, (checkpointsPending.get(db) ?? 0) + 1)
        db.pragma('wal_autocheckpoint = 0')
      }
      try {
        replace()
      } finally {
        db.pragma('foreign_keys = ON')
        if (elsewhere) {
          void checkpoint(db.name).catch(() => {}).finally(() => {
            const pending = (checkpointsPending.get(db) ?? 1) - 1
            checkpointsPending.set(db, pending)
            if (pending === 0 && db.open) db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
          })
        }
      }
    },
    check () {
      for (const table of REFERRING_TABLES) {
        const broken = db.pragma(`foreign_key_check(${table})`) as Array<{ table: string, parent: string }>
        if (broken.length > 0) throw new Error(`the world's data refers from ${table} to a missing row of ${broken[0].parent}`)
      }
    }
  }
}

/** A world's start loaded into its own database: the default world. */
export function inPlaceStart (startFixture: StartFixture, source: string, checkpoint?: Checkpoint): WorldStart {
  return {
    source,
    swaps: false,
    // the database records what seeded it (a reset to a posted fixture records that fixture's)
    async digest (data) {
      return data.repos.meta.get('seeded_sha256') || (await startFixture()).stamp?.sha256 || 'unknown'
    },
    async restore (data, clock, next) {
      if (next !== undefined && 'snapshot' in next) throw new Error('the default world loads a fixture in place, never a snapshot')
      const { fixture, stamp } = next !== undefined
        ? { fixture: next.fixture, stamp: next.digest === undefined ? undefined : { sha256: next.digest, quick: '' } }
        : await startFixture()
      // only a large replacement's log is worth a worker (one started for each reset under traffic cost more than it saved)
      const clients = Math.max(fixture.agencies.reduce((n, a) => n + a.clients.length, 0), data.repos.clients.countClients())
      const hooks = replacingOn(data.db, clients > CHECKPOINT_ELSEWHERE_CLIENTS ? checkpoint : undefined)
      await loadWorldInTurns(data.repos, fixture, next?.source ?? source, clock.iso(), stamp, hooks)
      return data.db
    }
  }
}

/**
 * A world in memory: reset copies its snapshot; a reset to another fixture's snapshot opens a copy
 * of that (a fixture given as rows is loaded in place). The snapshot may be read when a reset
 * needs it (hosted mode keeps every world's start in PostgreSQL, not in each instance's memory).
 */
export function snapshotStart (snapshot: Buffer | (() => Promise<Buffer>), source: string): WorldStart {
  let digest: Promise<string> | undefined
  return {
    source,
    swaps: true,
    digest () {
      digest ??= (async () => await snapshotDigest(typeof snapshot === 'function' ? await snapshot() : snapshot))()
      // a failed read of the start (hosted mode) is tried again next time
      digest.catch(() => { digest = undefined })
      return digest
    },
    async restore (data, clock, next) {
      if (next === undefined) return openSnapshot(typeof snapshot === 'function' ? await snapshot() : snapshot)
      if ('snapshot' in next) return openSnapshot(next.snapshot)
      await loadWorldInTurns(data.repos, next.fixture, next.source, clock.iso())
      return data.db
    }
  }
}

/** SHA-256 (hex) of the bytes, hashed in libuv's thread pool (a large world's snapshot takes a second on the event loop). */
export async function sha256Hex (bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes
  return Buffer.from(await webcrypto.subtle.digest('SHA-256', data)).toString('hex')
}

/** Each snapshot's digest, hashed once however many worlds began as it (those made from the start-up fixture share one). */
const snapshotDigests = new WeakMap<Buffer, Promise<string>>()

function snapshotDigest (snapshot: Buffer): Promise<string> {
  let digest = snapshotDigests.get(snapshot)
  if (digest === undefined) snapshotDigests.set(snapshot, (digest = sha256Hex(snapshot)))
  return digest
}

/**
 * A database in memory with the snapshot's content (a copy: the snapshot stays as it is). Its page
 * cache is kept small, as the process's database's is (database.ts): every page is in memory
 * already, and SQLite's default here (16 MB a connection) held copies of them for every world.
 */
export function openSnapshot (snapshot: Buffer): Db {
  const db = new Database(snapshot)
  db.pragma('foreign_keys = ON')
  db.pragma(`cache_size = ${PAGE_CACHE_KIB}`)
  return db
}

/**
 * A database's content as a snapshot to copy worlds from: what every connection would read now,
 * committed pages in the write-ahead log included. A file in WAL mode says so in its header
 * (bytes 18 and 19), which a database in memory cannot open: the snapshot says rollback journal.
 */
export function snapshotOf (db: Db): Buffer {
  return asRollbackJournal(fileContent(db) ?? db.serialize())
}

/**
 * A database's content as a snapshot, read through its connection (committed pages in the
 * write-ahead log included) without folding the log into the file: SQLite copies the pages, 5 to
 * 18 ms for a database in memory of 100,000 clients (27 MB), several times that from a file.
 */
export function pagesOf (db: Db): Buffer {
  return asRollbackJournal(db.serialize())
}

function asRollbackJournal (snapshot: Buffer): Buffer {
  snapshot[18] = 1
  snapshot[19] = 1
  return snapshot
}

/**
 * A database file's content once its write-ahead log is folded into it: one read of the file
 * takes a fraction of SQLite's serialization, page by page (a 100,000-client world is 400 MB).
 * Undefined for a database in memory, or when the log could not be folded in whole.
 */
function fileContent (db: Db): Buffer | undefined {
  if (db.memory) return undefined
  const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number, log: number, checkpointed: number }>
  if (result !== undefined && (result.busy !== 0 || result.checkpointed < result.log)) return undefined
  return readFileSync(db.name)
}

/**
 * Folds a database file's write-ahead log into the file as far as no reader still needs it,
 * without waiting for readers or writers (PASSIVE), from a connection of its own.
 */
export function checkpointFile (file: string): void {
  const db = new Database(file, { fileMustExist: true, timeout: 5000 })
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } finally {
    db.close()
  }
}

/** The snapshot of a database holding exactly this fixture (a throw-away database in memory, migrated). */
export function snapshotOfFixture (fixture: Fixture | PreparedWorld, source: string, migrationsDir: string, nowIso: string): Buffer {
  const db = openDatabase({ file: ':memory:', migrationsDir })
  try {
    loadWorld(createRepositories(new UnitOfWork(db)), fixture, source, nowIso)
    return snapshotOf(db)
  } finally {
    closeDatabase(db)
  }
}
