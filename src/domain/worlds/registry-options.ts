import type { ReadModelOptions } from '../../read-model/index.js'
import type { FixtureRunner } from './fixture-runner.js'
import type { StartFixture } from './starts.js'
import type { KnownWorld, World, WorldOptions } from './world.js'

/** What a WorldRegistry is made with, and what it answers a creator (registry.ts re-exports them). */

/** Bounds and defaults of the worlds a process holds besides the default one. */
export interface WorldLimits {
  /** Worlds at once (the default one not counted). */
  maxWorlds: number
  /** Bytes their databases and snapshots may take together (in hosted mode, the default world's too). */
  maxBytes: number
  /** Each created world's bound unless it asks for another (in hosted mode, the default world's too). */
  worldMaxBytes: number
  /** Idle seconds before a world is deleted when its creator says nothing (0: kept). */
  defaultTtlSeconds: number
  /** Each world's request journal: entries and bytes. */
  journalSize: number
  journalBytes: number
  /** Each world's read model: what it may keep in memory. */
  readModel: ReadModelOptions
  /** Each world's requests in progress at once (0: unbounded). */
  requestsInProgress?: number
}

export interface RegistryOptions {
  limits: WorldLimits
  migrationsDir: string
  startFixture: StartFixture
  loadFaker: WorldOptions['loadFaker']
  reports: WorldOptions['reports']
  /** Where large fixture bodies are read (a worker process). */
  fixtures: FixtureRunner
  realNow?: () => number
  /** What this start did with the default world's database, for the start-up banner. */
  startUp?: StartUp
}

export interface StartUp {
  /** True when this start seeded the database (false: existing data was kept). */
  seededNow: boolean
  /** Set when the kept data was seeded from another fixture than the start-up one: what to tell the user. */
  fixtureMismatch: string | undefined
}

/** A world just created, as its creator is told of it (its token given once). */
export interface CreatedWorld {
  world: KnownWorld
  integrations: ReturnType<World['integrations']>
  token: string
}
