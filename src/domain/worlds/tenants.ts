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
    if (request.maxWorlds !== undefined && request.maxWorlds > most) {
      throw invalidField('maxWorlds', `must be at most ${most}, the worlds this sandbox holds at once (SANDBOX_MAX_WORLDS)`)
    }
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

  /** Makes the tenants these (hosted mode: as the shared catalogue holds them); the worlds of those deleted go too. */
  adopt (rows: readonly Tenant[]): void {
    const listed = new Set(rows.map((row) => row.id))
    for (const id of [...this.tenants.keys()]) if (!listed.has(id)) this.delete(id)
    for (const row of rows) if (!this.tenants.has(row.id)) this.register({ ...row })
  }

  private register (tenant: Tenant): void {
    this.tenants.set(tenant.id, tenant)
    this.worlds.tokens.add(tenant.tokenKey, { kind: 'tenant', tenant })
  }

  /** Deletes a tenant, in the shared catalogue first in hosted mode; false when there was none. */
  async remove (id: string): Promise<boolean> {
    if (this.worlds.shared === undefined) return this.delete(id)
    return await this.worlds.shared.deleteTenant(id, () => this.delete(id))
  }

  get (id: string): Tenant | undefined {
    return this.tenants.get(id)
  }

  /** Whether this tenant is still there (not deleted meanwhile). */
  holds (tenant: Tenant): boolean {
    return this.tenants.get(tenant.id) === tenant
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
