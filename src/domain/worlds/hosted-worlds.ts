import type { Catalogue, CatalogueChange, WorldRow } from '../../db/postgres/catalogue.js'
import type { Owners } from '../../db/postgres/owners.js'
import { notFound, storageUnreachable, tenantQuotaReached, tooManyTenants, type ApiError } from '../../errors.js'
import type { Ownership } from './ownership.js'
import type { WorldRegistry } from './registry.js'
import { MAX_TENANTS, type SharedCatalogue, type Tenant } from './tenants.js'
import type { KnownWorld, World, WorldListing } from './world.js'
import { DEFAULT_WORLD_ID } from './world-ids.js'
import { factsOf } from './world-state.js'

/**
 * Hosted mode's catalogue of worlds and tenants (db/postgres/catalogue.ts), as every instance
 * knows it: each world's row and every tenant, with their tokens, reloaded when the catalogue's
 * version moves (a notification, or a question before a token is trusted: `fresh`). A change (a
 * world created or deleted, a tenant) is made in PostgreSQL first, under the catalogue's lock,
 * where the bounds are counted (worlds at once, a tenant's quota, tenants), then here. The worlds'
 * data lives with their owners (ownership.ts): the instance that creates a world owns it first,
 * and listings read what each owner last wrote of its worlds. Worlds idle past their time to live
 * are deleted by their owner, or, when nobody holds them, by any instance's sweep.
 */

/** A world of the catalogue, as this instance knows it (a world it owns is also a World in the registry). */
class CatalogueWorld implements KnownWorld {
  readonly id: string
  readonly name: string
  readonly tenantId: string | undefined
  readonly tokenKey: string
  readonly source: string
  readonly ttlMs: number
  readonly createdAtMs: number
  lastUsedMs: number
  readonly maxBytes: number | undefined
  readonly ownSecrets: boolean

  constructor (row: WorldRow) {
    this.id = row.id
    this.name = row.name
    this.tenantId = row.tenantId
    this.tokenKey = row.tokenKey
    this.source = row.source
    this.ttlMs = row.ttlMs
    this.createdAtMs = row.createdAtMs
    this.lastUsedMs = row.lastUsedMs
    this.maxBytes = row.maxBytes
    this.ownSecrets = row.ownSecrets
  }

  get expiresAtMs (): number | undefined {
    return this.ttlMs === 0 ? undefined : this.lastUsedMs + this.ttlMs
  }
}

export interface HostedWorldsOptions {
  report: (line: string) => void
  realNow?: () => number
  /** How often worlds idle past their time to live are looked for. */
  sweepMs?: number
}

export class HostedWorlds implements SharedCatalogue {
  private readonly worlds = new Map<string, CatalogueWorld>()
  /** The catalogue's version this instance holds. */
  private version = -1
  /** A change announced and not yet read: a request for a world waits for it (a world deleted elsewhere never answers here after). */
  private behind: Promise<void> | undefined
  /** The question `fresh` asks now for worlds unknown here, and the one asked after it (see freshAfterNow). */
  private asking: Promise<void> | undefined
  private askingNext: Promise<void> | undefined
  /** One change or reload of the catalogue at a time on this instance. */
  private busy: Promise<void> = Promise.resolve()
  private readonly sweeper: NodeJS.Timeout
  private readonly realNow: () => number
  ownership!: Ownership

  constructor (private readonly registry: WorldRegistry, private readonly catalogue: Catalogue, private readonly owners: Owners, private readonly options: HostedWorldsOptions) {
    this.realNow = options.realNow ?? Date.now
    this.sweeper = setInterval(() => { void this.sweep().catch((e: Error) => options.report(`sweeping idle worlds: ${e.message}`)) }, options.sweepMs ?? 1000)
    this.sweeper.unref()
  }

  find (worldId: string): KnownWorld | undefined {
    return this.worlds.get(worldId)
  }

  /**
   * Whether the world is in the catalogue; for one this instance does not know, the catalogue is
   * made current first (a world created a moment ago on another instance is known here before
   * its announcement arrives), and one that may be idle past its time to live is swept first (an
   * expired world never answers). PostgreSQL out of reach is an error (a 503), not "unknown".
   */
  known (worldId: string): boolean | Promise<boolean> {
    if (worldId === DEFAULT_WORLD_ID) return true
    if (this.behind !== undefined) return this.behind.then(() => this.known(worldId))
    const known = this.worlds.get(worldId)
    if (known !== undefined) {
      const expiresAt = (this.ownership.holds(worldId) ? this.registry.get(worldId) : undefined)?.expiresAtMs ?? known.expiresAtMs
      if (expiresAt === undefined || expiresAt > this.realNow()) return true
      return this.sweep().then(() => this.worlds.has(worldId), () => true)
    }
    return this.freshAfterNow().then(() => this.worlds.has(worldId))
  }

  /**
   * `fresh`, asked after this call: requests for unknown worlds share the questions, so however
   * many arrive (names of worlds that do not exist, say) one question is asked at a time and one
   * more waits, each answering every request that arrived before it was asked.
   */
  private freshAfterNow (): Promise<void> {
    if (this.asking === undefined) {
      const asking = this.fresh().finally(() => { if (this.asking === asking) this.asking = undefined })
      this.asking = asking
      return asking
    }
    if (this.askingNext === undefined) {
      const next = this.asking.catch(() => undefined).then(() => {
        this.askingNext = undefined
        return this.freshAfterNow()
      })
      this.askingNext = next
    }
    return this.askingNext
  }

  list (): KnownWorld[] {
    return [...this.worlds.values()]
  }

  ownedBy (tenantId: string): KnownWorld[] {
    return this.list().filter((world) => world.tenantId === tenantId)
  }

  async copyOf (worldId: string): Promise<Buffer | undefined> {
    try {
      return await this.ownership.dataOf(worldId)
    } catch (e) {
      throw storageUnreachable(e)
    }
  }

  startOf (worldId: string): () => Promise<Buffer> {
    return async () => {
      let start: Buffer | undefined
      try {
        start = await this.catalogue.start(worldId)
      } catch (e) {
        throw storageUnreachable(e)
      }
      if (start === undefined) throw notFound(`World ${worldId} was deleted`)
      return start
    }
  }

  /** The catalogue as it is now, each world with the facts its owner last wrote (live, for the worlds this instance holds). */
  async listing (tenantId?: string): Promise<WorldListing[]> {
    let facts: Map<string, unknown>
    try {
      await this.exclusive(async () => await this.reload())
      facts = await this.owners.facts()
    } catch (e) {
      throw storageUnreachable(e)
    }
    const listed: KnownWorld[] = [...this.worlds.values()].filter((world) => tenantId === undefined || world.tenantId === tenantId)
    const worlds = tenantId === undefined ? [this.registry.default, ...listed] : listed
    return worlds.map((known) => {
      const held = this.ownership.holds(known.id) ? this.registry.get(known.id) : undefined
      if (held !== undefined) return held.listing()
      const written = facts.get(known.id) as Omit<WorldListing, 'world'> | undefined
      return { world: known, ...(written ?? { data: { bytes: 0, integrations: [], counts: { integrations: 0, agencies: 0, clients: 0, writes: { pending: 0, applied: 0 } } }, journal: 0, faults: 0 }) }
    })
  }

  async addWorld (world: World, start: Buffer, owner: Tenant | undefined, full: () => ApiError): Promise<void> {
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
    const facts = factsOf(world)
    await this.change(async (change) => {
      if (await change.countWorlds() >= this.registry.limits.maxWorlds) throw full()
      if (owner !== undefined) {
        // its quota as the catalogue holds it: the administrator may have changed it on another instance
        const quota = await change.tenantQuota(owner.id)
        if (quota === undefined) throw notFound(`Tenant ${owner.id} was deleted while its world was being created`)
        const held = await change.countWorlds(owner.id)
        if (held >= quota) throw tenantQuotaReached(owner.id, quota, held)
      }
      await change.addWorld(row, start, facts)
      return true
    }, () => this.add(row))
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

  async updateTenant (tenant: Tenant, apply: () => void): Promise<boolean> {
    let found = false
    await this.change(async (change) => {
      found = await change.updateTenant({ id: tenant.id, name: tenant.name, maxWorlds: tenant.maxWorlds, createdAtMs: tenant.createdAtMs, tokenKey: tenant.tokenKey })
      return found
    }, () => { if (found) apply() })
    return found
  }

  async deleteTenant (id: string, apply: () => void): Promise<boolean> {
    let found = false
    await this.change(async (change) => {
      found = await change.deleteTenant(id)
      return found
    }, () => this.forget(this.ownedBy(id).map((w) => w.id), apply))
    return found
  }

  /** A change of the catalogue announced (its version): reloaded now. */
  announced (version: number): void {
    if (version <= this.version || this.behind !== undefined) return
    const behind = this.fresh().catch(() => undefined).finally(() => { if (this.behind === behind) this.behind = undefined })
    this.behind = behind
  }

  /** Makes this instance's catalogue current (one small question, a reload when it moved): before a token is trusted. */
  async fresh (): Promise<void> {
    try {
      const version = await this.catalogue.version()
      if (version > this.version) await this.exclusive(async () => { if (version > this.version) await this.reload() })
    } catch (e) {
      throw storageUnreachable(e)
    }
  }

  /** Stops sweeping (at shutdown). */
  close (): void {
    clearInterval(this.sweeper)
  }

  /** Reads the catalogue whole and makes this instance's worlds, tenants and tokens the same. */
  private async reload (): Promise<void> {
    const rows = await this.catalogue.load()
    const listed = new Set(rows.worlds.map((w) => w.id))
    this.forget([...this.worlds.keys()].filter((id) => !listed.has(id)), () => undefined)
    this.registry.tenants.adopt(rows.tenants)
    for (const row of rows.worlds) {
      const known = this.worlds.get(row.id)
      if (known === undefined) this.add(row)
      else known.lastUsedMs = Math.max(known.lastUsedMs, row.lastUsedMs)
    }
    this.version = Math.max(this.version, rows.version)
  }

  private add (row: WorldRow): void {
    const world = new CatalogueWorld(row)
    this.worlds.set(row.id, world)
    this.registry.tokens.add(world.tokenKey, { kind: 'world', world })
  }

  /** Worlds deleted from the catalogue: `apply` (the registry's part), then their tokens, and their owner (this instance?) gives them up. */
  private forget (ids: string[], apply: () => void): void {
    apply()
    for (const id of ids) {
      const world = this.worlds.get(id)
      if (world !== undefined) this.registry.tokens.remove(world.tokenKey)
      this.worlds.delete(id)
      if (this.ownership.holds(id)) this.registry.delete(id)
      this.ownership.deleted(id)
    }
  }

  /**
   * One change of the catalogue, made in PostgreSQL and then here (`apply`), in one turn of this
   * instance; when nothing else changed the catalogue since this instance last read it, this
   * instance now holds the new version (else the notification reloads it).
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
   * Deletes the worlds idle past their time to live: those this instance holds by their uses here
   * (a world's owner sees every request of it), those nobody holds by the last use their owner wrote.
   */
  private async sweep (): Promise<void> {
    const now = this.realNow()
    if (![...this.worlds.values()].some((world) => world.ttlMs > 0)) return
    let expired: string[] = []
    await this.change(async (change) => {
      const idle: string[] = []
      for (const { id, lastUsedMs, ttlMs, held } of await change.expiringWorlds()) {
        const here = this.ownership.holds(id) ? this.registry.get(id) : undefined
        const used = here?.lastUsedMs ?? (held ? undefined : lastUsedMs)
        if (used !== undefined && used + ttlMs <= now) idle.push(id)
      }
      expired = await change.deleteWorlds(idle)
      return expired.length > 0
    }, () => this.forget(expired, () => undefined))
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
