import Database from 'better-sqlite3'
import { readFileSync } from 'node:fs'
import { closeDatabase, openDatabase, type Db } from '../../db/database.js'
import { createRepositories, UnitOfWork } from '../../db/index.js'
import type { Fixture } from '../../fixture/schema.js'
import type { FixtureStamp } from '../../fixture/stamp.js'
import { loadWorld, type PreparedWorld } from '../world.js'
import { loadWorldInTurns } from '../world-load.js'
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
  | { fixture: Fixture | PreparedWorld, source: string }
  | { snapshot: Buffer, source: string }

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
   * True when the world's database holds its data alone and can be swapped whole for a snapshot
   * (a world in memory); false when it also holds what must outlive a reset (the default world's
   * file keeps every world's examiner sessions), so a fixture is loaded into it in place.
   */
  readonly swaps: boolean
}

/** The start-up fixture, read (and validated) on first use, with the stamp of the file it came from. */
export type StartFixture = () => Promise<{ fixture: Fixture, stamp?: FixtureStamp }>

/** A world's start loaded into its own database: the default world. */
export function inPlaceStart (startFixture: StartFixture, source: string): WorldStart {
  return {
    source,
    swaps: false,
    async restore (data, clock, next) {
      if (next !== undefined && 'snapshot' in next) throw new Error('the default world loads a fixture in place, never a snapshot')
      if (next !== undefined) {
        await loadWorldInTurns(data.repos, next.fixture, next.source, clock.iso())
      } else {
        const { fixture, stamp } = await startFixture()
        await loadWorldInTurns(data.repos, fixture, source, clock.iso(), stamp)
      }
      return data.db
    }
  }
}

/**
 * A world in memory: reset copies its snapshot; a reset to another fixture's snapshot opens a copy
 * of that (a fixture given as rows is loaded in place).
 */
export function snapshotStart (snapshot: Buffer, source: string): WorldStart {
  return {
    source,
    swaps: true,
    async restore (data, clock, next) {
      if (next === undefined) return openSnapshot(snapshot)
      if ('snapshot' in next) return openSnapshot(next.snapshot)
      await loadWorldInTurns(data.repos, next.fixture, next.source, clock.iso())
      return data.db
    }
  }
}

/** A database in memory with the snapshot's content (a copy: the snapshot stays as it is). */
export function openSnapshot (snapshot: Buffer): Db {
  const db = new Database(snapshot)
  db.pragma('foreign_keys = ON')
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
