import type { Db } from '../../db/database.js'
import type { UnitOfWork } from '../../db/index.js'
import type { ReadModelOptions } from '../../read-model/index.js'
import type { Clock } from '../clock.js'
import type { ReportRunner } from '../examiner/report-runner.js'
import type { createSimulator } from '../simulator.js'
import type { WorldStart } from './starts.js'
import type { World } from './world.js'
import type { WorldData } from './world-data.js'

/** What a World is made of, and what is told of one (world.ts re-exports them). */

export interface WorldOptions {
  id: string
  name: string
  /** Opens the world's control routes besides the sandbox's control token (none for the default world). */
  token?: string
  /** The key its token is kept under, when the token itself is not known here (a world loaded from hosted mode's catalogue). */
  tokenKey?: string
  /** The tenant that created the world and alone controls it besides the sandbox's control token (none: the administrator's). */
  tenantId?: string
  db: Db
  start: WorldStart
  /**
   * Where the world's examiner sessions are kept: the process's own database, by world id (absent:
   * the world's own database, which is the process's: the default world).
   */
  records?: UnitOfWork
  clock?: Clock
  journalSize: number
  journalBytes: number
  readModel?: ReadModelOptions
  /** Idle time after which the world is deleted; 0 keeps it. */
  ttlMs: number
  /** When it was created and last used, when that was before now (a world loaded from hosted mode's catalogue). */
  createdAtMs?: number
  lastUsedMs?: number
  /** Real time (ms), for idleness: a world's own clock may stand still or run in another year. */
  realNow?: () => number
  /** Loads the activity simulator's generator on first use (it is large, and most worlds never need it). */
  loadFaker: Parameters<typeof createSimulator>[2]
  /** Where examiner reports are computed (one worker for every world). */
  reports: ReportRunner
  /** Bytes the world's data may take (absent: unbounded, the default world outside hosted mode). */
  maxBytes?: number
  /**
   * True: each integration a load brings in gets a secret of the world's own with its Client Id
   * (world-ids.ts ownSecret); false or absent: it keeps the secret it came with (the default world;
   * a world created with `secrets: "fixture"`).
   */
  ownSecrets?: boolean
  /** Its requests in progress at once (request-turns.ts; 0: unbounded). */
  requestsInProgress?: number
  /** Where growth is counted against the world's bound and the process's (the registry). */
  account?: ByteAccount
  /** The tenant of this id, as reports name it (the registry's). */
  tenantOf?: (tenantId: string) => { id: string, name: string } | undefined
}

/**
 * What every instance knows of a world, whether it holds the world or not (hosted mode: the
 * catalogue's row); a World is one.
 */
export interface KnownWorld {
  readonly id: string
  readonly name: string
  readonly tenantId: string | undefined
  readonly tokenKey: string | undefined
  readonly source: string
  readonly ttlMs: number
  readonly createdAtMs: number
  readonly lastUsedMs: number
  readonly expiresAtMs: number | undefined
  /** Bytes its data may take (undefined: unbounded). */
  readonly maxBytes: number | undefined
  /** True when its integrations have secrets of the world's own. */
  readonly ownSecrets: boolean
}

/** A world as GET /_sandbox/worlds lists it: what it is, and what its data and instruments hold. */
export interface WorldListing {
  world: KnownWorld
  data: WorldDataFacts
  journal: number
  faults: number
}

/** Counts what worlds hold against their bounds and the process's (WorldRegistry). */
export interface ByteAccount {
  /** Throws a 507 unless the world may hold `bytes` instead of what it holds now. */
  admit(world: World, bytes: number): void
}

/** What a world's data holds, as GET /_sandbox/worlds tells it. */
export interface WorldDataFacts {
  bytes: number
  integrations: string[]
  counts: ReturnType<WorldData['counts']>
}
