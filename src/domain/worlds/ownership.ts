import { performance } from 'node:perf_hooks'
import { openDatabase, openEmptySchema, type Db } from '../../db/database.js'
import { UnitOfWork } from '../../db/index.js'
import type { Owners } from '../../db/postgres/owners.js'
import { Fenced, type WorldLog } from '../../db/postgres/world-log.js'
import { insufficientStorage, worldUnavailable, type ApiError } from '../../errors.js'
import { OwnedWorld } from './owned-world.js'
import type { WorldRegistry } from './registry.js'
import { pagesOf, snapshotOf } from './starts.js'
import type { KnownWorld, World } from './world.js'
import { DEFAULT_WORLD_ID } from './world-ids.js'
import { adoptState, factsOf, replayLog, stateOf } from './world-state.js'

/**
 * The worlds this instance owns (hosted mode), and where the others are. A request for a world
 * nobody holds claims it (owners.ts) and waits while it is loaded from its log; a world held
 * elsewhere is forwarded there (plugins/owner-routing.ts). Every lease held is renewed at once,
 * a quarter of the lease apart; this instance believes a lease for less time than PostgreSQL
 * grants it (from when its renewal was sent, less a margin), and past that it answers 503 for
 * the world and gives it up, so an owner cut off from PostgreSQL stops answering within its lease.
 * A world idle for the idle release is flushed, given back and unloaded (unless a real-time
 * simulator runs in it); at shutdown, every world is.
 */

export interface OwnershipOptions {
  registry: WorldRegistry
  log: WorldLog
  owners: Owners
  migrationsDir: string
  /** Idle time after which a world is given up (0: kept). */
  idleReleaseMs: number
  /** The catalogue's row of a created world (undefined: not there). */
  rowOf: (worldId: string) => KnownWorld | undefined
  /** Makes the catalogue current (a world deleted on any instance is no longer in it). */
  catalogueFresh: () => Promise<void>
  /** Reads a created world's start when a reset needs it. */
  startOf: (worldId: string) => () => Promise<Buffer>
  report: (line: string) => void
}

/** Where a request for a world is answered: here, at another instance, nowhere (503), or its world is gone (deleted meanwhile). */
export type Route = { here: OwnedWorld } | { forward: string } | { refused: ApiError } | { gone: true }

interface Held {
  owned: OwnedWorld
  recordsDb: Db
  /** performance.now() past which this instance no longer counts on its lease. */
  validUntil: number
  /** The facts as last written (listings), and the use last written then. */
  factsText: string | undefined
  usedWrittenMs: number
  /** Set while the world is given back (idle, shutdown): requests wait for it, then claim again. */
  releasing: Promise<void> | undefined
}

/** An append not confirmed within this is answered as of unknown outcome (a request is answered within about 5 s). */
const ANSWER_WITHIN_MS = 4000
/** Facts of a world used since are written at most this often. */
const FACTS_EVERY_MS = 1000
const FLUSH_EVERY_MS = 100

const settleWithin = async <T>(work: Promise<T>, ms: number, what: string): Promise<T> => await new Promise<T>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
  work.then((value) => { clearTimeout(timer); resolve(value) }, (e: unknown) => { clearTimeout(timer); reject(e) })
})

export class Ownership {
  private readonly held = new Map<string, Held>()
  /** Worlds another instance owns: its address, until when its lease ran as PostgreSQL said. */
  private readonly elsewhere = new Map<string, { address: string, untilMs: number }>()
  private readonly claiming = new Map<string, Promise<Route>>()
  /** Leases of worlds claimed and still being loaded: renewed with the others (a large world loads for longer than a lease). */
  private readonly loading = new Map<string, { epoch: number, validUntil: number }>()
  /** How the other instances reach this one (set once it listens: SANDBOX_INSTANCE_URL). */
  address = ''
  private readonly leaseMs: number
  /** What this instance takes off a lease it was granted: it counts on less than PostgreSQL grants. */
  private readonly marginMs: number
  private readonly timers: NodeJS.Timeout[]
  private renewing = false
  private lastFactsMs = 0

  constructor (private readonly options: OwnershipOptions) {
    this.leaseMs = options.owners.leaseMs
    this.marginMs = Math.min(250, this.leaseMs / 4)
    this.timers = [
      setInterval(() => { void this.renew() }, this.leaseMs / 4),
      setInterval(() => { for (const held of this.held.values()) held.owned.flush()?.catch(() => undefined) }, FLUSH_EVERY_MS)
    ]
    for (const timer of this.timers) timer.unref()
  }

  /** The worlds this instance owns now. */
  get count (): number { return this.held.size }

  holds (worldId: string): boolean {
    return this.held.has(worldId)
  }

  /** Where a request for the world is answered; a forwarded request (`forwarded`) is never forwarded again. */
  route (worldId: string, forwarded: boolean): Route | Promise<Route> {
    const held = this.held.get(worldId)
    if (held !== undefined) {
      if (held.releasing !== undefined) return held.releasing.then(() => this.route(worldId, forwarded))
      if (performance.now() < held.validUntil) return { here: held.owned }
      held.owned.lose(new Error('its lease ran out: PostgreSQL did not renew it in time'))
    }
    const other = this.elsewhere.get(worldId)
    if (other !== undefined && performance.now() < other.untilMs) return this.towards(worldId, other.address, forwarded)
    let claiming = this.claiming.get(worldId)
    if (claiming === undefined) {
      claiming = this.claim(worldId).finally(() => this.claiming.delete(worldId))
      this.claiming.set(worldId, claiming)
    }
    return claiming.then((route) => 'forward' in route ? this.towards(worldId, route.forward, forwarded) : route)
  }

  /**
   * The world's owner could not be reached, and nothing was sent to it: its lease may run out (it
   * stopped), so this instance claims the world until it has it, or the lease it saw has passed.
   */
  async ownerUnreachable (worldId: string): Promise<Route> {
    this.elsewhere.delete(worldId)
    const deadline = performance.now() + this.leaseMs + this.marginMs
    for (;;) {
      const route = await this.route(worldId, true)
      if (!('refused' in route) || performance.now() >= deadline) return route
      this.elsewhere.delete(worldId)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  /** Where the world is held when not here, without claiming it (a world's deletion is answered by its owner, else by any instance). */
  async ownerElsewhere (worldId: string): Promise<string | undefined> {
    if (this.held.has(worldId)) return undefined
    const other = this.elsewhere.get(worldId)
    if (other !== undefined && performance.now() < other.untilMs) return other.address
    return await this.options.owners.ownerElsewhere(worldId)
  }

  private towards (worldId: string, address: string, forwarded: boolean): Route {
    if (!forwarded && address !== '') return { forward: address }
    return { refused: worldUnavailable(worldId, address === '' ? 'its owner has no address the others can reach' : 'another instance owns it') }
  }

  private async claim (worldId: string): Promise<Route> {
    // a world loaded counts against this instance's bound on the worlds' memory, as a world created does
    const { registry } = this.options
    if (worldId !== DEFAULT_WORLD_ID && registry.bytes() >= registry.limits.maxBytes) {
      const mib = Math.ceil(registry.limits.maxBytes / 1048576)
      return { refused: insufficientStorage(`This instance holds worlds of ${mib} MiB, its most (SANDBOX_WORLDS_MAX_BYTES), and cannot take world ${worldId} now; it gives up worlds idle for SANDBOX_HOSTED_IDLE_RELEASE_SECONDS: retry later`) }
    }
    const sentAt = performance.now()
    try {
      const claim = await settleWithin(this.options.owners.claim(worldId, this.address), this.leaseMs, 'claiming it')
      if (!claim.mine) {
        this.elsewhere.set(worldId, { address: claim.address, untilMs: performance.now() + claim.leftMs })
        return { forward: claim.address }
      }
      this.elsewhere.delete(worldId)
      const lease = { epoch: claim.epoch, validUntil: sentAt + this.leaseMs - this.marginMs }
      this.loading.set(worldId, lease)
      try {
        const held = await this.take(worldId, lease)
        return held === undefined ? { gone: true } : { here: held.owned }
      } finally {
        this.loading.delete(worldId)
      }
    } catch (e) {
      return { refused: worldUnavailable(worldId, `PostgreSQL: ${(e as Error).message}`) }
    }
  }

  /** Loads a world just claimed at `epoch` from its log (the default world on an empty log: seeded, its snapshot the log's first entry). */
  private async take (worldId: string, lease: { epoch: number, validUntil: number }): Promise<Held | undefined> {
    const { epoch } = lease
    const { registry, log, migrationsDir } = this.options
    const row = worldId === DEFAULT_WORLD_ID ? undefined : this.options.rowOf(worldId)
    const entries = await log.load(worldId)
    if (entries.length === 0 && worldId !== DEFAULT_WORLD_ID) {
      // deleted while it was claimed
      await this.options.owners.release([worldId]).catch(() => undefined)
      return undefined
    }
    let world: World
    let recordsDb: Db
    let seq: number
    if (entries.length === 0) {
      world = registry.default
      recordsDb = openEmptySchema(migrationsDir)
      world.adoptDatabase(openDatabase({ file: ':memory:', migrationsDir }))
      world.adoptRecords(new UnitOfWork(recordsDb))
      await world.restoreData()
      seq = 1
      await log.append(worldId, epoch, seq, { kind: 'snapshot', body: pagesOf(world.db), records: pagesOf(recordsDb), state: Buffer.from(JSON.stringify(stateOf(world))) })
    } else {
      const logged = await replayLog(entries, migrationsDir)
      recordsDb = logged.records
      seq = logged.seq
      if (worldId === DEFAULT_WORLD_ID) {
        world = registry.default
        world.adoptDatabase(logged.db)
        world.adoptRecords(new UnitOfWork(recordsDb))
        await world.journal.clear()
      } else {
        if (row === undefined) throw new Error('it is not in the catalogue this instance holds')
        world = registry.adopt({ ...row, start: this.options.startOf(worldId), db: logged.db, records: new UnitOfWork(recordsDb) })
      }
      if (logged.state !== undefined) adoptState(world, logged.state)
    }
    if (worldId !== DEFAULT_WORLD_ID && this.options.rowOf(worldId) === undefined) {
      // deleted while it was loaded
      this.unload(world, recordsDb)
      await this.options.owners.release([worldId]).catch(() => undefined)
      return undefined
    }
    if (performance.now() >= lease.validUntil) {
      this.unload(world, recordsDb)
      throw new Error('its lease ran out while it was loaded: PostgreSQL did not renew it in time')
    }
    return this.hold(world, recordsDb, epoch, seq, lease.validUntil)
  }

  private hold (world: World, recordsDb: Db, epoch: number, seq: number, validUntil: number): Held {
    const owned = new OwnedWorld(world, recordsDb, {
      log: this.options.log,
      epoch,
      seq,
      startInCatalogue: world.id !== DEFAULT_WORLD_ID,
      answerWithinMs: ANSWER_WITHIN_MS,
      onLost: (reason) => this.lost(world.id, reason)
    })
    const held: Held = { owned, recordsDb, validUntil, factsText: undefined, usedWrittenMs: 0, releasing: undefined }
    this.held.set(world.id, held)
    return held
  }

  /**
   * The world can no longer be answered from this instance's memory: unloaded (its next request
   * claims it again). Its lease taken from it (the fence, a renewal), it may have been deleted on
   * any instance: settled once the catalogue tells, the world marked deleted if it was, so that
   * what waits on it answers as deleted rather than unavailable.
   */
  private lost (worldId: string, reason: Error): Promise<void> | undefined {
    const held = this.held.get(worldId)
    if (held === undefined) return
    this.options.report(`world ${worldId} given up: ${reason.message}`)
    this.held.delete(worldId)
    const { world } = held.owned
    this.unload(world, held.recordsDb)
    if (!(reason instanceof Fenced) || worldId === DEFAULT_WORLD_ID) return
    return settleWithin(this.options.catalogueFresh(), ANSWER_WITHIN_MS, 'reading the catalogue').then(() => {
      if (this.options.rowOf(worldId) === undefined) world.markDeleted()
    }, () => undefined)
  }

  /** The world was deleted from the catalogue (its registry entry is gone already). */
  deleted (worldId: string): void {
    const held = this.held.get(worldId)
    if (held === undefined) return
    this.held.delete(worldId)
    held.owned.lose(new Error('the world was deleted'))
    held.recordsDb.close()
  }

  private unload (world: World, recordsDb: Db): void {
    if (world.id === DEFAULT_WORLD_ID) {
      // the default world stays in the registry, over empty databases, until it is loaded again
      world.close()
      world.adoptDatabase(openEmptySchema(this.options.migrationsDir))
      world.adoptRecords(new UnitOfWork(openEmptySchema(this.options.migrationsDir)))
      void world.journal.clear()
    } else {
      this.options.registry.unload(world.id)
    }
    if (recordsDb.open) recordsDb.close()
  }

  /** The data of a world as its log holds it (a copy `from` it): undefined when this instance holds it (the caller copies it here). */
  async dataOf (worldId: string): Promise<Buffer | undefined> {
    const held = this.held.get(worldId)
    if (held !== undefined) {
      await held.owned.settled()
      return undefined
    }
    const logged = await replayLog(await this.options.log.load(worldId), this.options.migrationsDir)
    try {
      return snapshotOf(logged.db)
    } finally {
      logged.db.close()
      logged.records.close()
    }
  }

  /** Gives a world back: what it holds written to its log, its lease released, its memory freed. */
  private async release (worldId: string, held: Held): Promise<void> {
    let done!: () => void
    held.releasing = new Promise((resolve) => { done = resolve })
    try {
      held.owned.world.close()
      for (let tries = 0; tries < 50 && !held.owned.quiet; tries++) await new Promise((resolve) => setTimeout(resolve, 20))
      await held.owned.flush()
      await this.options.owners.release([worldId])
    } catch (e) {
      this.options.report(`world ${worldId} given back without its last records: ${(e as Error).message}`)
    } finally {
      if (this.held.get(worldId) === held) {
        this.held.delete(worldId)
        held.owned.lose(new Error('given back'))
        this.unload(held.owned.world, held.recordsDb)
      }
      done()
    }
  }

  /** Renews every lease held (writing the facts of worlds used since), gives up those lost or run out, and those idle. */
  private async renew (): Promise<void> {
    const now = performance.now()
    for (const [id, held] of this.held) {
      if (now >= held.validUntil && held.releasing === undefined) held.owned.lose(new Error(`its lease ran out: PostgreSQL did not renew it in time (${id})`))
    }
    if (this.renewing || (this.held.size === 0 && this.loading.size === 0)) return
    this.renewing = true
    const withFacts = Date.now() - this.lastFactsMs >= FACTS_EVERY_MS
    if (withFacts) this.lastFactsMs = Date.now()
    const list = [...this.held].filter(([, held]) => held.releasing === undefined).map(([worldId, held]) => {
      const { world } = held.owned
      let facts: string | null = null
      if (withFacts && (held.factsText === undefined || world.lastUsedMs > held.usedWrittenMs)) {
        const text = factsOf(world)
        if (text !== held.factsText) facts = text
        held.factsText = text
        held.usedWrittenMs = world.lastUsedMs
      }
      return { worldId, epoch: held.owned.epoch, facts, lastUsedMs: world.lastUsedMs, held }
    })
    const loading = [...this.loading].map(([worldId, lease]) => ({ worldId, epoch: lease.epoch, facts: null, lastUsedMs: 0, lease }))
    const sentAt = performance.now()
    try {
      const still = await this.options.owners.renew([...list, ...loading])
      for (const { worldId, lease } of loading) if (still.has(worldId)) lease.validUntil = sentAt + this.leaseMs - this.marginMs
      for (const { worldId, held } of list) {
        if (this.held.get(worldId) !== held) continue
        if (still.has(worldId)) held.validUntil = sentAt + this.leaseMs - this.marginMs
        else held.owned.lose(new Fenced(worldId))
      }
    } catch (e) {
      this.options.report(`renewing the leases of ${list.length} worlds: ${(e as Error).message}`)
    } finally {
      this.renewing = false
    }
    this.releaseIdle()
  }

  private releaseIdle (): void {
    const idleMs = this.options.idleReleaseMs
    if (idleMs <= 0) return
    for (const [worldId, held] of this.held) {
      const { world } = held.owned
      const { settings } = world.simulator.state()
      const realTime = settings !== null && settings.clockTime !== true
      if (held.releasing === undefined && !realTime && Date.now() - world.lastUsedMs >= idleMs) void this.release(worldId, held)
    }
  }

  /** At shutdown, once requests are answered: every world held given back, so the next request's instance takes it at once. */
  async releaseAll (): Promise<void> {
    for (const timer of this.timers) clearInterval(timer)
    await Promise.all([...this.held].map(async ([worldId, held]) => await (held.releasing ?? this.release(worldId, held))))
  }

  /** Stops the timers, the worlds unloaded without a word to PostgreSQL (a stop that cannot wait). */
  close (): void {
    for (const timer of this.timers) clearInterval(timer)
  }
}
