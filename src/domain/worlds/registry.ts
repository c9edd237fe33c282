import { conflict, insufficientStorage, notFound, tenantQuotaReached, tooManyRequests, type ApiError } from '../../errors.js'
import { growthRefused, noRoomFor } from './bounds.js'
import { checkNewWorld, type NewWorld } from './new-world.js'
import type { Db } from '../../db/database.js'
import type { UnitOfWork } from '../../db/index.js'
import type { FixtureRunner } from './fixture-runner.js'
import { newControlToken, TokenHolders } from './control-tokens.js'
import { openSnapshot, snapshotOf, snapshotOfFixture, snapshotStart } from './starts.js'
import { Tenants, type SharedCatalogue, type Tenant, type TokenHolder } from './tenants.js'
import { World, type ByteAccount, type KnownWorld, type WorldListing, type WorldOptions } from './world.js'
import { DEFAULT_WORLD_ID, newWorldId, worldIdOfClientId } from './world-ids.js'

import type { CreatedWorld, RegistryOptions, StartUp } from './registry-options.js'
export type { CreatedWorld, RegistryOptions, StartUp, WorldLimits } from './registry-options.js'
export type { NewWorld } from './new-world.js'

/**
 * Every world of the process: the default one, and the worlds created (in memory, each forked
 * from a snapshot in milliseconds). A partner request finds its world by its Client Id, a control
 * request by the world's id. Worlds idle past their time to live are deleted: by a sweep, and
 * at the latest when they are next looked up, so an expired world never answers.
 */
export class WorldRegistry implements ByteAccount {
  private readonly worlds = new Map<string, World>()
  /** The worlds of each tenant, by its id. */
  private readonly owned = new Map<string, Set<World>>()
  /** The snapshot of each created world's start (a world created from the start-up fixture shares one). */
  private readonly snapshots = new Map<string, Buffer>()
  private startSnapshot: Buffer | undefined
  private readonly realNow: () => number
  private sweeper: NodeJS.Timeout | undefined
  /** Hosted mode: the catalogue every instance shares, where worlds and tenants are added and deleted first (this registry holds the worlds this instance owns). */
  private sharedCatalogue: SharedCatalogue | undefined

  /** The world `default`: the process's own database, there from the start, never deleted. */
  readonly default: World
  readonly startUp: StartUp
  /** The holders of the control tokens the sandbox made: each created world, each tenant. */
  readonly tokens = new TokenHolders<TokenHolder>()
  /** The tenants of a partner programme, each with its own worlds. */
  readonly tenants: Tenants

  constructor (defaultWorld: World, private readonly options: RegistryOptions) {
    this.default = defaultWorld
    this.startUp = options.startUp ?? { seededNow: false, fixtureMismatch: undefined }
    this.realNow = options.realNow ?? Date.now
    this.tenants = new Tenants(this, this.realNow)
  }

  /**
   * From now on, worlds and tenants are added and deleted in this catalogue first (hosted mode),
   * which also decides their expiry (it knows their uses on every instance).
   */
  share (catalogue: SharedCatalogue): void {
    this.sharedCatalogue = catalogue
    this.stopSweeping()
    // every instance holds the default world in memory, and the published demo credentials write to it
    this.default.countIn(this, this.options.limits.worldMaxBytes)
  }

  get shared (): SharedCatalogue | undefined {
    return this.sharedCatalogue
  }

  /** The world with this id, if it exists and has not expired (hosted mode: if this instance holds it). */
  get (id: string): World | undefined {
    if (id === DEFAULT_WORLD_ID) return this.default
    const world = this.worlds.get(id)
    if (world !== undefined && this.expired(world)) {
      this.delete(id)
      return undefined
    }
    return world
  }

  /** The world a partner request goes to: the one its Client Id names, else the default world. */
  forClientId (clientId: string | undefined): World {
    if (clientId === undefined) return this.default
    const id = worldIdOfClientId(clientId)
    return (id === undefined ? undefined : this.get(id)) ?? this.default
  }

  /** The worlds created, oldest first (expired ones are deleted on the way). */
  list (): World[] {
    this.sweep()
    return [...this.worlds.values()]
  }

  /** The world with this id, held here or (hosted mode) by another instance. */
  find (id: string): KnownWorld | undefined {
    return this.get(id) ?? this.sharedCatalogue?.find(id)
  }

  /** The worlds a tenant holds now, oldest first (expired ones are deleted on the way). */
  ownedBy (tenantId: string): KnownWorld[] {
    if (this.sharedCatalogue !== undefined) return this.sharedCatalogue.ownedBy(tenantId)
    this.sweep()
    return [...(this.owned.get(tenantId) ?? [])]
  }

  /** Every world (or a tenant's), the default one first, as GET /_sandbox/worlds lists them. */
  async listing (tenantId?: string): Promise<WorldListing[]> {
    if (this.sharedCatalogue !== undefined) return await this.sharedCatalogue.listing(tenantId)
    const worlds = tenantId === undefined ? [this.default, ...this.list()] : [...(this.owned.get(tenantId) ?? [])]
    return worlds.map((world) => world.listing())
  }

  /** 409 when the tenant holds as many worlds as its quota allows. */
  checkQuota (owner: Tenant): void {
    const held = this.ownedBy(owner.id).length
    if (held >= owner.maxWorlds) throw tenantQuotaReached(owner.id, owner.maxWorlds, held)
  }

  /** The bounds on the worlds created. */
  get limits (): { maxWorlds: number, maxBytes: number } {
    return { maxWorlds: this.options.limits.maxWorlds, maxBytes: this.options.limits.maxBytes }
  }

  /**
   * Bytes the created worlds' databases and their snapshots take (in hosted mode, with the default
   * world's database), as each held them at its last commit or load.
   */
  bytes (): number {
    let total = this.startSnapshot?.length ?? 0
    if (this.sharedCatalogue !== undefined) total += this.default.held
    for (const world of this.worlds.values()) total += world.held
    for (const snapshot of this.snapshots.values()) if (snapshot !== this.startSnapshot) total += snapshot.length
    return total
  }

  /**
   * Throws a 507 naming the figures when the world holding `bytes` instead of what it holds now would
   * pass its bound (maxBytes) or the worlds' (SANDBOX_WORLDS_MAX_BYTES). Every growing commit asks
   * (bounds.ts), every database swapped in whole, and whatever loads a world's data from elsewhere.
   */
  admit (world: World, bytes: number): void {
    this.checkGrowth(world, bytes, 0, false)
  }

  private checkGrowth (world: World, bytes: number, beside: number, creating: boolean): void {
    const refused = growthRefused({
      worldId: world.id,
      bound: world.maxBytes,
      held: this.counted(world) ? world.held : 0,
      bytes,
      beside,
      total: this.bytes(),
      maxBytes: this.options.limits.maxBytes,
      kind: creating ? 'new' : world === this.default ? 'default' : 'created'
    })
    if (refused !== undefined) throw refused
  }

  /** True when the world's bytes are among those bytes() sums. */
  private counted (world: World): boolean {
    return world === this.default ? this.sharedCatalogue !== undefined : this.worlds.get(world.id) === world
  }

  /**
   * A new world: a copy of `from`, or of `fixture`, or of the start-up fixture. Past the bound on
   * worlds it answers 429 with the seconds until an idle world expires (507 when none will); past
   * the bound on their memory, 507. A tenant's world: past its quota, 409; `from` another's world, 404.
   */
  async create (request: NewWorld): Promise<CreatedWorld> {
    const { limits } = this.options
    const { owner } = request
    this.sweep()
    // a tenant copies only its own worlds (any other is unknown to it, as everywhere else); hosted mode: any instance's
    const from = request.from === undefined ? undefined : this.find(request.from)
    const maxBytes = checkNewWorld(request, from, limits)
    if (owner !== undefined) this.checkQuota(owner)
    // hosted mode: a world another instance holds is read from its log
    const copied = from === undefined ? undefined : await this.sharedCatalogue?.copyOf(from.id)
    const held = from === undefined ? undefined : this.get(from.id)
    this.checkRoom(from === undefined ? undefined : 2 * (copied?.length ?? held?.bytes() ?? 0))
    const id = newWorldId()
    let snapshot: Buffer
    let source: string
    if (request.snapshot !== undefined) {
      source = '(posted to /_sandbox/worlds)'
      snapshot = request.snapshot
    } else if (request.fixture !== undefined) {
      source = '(posted to /_sandbox/worlds)'
      snapshot = snapshotOfFixture(request.fixture, source, this.options.migrationsDir, new Date(this.realNow()).toISOString())
    } else if (from !== undefined) {
      snapshot = copied ?? snapshotOf(held!.db)
      source = `copy of world ${from.id}`
    } else {
      snapshot = await this.startupSnapshot()
      source = this.default.source
    }
    // the first world made from the start-up fixture waited for it: the tenant may have gone, or filled its quota (or had it changed), meanwhile
    const current = owner === undefined ? undefined : this.tenants.get(owner.id)
    if (owner !== undefined && current === undefined) throw notFound(`Tenant ${owner.id} was deleted while its world was being created`)
    if (current !== undefined) this.checkQuota(current)
    const ttlSeconds = request.ttlSeconds ?? limits.defaultTtlSeconds
    const token = newControlToken()
    const world = this.open({
      id,
      name: request.name ?? `world ${this.worlds.size + 1}`,
      token,
      tenantId: owner?.id,
      db: openSnapshot(snapshot),
      // hosted mode: the start is kept in the catalogue, read again when a reset needs it
      start: snapshotStart(this.sharedCatalogue?.startOf(id) ?? snapshot, source),
      ttlMs: ttlSeconds * 1000,
      maxBytes,
      ownSecrets: request.secrets !== 'fixture'
    })
    try {
      // its data within its bound, and with its own start (the start-up fixture's is shared) within the process's
      this.checkGrowth(world, world.bytes(), this.sharedCatalogue === undefined && snapshot !== this.startSnapshot ? snapshot.length : 0, true)
    } catch (e) {
      world.destroy()
      throw e
    }
    const created = { world, integrations: world.integrations(), token }
    if (this.sharedCatalogue === undefined) {
      this.register(world, snapshot)
      return created
    }
    // hosted mode: the world is in the catalogue, and the first request for it (at any instance) takes it
    try {
      await this.sharedCatalogue.addWorld(world, snapshot, current, () => this.fullError())
    } finally {
      world.destroy('keep')
    }
    return created
  }

  /**
   * A world of the catalogue this instance now owns (hosted mode): what it is, where its start is
   * read, its data and examiner records as its log holds them.
   */
  adopt (row: Omit<KnownWorld, 'expiresAtMs'> & { maxBytes: number | undefined, ownSecrets: boolean, start: () => Promise<Buffer>, db: Db, records: UnitOfWork }): World {
    const world = this.open({ ...row, tokenKey: row.tokenKey ?? '', maxBytes: row.maxBytes ?? this.options.limits.worldMaxBytes, start: snapshotStart(row.start, row.source) }, row.records)
    this.register(world, undefined)
    return world
  }

  /** Hosted mode: this instance no longer holds the world (another may take it); it stays in the catalogue. */
  unload (id: string): void {
    const world = this.worlds.get(id)
    if (world === undefined) return
    this.forget(world)
    world.destroy('keep')
  }

  /** Deletes a created world, in the shared catalogue first in hosted mode; false when there was none. */
  async remove (id: string): Promise<boolean> {
    // the default world is never deleted: delete() answers why
    if (this.sharedCatalogue === undefined || id === DEFAULT_WORLD_ID) return this.delete(id)
    return await this.sharedCatalogue.deleteWorld(id, () => this.delete(id))
  }

  private open (options: Pick<WorldOptions, 'id' | 'name' | 'token' | 'tokenKey' | 'tenantId' | 'db' | 'start' | 'ttlMs' | 'createdAtMs' | 'lastUsedMs' | 'maxBytes' | 'ownSecrets'>, records = this.default.records): World {
    const { limits } = this.options
    return new World({
      ...options,
      account: this,
      records,
      journalSize: limits.journalSize,
      journalBytes: limits.journalBytes,
      readModel: limits.readModel,
      requestsInProgress: limits.requestsInProgress,
      realNow: this.realNow,
      loadFaker: this.options.loadFaker,
      reports: this.options.reports,
      tenantOf: (tenantId) => this.tenants.get(tenantId)
    })
  }

  /** `snapshot`: the world's start, when this instance holds it (not in hosted mode: the catalogue does, and its tokens too). */
  private register (world: World, snapshot: Buffer | undefined): void {
    this.worlds.set(world.id, world)
    if (snapshot !== undefined) this.snapshots.set(world.id, snapshot)
    if (world.tokenKey !== undefined && this.sharedCatalogue === undefined) this.tokens.add(world.tokenKey, { kind: 'world', world })
    if (world.tenantId !== undefined) {
      const held = this.owned.get(world.tenantId)
      if (held === undefined) this.owned.set(world.tenantId, new Set([world]))
      else held.add(world)
    }
    this.startSweeping()
  }

  /** Deletes a created world: its credentials answer 401 from now on (hosted mode: once deleted from the catalogue, where its token is). */
  delete (id: string): boolean {
    if (id === DEFAULT_WORLD_ID) throw conflict('The default world cannot be deleted; POST /_sandbox/reset returns it to its start')
    const world = this.worlds.get(id)
    if (world === undefined) return false
    this.forget(world)
    if (world.tokenKey !== undefined && this.sharedCatalogue === undefined) this.tokens.remove(world.tokenKey)
    world.destroy()
    return true
  }

  private forget (world: World): void {
    this.worlds.delete(world.id)
    this.snapshots.delete(world.id)
    if (world.tenantId !== undefined) {
      const held = this.owned.get(world.tenantId)
      held?.delete(world)
      if (held?.size === 0) this.owned.delete(world.tenantId)
    }
    if (this.worlds.size === 0) this.stopSweeping()
  }

  /** Deletes the worlds idle past their time to live. */
  sweep (): void {
    for (const world of this.worlds.values()) if (this.expired(world)) this.delete(world.id)
  }

  /** Where every world's examiner reports are computed. */
  get reports (): RegistryOptions['reports'] {
    return this.options.reports
  }

  /** Where large fixture bodies are read, away from the event loop. */
  get fixtures (): FixtureRunner {
    return this.options.fixtures
  }

  /**
   * The first step of a shutdown: work that could outlast it stops now (every world's simulator, and
   * the report and fixture workers: their requests answer 503), so the requests waiting on it are answered.
   */
  async stopWork (): Promise<void> {
    for (const world of [this.default, ...this.worlds.values()]) world.simulator.stop()
    await Promise.all([this.options.reports.close(), this.options.fixtures.close()])
  }

  /** At once, without waiting for anything: what close() does, the report worker stopped in passing. */
  closeNow (): void {
    this.stopSweeping()
    for (const world of this.worlds.values()) world.destroy()
    this.worlds.clear()
    this.default.close()
    void this.options.reports.close()
    void this.options.fixtures.close()
  }

  /** Writes what every world's examiner holds, stops their timers and the report worker (at shutdown). */
  async close (): Promise<void> {
    this.stopSweeping()
    for (const world of this.worlds.values()) world.destroy()
    this.worlds.clear()
    this.default.close()
    await Promise.all([this.options.reports.close(), this.options.fixtures.close()])
  }

  private expired (world: World): boolean {
    // hosted mode: the shared catalogue decides, from every instance's uses (hosted-worlds.ts)
    if (this.sharedCatalogue !== undefined) return false
    const at = world.expiresAtMs
    return at !== undefined && at <= this.realNow()
  }

  /** Past the bound on worlds: 429 with the seconds until an idle world expires, 507 when none will. */
  private fullError (): ApiError {
    const { maxWorlds } = this.options.limits
    const worlds: KnownWorld[] = this.sharedCatalogue?.list() ?? [...this.worlds.values()]
    const next = Math.min(...worlds.map((w) => w.expiresAtMs ?? Infinity))
    const detail = `This sandbox holds ${maxWorlds} worlds, its most (SANDBOX_MAX_WORLDS=${maxWorlds}); DELETE /_sandbox/worlds/{id} the worlds you no longer need`
    if (next === Infinity) return insufficientStorage(`${detail} (none of them expires: each was created with ttlSeconds 0)`)
    return tooManyRequests(`${detail}, or wait for an idle one to expire`, Math.max(1, Math.ceil((next - this.realNow()) / 1000)))
  }

  /** `copyBytes`: what a copy of a world is expected to take (undefined: a world of the start-up fixture). */
  private checkRoom (copyBytes: number | undefined): void {
    const { maxWorlds, maxBytes } = this.options.limits
    if (this.worlds.size >= maxWorlds) throw this.fullError()
    const refused = noRoomFor(this.bytes(), copyBytes ?? (this.startSnapshot?.length ?? 0), maxBytes)
    if (refused !== undefined) throw refused
  }

  /** The start-up fixture's snapshot, made on the first world created from it. */
  private async startupSnapshot (): Promise<Buffer> {
    if (this.startSnapshot === undefined) {
      const { fixture } = await this.options.startFixture()
      this.startSnapshot ??= snapshotOfFixture(fixture, this.default.source, this.options.migrationsDir, new Date(this.realNow()).toISOString())
    }
    return this.startSnapshot
  }

  private startSweeping (): void {
    if (this.sweeper !== undefined || this.sharedCatalogue !== undefined) return
    // Frees the memory of expired worlds; lookups never see one, sweep or not.
    this.sweeper = setInterval(() => this.sweep(), 5000)
    this.sweeper.unref()
  }

  private stopSweeping (): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper)
    this.sweeper = undefined
  }
}
