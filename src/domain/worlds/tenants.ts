import { invalidField, tooManyTenants, type ApiError } from '../../errors.js'
import { newControlToken, TokenHolders } from './control-tokens.js'
import type { KnownWorld, World, WorldListing } from './world.js'
import { newId } from './world-ids.js'

/** Tenants a sandbox holds at once. */
export const MAX_TENANTS = 1000
/** A tenant's quota of worlds when its creator names none (or SANDBOX_MAX_WORLDS when that is lower). */
export const DEFAULT_TENANT_WORLDS = 10

/**
 * A tenant of a partner programme (a team, a partner): its token creates worlds that it alone
 * controls, up to its quota. Kept in memory, like the worlds: a restart forgets both (in hosted
 * mode, PostgreSQL keeps both: hosted-worlds.ts).
 */
export interface Tenant {
  readonly id: string
  readonly name: string
  /** Worlds it may hold at once. */
  readonly maxWorlds: number
  readonly createdAtMs: number
  /** The key its token is kept under (the token itself is given once, when the tenant is created). */
  readonly tokenKey: string
}

/** Whom a token the sandbox made opens the control plane to: one world, or a tenant's worlds. */
export type TokenHolder = { kind: 'world', world: KnownWorld } | { kind: 'tenant', tenant: Tenant }

export interface NewTenant {
  name?: string
  maxWorlds?: number
}

/** What the administrator may change of a tenant (PATCH /_sandbox/tenants/{id}). */
export type TenantChange = NewTenant

/**
 * What the registry and the tenants ask of a catalogue shared by several instances (hosted mode:
 * hosted-worlds.ts; absent: the process's own). Every instance knows every world and tenant there,
 * and holds the worlds it owns (ownership.ts).
 */
export interface SharedCatalogue {
  /** A world of the catalogue, held here or not. */
  find(worldId: string): KnownWorld | undefined
  /** The worlds of the catalogue, and those of a tenant. */
  list(): KnownWorld[]
  ownedBy(tenantId: string): KnownWorld[]
  /** The world's data as its log holds it now (a world `from` copies), or undefined when this instance holds it (copied here). */
  copyOf(worldId: string): Promise<Buffer | undefined>
  /** Reads the start of a world from the catalogue (a reset to it), not held by the instance. */
  startOf(worldId: string): () => Promise<Buffer>
  /** Every world (or a tenant's), the default one first, as their owners last wrote their facts. */
  listing(tenantId?: string): Promise<WorldListing[]>
  /** Adds the world where every instance sees it (and the first request for it, at any instance, takes it: ownership.ts). */
  addWorld(world: World, start: Buffer, owner: Tenant | undefined, full: () => ApiError): Promise<void>
  deleteWorld(id: string, apply: () => void): Promise<boolean>
  addTenant(tenant: Tenant, register: () => void): Promise<void>
  /** Writes the tenant as it is now (its name, quota and token); false when it is not there. */
  updateTenant(tenant: Tenant, apply: () => void): Promise<boolean>
  deleteTenant(id: string, apply: () => void): Promise<boolean>
}

/** What the tenants need of the worlds: their tokens, who owns which, and deleting one. */
export interface TenantWorlds {
  readonly tokens: TokenHolders<TokenHolder>
  readonly limits: { maxWorlds: number }
  /** Hosted mode: where tenants are added and deleted first. */
  readonly shared: SharedCatalogue | undefined
  /** The worlds the tenant holds now (expired ones are deleted on the way). */
  ownedBy(tenantId: string): KnownWorld[]
  delete(worldId: string): boolean
}

/** The tenants of the process, made by the programme's administrator (the holder of the sandbox's control token). */
export class Tenants {
  private readonly tenants = new Map<string, Tenant>()

  constructor (private readonly worlds: TenantWorlds, private readonly realNow: () => number) {}

  /** A new tenant and its token (given now only). Past MAX_TENANTS, 409. */
  async create (request: NewTenant): Promise<{ tenant: Tenant, token: string }> {
    const most = this.worlds.limits.maxWorlds
    this.checkQuota(request.maxWorlds)
    if (this.tenants.size >= MAX_TENANTS) throw tooManyTenants(MAX_TENANTS)
    const token = newControlToken()
    const tenant: Tenant = {
      id: newId('t'),
      name: request.name ?? `tenant ${this.tenants.size + 1}`,
      maxWorlds: request.maxWorlds ?? Math.min(DEFAULT_TENANT_WORLDS, most),
      createdAtMs: this.realNow(),
      tokenKey: TokenHolders.keyOf(token)
    }
    const register = () => this.register(tenant)
    if (this.worlds.shared === undefined) register()
    else await this.worlds.shared.addTenant(tenant, register)
    return { tenant, token }
  }

  /**
   * Changes a tenant's name or quota (the worlds it holds stay, a lower quota only stops it
   * creating more), in the shared catalogue first in hosted mode; undefined when there is none.
   */
  async update (id: string, change: TenantChange): Promise<Tenant | undefined> {
    this.checkQuota(change.maxWorlds)
    const tenant = this.tenants.get(id)
    if (tenant === undefined) return undefined
    return await this.replaceWith({ ...tenant, name: change.name ?? tenant.name, maxWorlds: change.maxWorlds ?? tenant.maxWorlds })
  }

  /**
   * A new token for the tenant (given now only): the old one opens nothing from now on, on every
   * instance (hosted mode: each reloads the catalogue before its next request). Undefined when there is none.
   */
  async newToken (id: string): Promise<{ tenant: Tenant, token: string } | undefined> {
    const tenant = this.tenants.get(id)
    if (tenant === undefined) return undefined
    const token = newControlToken()
    const changed = await this.replaceWith({ ...tenant, tokenKey: TokenHolders.keyOf(token) })
    return changed === undefined ? undefined : { tenant: changed, token }
  }

  /** Makes the tenants these (hosted mode: as the shared catalogue holds them); the worlds of those deleted go too. */
  adopt (rows: readonly Tenant[]): void {
    const listed = new Set(rows.map((row) => row.id))
    for (const id of [...this.tenants.keys()]) if (!listed.has(id)) this.delete(id)
    for (const row of rows) {
      const held = this.tenants.get(row.id)
      if (held === undefined) this.register({ ...row })
      else if (held.name !== row.name || held.maxWorlds !== row.maxWorlds || held.tokenKey !== row.tokenKey) this.replace(held, { ...row })
    }
  }

  /** 400 for a quota above the worlds the sandbox holds at once. */
  private checkQuota (maxWorlds: number | undefined): void {
    const most = this.worlds.limits.maxWorlds
    if (maxWorlds !== undefined && maxWorlds > most) {
      throw invalidField('maxWorlds', `must be at most ${most}, the worlds this sandbox holds at once (SANDBOX_MAX_WORLDS)`)
    }
  }

  /** The tenant as `next` from now on, in the shared catalogue first in hosted mode (undefined: deleted meanwhile). */
  private async replaceWith (next: Tenant): Promise<Tenant | undefined> {
    const apply = () => {
      const held = this.tenants.get(next.id)
      if (held !== undefined) this.replace(held, next)
    }
    if (this.worlds.shared === undefined) apply()
    else if (!await this.worlds.shared.updateTenant(next, apply)) return undefined
    return this.tenants.get(next.id)
  }

  private register (tenant: Tenant): void {
    this.tenants.set(tenant.id, tenant)
    this.worlds.tokens.add(tenant.tokenKey, { kind: 'tenant', tenant })
  }

  /** A tenant changed: a token changed stops opening anything at once. */
  private replace (held: Tenant, next: Tenant): void {
    if (held.tokenKey !== next.tokenKey) this.worlds.tokens.remove(held.tokenKey)
    this.register(next)
  }

  /** Deletes a tenant, in the shared catalogue first in hosted mode; false when there was none. */
  async remove (id: string): Promise<boolean> {
    if (this.worlds.shared === undefined) return this.delete(id)
    return await this.worlds.shared.deleteTenant(id, () => this.delete(id))
  }

  get (id: string): Tenant | undefined {
    return this.tenants.get(id)
  }

  /** The tenants, oldest first. */
  list (): Tenant[] {
    return [...this.tenants.values()]
  }

  /** How many worlds the tenant holds now. */
  worldCount (tenant: Tenant): number {
    return this.worlds.ownedBy(tenant.id).length
  }

  /** Deletes a tenant here: its token opens nothing from now on, and its worlds are deleted (their credentials answer 401). */
  delete (id: string): boolean {
    const tenant = this.tenants.get(id)
    if (tenant === undefined) return false
    this.tenants.delete(id)
    this.worlds.tokens.remove(tenant.tokenKey)
    for (const world of this.worlds.ownedBy(id)) this.worlds.delete(world.id)
    return true
  }
}
