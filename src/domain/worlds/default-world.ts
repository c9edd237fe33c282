import { createHash } from 'node:crypto'
import type { Db } from '../../db/database.js'
import { createRepositories, UnitOfWork, type Repositories } from '../../db/index.js'
import type { Fixture } from '../../fixture/schema.js'
import type { FixtureStamp } from '../../fixture/stamp.js'
import type { ReadModelOptions } from '../../read-model/index.js'
import { forgetSessionsOutside } from '../../db/sessions.js'
import type { Clock } from '../clock.js'
import { inPlaceStart, type Checkpoint, type StartFixture } from './starts.js'
import { World, type WorldOptions } from './world.js'
import { DEFAULT_WORLD_ID } from './world-ids.js'

export interface DefaultWorldOptions {
  /** The process's database: the default world's data, and every world's examiner sessions. */
  db: Db
  /** Where examiner sessions are kept when not in `db` (hosted mode: the world's own, which its log keeps). */
  records?: UnitOfWork
  /** `by-owner`: hosted mode, where the world's first owner seeds it (worlds/ownership.ts), not the start. */
  seed?: 'now' | 'by-owner'
  /**
   * The start-up fixture: seeds an empty database and is what `reset` returns to. Loaded only
   * when needed, so a start over an existing database does not read it.
   */
  fixture: Fixture | (() => Promise<Fixture>)
  fixtureSource: string
  /**
   * Identifies the start-up fixture file's content, so the database remembers what seeded it and
   * a start over data seeded from another fixture can say so (absent: a fixture given in memory).
   */
  fixtureFile?: { quick(): string | undefined; stamp(): FixtureStamp }
  /** Seed from the start-up fixture even over existing data (`--reset-on-start`). */
  reseed?: boolean
  clock?: Clock
  journalSize: number
  journalBytes?: number
  readModel?: ReadModelOptions
  loadFaker: WorldOptions['loadFaker']
  reports: WorldOptions['reports']
  requestsInProgress?: number
  /** Folds the database file's write-ahead log into it after a reset, away from the event loop (absent: commits do). */
  checkpoint?: Checkpoint
}

export interface DefaultWorld {
  world: World
  /** The start-up fixture (read once, on first use), with the stamp of its file. */
  startFixture: StartFixture
  /** True when this start seeded the database (false: existing data was kept). */
  seededNow: boolean
  /** Set when the kept data was seeded from another fixture than the start-up one: what to tell the user. */
  fixtureMismatch: string | undefined
}

/**
 * The world `default`: the process's own database (a file, usually), seeded from the start-up
 * fixture when it is empty; it keeps its data across restarts, as the sandbox always has.
 */
export async function openDefaultWorld (options: DefaultWorldOptions): Promise<DefaultWorld> {
  const { db, fixture, fixtureSource, fixtureFile } = options
  let loaded: { fixture: Fixture, stamp?: FixtureStamp } | undefined
  const startFixture: StartFixture = async () => {
    if (loaded === undefined) {
      // stamped when the file is read, so that it describes the content loaded, not a later edit
      const stamp = fixtureFile?.stamp()
      const content = typeof fixture === 'function' ? await fixture() : fixture
      // a fixture given in memory is identified by its JSON text, as reports name the data (starts.ts)
      loaded = { fixture: content, stamp: stamp ?? { sha256: createHash('sha256').update(JSON.stringify(content)).digest('hex'), quick: '' } }
    }
    return loaded
  }
  const sql = new UnitOfWork(db)
  const meta = createRepositories(sql).meta
  const seeds = options.seed !== 'by-owner'
  const seededNow = seeds && (options.reseed === true || meta.get('seeded_at') === undefined)
  const fixtureMismatch = !seeds || seededNow || fixtureFile === undefined ? undefined : seededFromOtherFixture(meta, fixtureSource, fixtureFile)
  // Sessions of worlds in memory end with the process that held them.
  forgetSessionsOutside(sql, DEFAULT_WORLD_ID)
  const world = new World({
    id: DEFAULT_WORLD_ID,
    name: 'default',
    db,
    records: options.records,
    start: inPlaceStart(startFixture, fixtureSource, options.checkpoint),
    clock: options.clock,
    journalSize: options.journalSize,
    journalBytes: options.journalBytes ?? 16 * 1024 * 1024,
    readModel: options.readModel,
    ttlMs: 0,
    loadFaker: options.loadFaker,
    reports: options.reports,
    requestsInProgress: options.requestsInProgress
  })
  if (seededNow) await world.restoreData()
  return { world, startFixture, seededNow, fixtureMismatch }
}

/**
 * Compares what seeded the database with the start-up fixture file: undefined when they are the
 * same content (an untouched file is recognised by its size and time, without reading it), else
 * the warning to print. A database seeded before stamps were recorded, from the same path, adopts
 * the file's stamp.
 */
function seededFromOtherFixture (
  meta: Repositories['meta'],
  fixtureSource: string,
  fixtureFile: NonNullable<DefaultWorldOptions['fixtureFile']>
): string | undefined {
  const quick = fixtureFile.quick()
  if (quick !== undefined && quick === meta.get('seeded_quick')) return undefined
  const from = meta.get('seeded_from') ?? '(unknown)'
  const recorded = meta.get('seeded_sha256')
  const fix = 'The existing data is kept: start with --reset-on-start (SANDBOX_RESET_ON_START=true) or POST /_sandbox/reset to seed from the fixture.'
  let stamp: FixtureStamp
  try {
    stamp = fixtureFile.stamp()
  } catch (e) {
    return `the fixture ${fixtureSource} cannot be read (${(e as Error).message}); the database holds data seeded from ${from}. A reset will fail until the file is there.`
  }
  if (stamp.sha256 === recorded || (recorded === undefined && from === fixtureSource)) {
    meta.set('seeded_sha256', stamp.sha256)
    meta.set('seeded_quick', stamp.quick)
    return undefined
  }
  if (recorded === '' || recorded === undefined) {
    return `the database holds data from ${from}, not from the fixture ${fixtureSource}. ${fix}`
  }
  return `the database was seeded from ${from} (sha256 ${recorded.slice(0, 12)}…), but the fixture ${fixtureSource} has other content (sha256 ${stamp.sha256.slice(0, 12)}…). ${fix}`
}
