import type { Catalogue, CatalogueChange, Heads, WorldRow } from '../../db/postgres/catalogue.js'
import { FaultCounts } from '../../db/postgres/fault-counts.js'
import type { WorldLog } from '../../db/postgres/world-log.js'
import { openEmptySchema, type Db } from '../../db/database.js'
import { storageUnreachable, tenantQuotaReached, tooManyTenants, type ApiError } from '../../errors.js'
import type { FreshHeads } from './fresh-heads.js'
import type { WorldRegistry } from './registry.js'
import type { Leases } from '../../db/postgres/leases.js'
import type { SharedJournals } from './shared-journals.js'
import { WorldReplica } from './replica.js'
import { SharedStarts } from './shared-starts.js'
import { openSnapshot, pagesOf } from './starts.js'
import { MAX_TENANTS, type SharedCatalogue, type Tenant } from './tenants.js'
import type { World, WorldDataFacts } from './world.js'

/**
 * Hosted mode's worlds and tenants (db/postgres/catalogue.ts): every instance knows every world
 * created, each a replica of its log (replica.ts), and every tenant. A change (a world created or
 * deleted, a tenant) is made in PostgreSQL first, under the catalogue's lock, where the bounds
 * are counted (worlds at once, a tenant's quota, tenants), then applied here; another instance
 * applies it before it answers its next request, as the catalogue's version tells it to reload.
 * A world's idleness is decided in PostgreSQL too: each instance writes the latest use it saw,
 * and the worlds idle past their time to live there are deleted for all.
 *
 * An instance holds a copy of a created world's data only while it is used there: a world created
 * elsewhere is loaded from its log's latest snapshot by its first request here, and a copy no
 * request used for `copyIdleMs` is dropped for an empty stand-in (not while its real-time
 * simulator runs). Starts stay in the catalogue, read when a copy is loaded or a reset needs one
 * (shared-starts.ts keeps the latest few).
 */

export interface HostedWorldsOptions {
  migrationsDir: string
  /** Where the instances agree which of them runs each world's real-time simulator. */
  leases?: Leases
  /** The request journals of every instance, read as one. */
  journals?: SharedJournals
  realNow?: () => number
  /** How often last uses are written, expired worlds deleted and idle copies dropped. */
  sweepMs?: number
  /** Idle time after which this instance drops its copy of a created world's data (0: kept). */
  copyIdleMs?: number
}

/** What each world's data held when this instance last had a copy of it, at the log's entry `seq`. */
interface FactsAt {
  seq: number
  facts: WorldDataFacts
}

export class HostedWorlds implements SharedCatalogue {
  /** The replica of each world this instance holds, by world id (the default world's among them). */
  private readonly replicas = new Map<string, WorldReplica>()
  /** The catalogue's version this instance holds. */
  private version = -1
  /** The latest use of each world written to the catalogue by this instance. */
  private readonly usesWritten = new Map<string, number>()
  /** One catalogue change or reload at a time on this instance. */
  private busy: Promise<void> = Promise.resolve()
  private readonly sweeper: NodeJS.Timeout
  /** The sweep on its way, and the earliest time a world held here may expire (uses elsewhere may put it later). */
  private sweeping: Promise<void> | undefined
  private nextExpiryMs = Infinity
  private readonly realNow: () => number
  /** When a request of this instance last used each world's copy. */
  private readonly usedHere = new Map<string, number>()
  /** What each world's data held when its copy here was dropped: still true while its log has not moved. */
  private readonly factsWhenDropped = new Map<string, FactsAt>()
  /** Every world's start, read from the catalogue when a copy is loaded or a reset needs it. */
  private readonly starts: SharedStarts
  /** The stand-in for the data of a world this instance holds no copy of: an empty database of this build's schema. */
  private readonly emptyPages: Buffer

  constructor (
    private readonly registry: WorldRegistry,
    private readonly catalogue: Catalogue,
    private readonly log: WorldLog,
    readonly heads: FreshHeads,
    defaultReplica: WorldReplica,
    private readonly options: HostedWorldsOptions
  ) {
    this.realNow = options.realNow ?? Date.now
    this.starts = new SharedStarts(catalogue)
    const empty = openEmptySchema(options.migrationsDir)
    this.emptyPages = pagesOf(empty)
    empty.close()
    this.replicas.set(defaultReplica.world.id, defaultReplica)
    defaultReplica.world.faults.share(new FaultCounts(log.pool, defaultReplica.world.id))
    options.journals?.add(registry.default.id, registry.default.journal, (o) => registry.default.shareSessions(o))
    this.sweeper = setInterval(() => { void this.sweep().catch(() => undefined) }, options.sweepMs ?? 1000)
    this.sweeper.unref()
  }

  replicaOf (world: World): WorldReplica | undefined {
    return this.replicas.get(world.id)
  }

  /** The heads a request must be caught up to; the catalogue reloaded first when it is behind them. 503 when PostgreSQL cannot be reached. */
  async fresh (): Promise<Heads> {
    try {
      const heads = await this.heads.get()
      if (heads.catalogue > this.version) await this.exclusive(async () => { if (heads.catalogue > this.version) await this.reload() })
      // an expired world never answers: past the earliest expiry, the catalogue decides first
      if (this.realNow() >= this.nextExpiryMs) await this.sweep()
      return heads
    } catch (e) {
      throw storageUnreachable(e)
    }
  }

  /** The heads, when `fresh` would answer them at once: trusted, the catalogue current, no world due to expire. */
  freshNow (): Heads | undefined {
    const heads = this.heads.now()
    return heads === undefined || heads.catalogue > this.version || this.realNow() >= this.nextExpiryMs ? undefined : heads
  }

  /** A world's commit or a catalogue change announced on the listening connection. */
  announced (worldId: string | undefined, seq: number): void {
    this.heads.announce(worldId, seq)
    if (worldId === undefined) {
      if (seq > this.version) void this.fresh().catch(() => undefined)
    } else {
      const replica = this.replicas.get(worldId)
      if (replica !== undefined) void replica.announced(seq)
    }
  }

  async prepareCopy (world: World): Promise<void> {
    const heads = await this.fresh()
    await this.replicas.get(world.id)?.caughtUp(heads.worlds.get(world.id) ?? 0)
  }

  /** Marks the world's copy in use by a request until the release (loaded by its catch-up, never dropped meanwhile). */
  use (world: World): () => void {
    // the default world's copy is never dropped
    if (world === this.registry.default) return keptAlways
    const release = this.replicas.get(world.id)?.use()
    return () => {
      release?.()
      this.usedHere.set(world.id, this.realNow())
    }
  }

  startOf (worldId: string): () => Promise<Buffer> {
    return this.starts.of(worldId)
  }

  /**
   * What each world's data holds, on its latest data. A world this instance holds no copy of is
   * loaded for it, one at a time, and dropped again, unless its log has not moved since its copy
   * here was dropped (what it held then is still true).
   */
  async dataFacts (worlds: World[]): Promise<WorldDataFacts[]> {
    const heads = await this.fresh()
    const facts: WorldDataFacts[] = []
    for (const world of worlds) {
      const replica = this.replicas.get(world.id)
      const head = heads.worlds.get(world.id) ?? 0
      const known = this.factsWhenDropped.get(world.id)
      if (replica !== undefined && !replica.holdsCopy && known?.seq === head) {
        facts.push({ ...known.facts, bytes: world.bytes() })
        continue
      }
      const loaded = replica !== undefined && !replica.holdsCopy
      const release = replica?.use()
      let read: WorldDataFacts
      try {
        await replica?.caughtUp(head)
        read = world.dataFacts()
      } finally {
        release?.()
      }
      // loaded for the listing alone: dropped again, and what it takes here is the stand-in's
      if (loaded) await this.dropCopy(world, replica)
      facts.push({ ...read, bytes: world.bytes() })
    }
    return facts
  }

  async addWorld (world: World, start: Buffer, owner: Tenant | undefined, full: () => ApiError, register: () => void): Promise<void> {
    const row: WorldRow = {
      id: world.id,
      name: world.name,
      tenantId: owner?.id,
      tokenKey: world.tokenKey ?? '',
      source: world.source,
      ttlMs: world.ttlMs,
      createdAtMs: world.createdAtMs,
      lastUsedMs: world.lastUsedMs,
      maxBytes: world.maxBytes,
      ownSecrets: world.ownSecrets
    }
    await this.change(async (change) => {
      if (await change.countWorlds() >= this.registry.limits.maxWorlds) throw full()
      if (owner !== undefined && await change.countWorlds(owner.id) >= owner.maxWorlds) throw tenantQuotaReached(owner.id, owner.maxWorlds)
      // its data is its start as a world opens it (with its own Client Ids), which every instance does alike
      await change.addWorld(row, start, undefined)
      return true
    }, () => {
      register()
      this.held(world, 1)
    })
  }

  async deleteWorld (id: string, apply: () => void): Promise<boolean> {
    let found = false
    await this.change(async (change) => {
      found = (await change.deleteWorlds([id])).length > 0
      return found
    }, () => this.forget([id], apply))
    return found
  }

  async addTenant (tenant: Tenant, register: () => void): Promise<void> {
    await this.change(async (change) => {
      if (await change.countTenants() >= MAX_TENANTS) throw tooManyTenants(MAX_TENANTS)
      await change.addTenant({ id: tenant.id, name: tenant.name, maxWorlds: tenant.maxWorlds, createdAtMs: tenant.createdAtMs, tokenKey: tenant.tokenKey })
      return true
    }, register)
  }

  async deleteTenant (id: string, apply: () => void): Promise<boolean> {
    let found = false
    await this.change(async (change) => {
      found = await change.deleteTenant(id)
      return found
    }, () => {
      const worlds = this.registry.ownedBy(id).map((w) => w.id)
      this.forget(worlds, apply)
    })
    return found
  }

  /** Stops writing uses and deleting expired worlds (at shutdown). */
  close (): void {
    clearInterval(this.sweeper)
  }

  /** Reads the catalogue whole and makes this instance's worlds and tenants the same. */
  private async reload (): Promise<void> {
    const rows = await this.catalogue.load()
    const listed = new Set(rows.worlds.map((w) => w.id))
    const gone = this.registry.list().filter((w) => !listed.has(w.id)).map((w) => w.id)
    this.forget(gone, () => { for (const id of gone) this.registry.delete(id) })
    this.registry.tenants.adopt(rows.tenants)
    for (const row of rows.worlds) {
      const held = this.registry.get(row.id)
      if (held !== undefined) held.lastUsedMs = Math.max(held.lastUsedMs, row.lastUsedMs)
      else await this.load(row)
    }
    this.version = rows.version
  }

  /**
   * Makes this instance a replica of a world created elsewhere, without a copy of its data yet: its
   * first request here loads it (the log's latest snapshot and the commits since, with their effects).
   */
  private load (row: WorldRow): void {
    const world = this.registry.adopt({ ...row, start: this.startOf(row.id), db: this.standIn() })
    this.held(world, 0)
  }

  private standIn (): Db {
    return openSnapshot(this.emptyPages)
  }

  /** Drops this instance's copy of the world's data, keeping what it held for listings. */
  private async dropCopy (world: World, replica: WorldReplica): Promise<void> {
    const held = { seq: replica.seq, facts: world.dataFacts() }
    if (await replica.dropCopy(() => this.standIn())) this.factsWhenDropped.set(world.id, held)
  }

  /** Drops the copies of created worlds no request of this instance used for `copyIdleMs` (kept: those a real-time simulator runs on). */
  private async dropIdleCopies (): Promise<void> {
    const idleMs = this.options.copyIdleMs ?? 0
    if (idleMs <= 0) return
    const now = this.realNow()
    for (const [id, replica] of this.replicas) {
      const world = this.registry.get(id)
      if (world === undefined || world === this.registry.default || !replica.holdsCopy || !replica.unused) continue
      if (now - (this.usedHere.get(id) ?? world.createdAtMs) < idleMs || runsInRealTime(world)) continue
      this.usedHere.delete(id)
      await this.dropCopy(world, replica)
    }
  }

  /**
   * A created world is held here from now on, its replica at the log's entry `applied`, its fault
   * rules counted in PostgreSQL; its use as written, and its expiry among those the next sweep waits for.
   */
  private held (world: World, applied: number): void {
    this.replicas.set(world.id, new WorldReplica(world, this.log, { migrationsDir: this.options.migrationsDir, readStart: this.starts.of(world.id), leases: this.options.leases }, applied))
    world.faults.share(new FaultCounts(this.log.pool, world.id))
    this.options.journals?.add(world.id, world.journal, (o) => world.shareSessions(o))
    this.usesWritten.set(world.id, world.lastUsedMs)
    this.nextExpiryMs = Math.min(this.nextExpiryMs, world.expiresAtMs ?? Infinity)
  }

  private forget (ids: string[], apply: () => void): void {
    apply()
    for (const id of ids) {
      this.replicas.delete(id)
      this.options.journals?.remove(id)
      this.usesWritten.delete(id)
      this.usedHere.delete(id)
      this.factsWhenDropped.delete(id)
      this.starts.forget(id)
    }
  }

  /**
   * One change of the catalogue, made in PostgreSQL and then here (`apply`), in one turn of this
   * instance; when nothing else changed the catalogue since this instance last read it, this
   * instance now holds the new version (else its next request reloads it).
   */
  private async change (run: (change: CatalogueChange) => Promise<boolean>, apply: () => void): Promise<void> {
    await this.exclusive(async () => {
      let outcome
      try {
        outcome = await this.catalogue.change(async (change) => ({ changed: await run(change), result: undefined }))
      } catch (e) {
        throw storageUnreachable(e)
      }
      apply()
      if (outcome.before === this.version) this.version = outcome.after
    })
  }

  /**
   * Writes the uses seen here since the last sweep, learns those written by other instances, and
   * deletes (for every instance) the worlds idle past their time to live. One sweep at a time.
   */
  private async sweep (): Promise<void> {
    this.sweeping ??= this.sweepOnce().finally(() => { this.sweeping = undefined })
    await this.sweeping
  }

  private async sweepOnce (): Promise<void> {
    const uses = new Map<string, number>()
    for (const world of this.registry.list()) {
      if (world.lastUsedMs > (this.usesWritten.get(world.id) ?? 0)) uses.set(world.id, world.lastUsedMs)
    }
    await this.catalogue.touch(uses)
    for (const [id, ms] of uses) this.usesWritten.set(id, ms)
    await this.dropIdleCopies()
    // a world's use here is at most its latest anywhere: before the earliest expiry seen here, none
    // of the worlds held here has expired (and those created elsewhere since, their creators sweep)
    if (this.realNow() < this.nextExpiryMs) return
    let expired: string[] = []
    await this.change(async (change) => {
      const now = this.realNow()
      const idle: string[] = []
      for (const { id, lastUsedMs, ttlMs } of await change.expiringWorlds()) {
        const held = this.registry.get(id)
        if (held !== undefined) held.lastUsedMs = Math.max(held.lastUsedMs, lastUsedMs)
        if (Math.max(lastUsedMs, held?.lastUsedMs ?? 0) + ttlMs <= now) idle.push(id)
      }
      expired = await change.deleteWorlds(idle)
      return expired.length > 0
    }, () => this.forget(expired, () => { for (const id of expired) this.registry.delete(id) }))
    this.nextExpiryMs = Math.min(Infinity, ...this.registry.list().map((world) => world.expiresAtMs ?? Infinity))
  }

  private async exclusive (fn: () => Promise<void>): Promise<void> {
    let release!: () => void
    const previous = this.busy
    this.busy = new Promise<void>((resolve) => { release = resolve })
    await previous
    try {
      await fn()
    } finally {
      release()
    }
  }
}

const keptAlways = () => undefined

/** A real-time simulator changes the world on its own timer: the copy it runs on is kept (a clock-time one waits for requests). */
function runsInRealTime (world: World): boolean {
  const { settings } = world.simulator.state()
  return settings !== null && settings.clockTime !== true
}
