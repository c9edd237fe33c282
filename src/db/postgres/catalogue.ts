import { createHash } from 'node:crypto'
import type pg from 'pg'
import { CommitStats } from '../../metrics/histogram.js'
import { inTransaction } from './world-log.js'

/**
 * The catalogue of a hosted sandbox (migrations/postgres/002-catalogue.sql): its tenants and the
 * worlds created, with the version every change bumps and announces. Changes are made one at a
 * time under the catalogue's lock, so the bounds they check (worlds at once, a tenant's quota) hold
 * across instances.
 */

export interface TenantRow {
  id: string
  name: string
  maxWorlds: number
  createdAtMs: number
  tokenKey: string
}

export interface WorldRow {
  id: string
  name: string
  tenantId: string | undefined
  tokenKey: string
  source: string
  ttlMs: number
  createdAtMs: number
  lastUsedMs: number
  /** Bytes its data may take (undefined: each instance's SANDBOX_WORLD_MAX_BYTES). */
  maxBytes: number | undefined
  /** Its integrations get secrets of the world's own (worlds/world-ids.ts ownSecret). */
  ownSecrets: boolean
}

export interface CatalogueRows {
  version: number
  tenants: TenantRow[]
  worlds: WorldRow[]
}

/** The channel every change of the catalogue is announced on, with its version: each instance reloads it. */
export const CATALOGUE_CHANNEL = 'sandbox_catalogue'
/** What sandbox_appends names as the subject of a change of the catalogue (outcomes.ts). */
const CATALOGUE_SUBJECT = '~catalogue'

/** A change of the catalogue, in its transaction and under its lock. */
export interface CatalogueChange {
  /** The version before this change. */
  readonly version: number
  /** Worlds in the catalogue now, and those of one tenant. */
  countWorlds(tenantId?: string): Promise<number>
  countTenants(): Promise<number>
  /**
   * A world, its start (written once for the worlds that share it), its log's first entry (its
   * start, which is its data now), and what listings show of it (JSON) until an owner takes it
   * (its row in world_owners names no instance and has run out: owners.ts).
   */
  addWorld(row: WorldRow, start: Buffer, facts: string): Promise<void>
  addTenant(row: TenantRow): Promise<void>
  /** Writes a tenant's name, quota and token key; false when it is not there. */
  updateTenant(row: TenantRow): Promise<boolean>
  /** A tenant's quota as the catalogue holds it (undefined: no such tenant). */
  tenantQuota(id: string): Promise<number | undefined>
  /** Deletes the worlds and their logs; answers those that were there. */
  deleteWorlds(ids: string[]): Promise<string[]>
  /** Deletes a tenant and its worlds; answers whether it was there. */
  deleteTenant(id: string): Promise<boolean>
  /** The worlds that expire when idle, with their latest use their owners wrote, and whether an owner holds them now. */
  expiringWorlds(): Promise<Array<{ id: string, lastUsedMs: number, ttlMs: number, held: boolean }>>
}

const CATALOGUE_LOCK = 'catalogue'

/** Each start's digest, computed once (the worlds made from the start-up fixture share one buffer). */
const digests = new WeakMap<Buffer, string>()
function digestOf (start: Buffer): string {
  let digest = digests.get(start)
  if (digest === undefined) {
    digest = createHash('sha256').update(start).digest('hex')
    digests.set(start, digest)
  }
  return digest
}

type TenantRecord = { tenant_id: string, name: string, max_worlds: number, created_at_ms: string, token_key: string }
type WorldRecord = {
  world_id: string,
  name: string,
  tenant_id: string | null,
  token_key: string,
  source: string
  ttl_ms: string,
  created_at_ms: string,
  last_used_ms: string,
  max_bytes: string | null,
  own_secrets: boolean
}

export class Catalogue {
  /** This instance's changes of the catalogue: their outcomes and times (/_sandbox/metrics). */
  readonly stats = new CommitStats()

  constructor (private readonly pool: pg.Pool) {}

  /** The catalogue's version: one small question, before a token is trusted. */
  async version (): Promise<number> {
    const { rows } = await this.pool.query<{ version: string }>({ name: 'sandbox-catalogue-version', text: 'SELECT version FROM sandbox_catalogue' })
    return Number(rows[0].version)
  }

  async load (): Promise<CatalogueRows> {
    const client = await this.pool.connect()
    try {
      // one snapshot of the three tables
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      const version = await client.query<{ version: string }>('SELECT version FROM sandbox_catalogue')
      const tenants = await client.query<TenantRecord>('SELECT tenant_id, name, max_worlds, created_at_ms, token_key FROM sandbox_tenants ORDER BY created_at_ms, tenant_id')
      const worlds = await client.query<WorldRecord>(
        'SELECT world_id, name, tenant_id, token_key, source, ttl_ms, created_at_ms, last_used_ms, max_bytes, own_secrets FROM sandbox_worlds ORDER BY created_at_ms, world_id'
      )
      await client.query('COMMIT')
      return {
        version: Number(version.rows[0].version),
        tenants: tenants.rows.map((r) => ({ id: r.tenant_id, name: r.name, maxWorlds: r.max_worlds, createdAtMs: Number(r.created_at_ms), tokenKey: r.token_key })),
        worlds: worlds.rows.map((r) => ({
          id: r.world_id,
          name: r.name,
          tenantId: r.tenant_id ?? undefined,
          tokenKey: r.token_key,
          source: r.source,
          ttlMs: Number(r.ttl_ms),
          createdAtMs: Number(r.created_at_ms),
          lastUsedMs: Number(r.last_used_ms),
          maxBytes: r.max_bytes === null ? undefined : Number(r.max_bytes),
          ownSecrets: r.own_secrets
        }))
      }
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined)
      throw e
    } finally {
      client.release()
    }
  }

  /** A world's start (what a reset returns it to), if the world is still in the catalogue. */
  async start (worldId: string): Promise<Buffer | undefined> {
    const { rows } = await this.pool.query<{ body: Buffer }>(
      'SELECT s.body FROM sandbox_worlds w JOIN sandbox_world_starts s ON s.digest = w.start_digest WHERE w.world_id = $1', [worldId])
    return rows[0]?.body
  }

  /**
   * Runs one change under the catalogue's lock, in one transaction; when it changed anything (it
   * answers true), the version is bumped and announced. Answers the version after the change and
   * the change's own result. A COMMIT whose answer is lost is resolved before this answers
   * (outcomes.ts): it throws NotApplied or OutcomeUnknown when that change was not, or may not have been, applied.
   */
  async change<T> (run: (change: CatalogueChange) => Promise<{ changed: boolean, result: T }>): Promise<{ before: number, after: number, result: T }> {
    const outcome = await inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [CATALOGUE_LOCK])
      const before = Number((await client.query<{ version: string }>('SELECT version FROM sandbox_catalogue')).rows[0].version)
      const { changed, result } = await run(changeOn(client, before))
      let after = before
      if (changed) {
        after = before + 1
        await client.query('UPDATE sandbox_catalogue SET version = $1', [after])
        await client.query('SELECT pg_notify($1, $2)', [CATALOGUE_CHANNEL, String(after)])
      }
      return { before, after, result }
    }, { subject: CATALOGUE_SUBJECT, stats: this.stats })
    return outcome
  }
}

function changeOn (client: pg.PoolClient, version: number): CatalogueChange {
  /**
   * Deletes worlds, their owners' rows locked first and in the order of their ids, as a renewal
   * (owners.ts) and an append (world-log.ts) lock them: a deletion then waits for them, where the
   * other order deadlocks (PostgreSQL cancels one: the deletion answered 503).
   */
  const deleteWorlds = async (ids: string[]): Promise<string[]> => {
    if (ids.length === 0) return []
    await client.query('SELECT 1 FROM world_owners WHERE world_id = ANY($1) ORDER BY world_id FOR UPDATE', [ids])
    const { rows } = await client.query<{ world_id: string }>('DELETE FROM sandbox_worlds WHERE world_id = ANY($1) RETURNING world_id', [ids])
    await client.query('DELETE FROM world_log WHERE world_id = ANY($1)', [ids])
    await client.query('DELETE FROM world_owners WHERE world_id = ANY($1)', [ids])
    await client.query('DELETE FROM sandbox_world_starts s WHERE NOT EXISTS (SELECT 1 FROM sandbox_worlds w WHERE w.start_digest = s.digest)')
    return rows.map((r) => r.world_id)
  }
  return {
    version,
    async countWorlds (tenantId) {
      const { rows } = tenantId === undefined
        ? await client.query<{ n: string }>('SELECT count(*) AS n FROM sandbox_worlds')
        : await client.query<{ n: string }>('SELECT count(*) AS n FROM sandbox_worlds WHERE tenant_id = $1', [tenantId])
      return Number(rows[0].n)
    },
    async countTenants () {
      return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM sandbox_tenants')).rows[0].n)
    },
    async addWorld (row, start, facts) {
      const digest = digestOf(start)
      const known = await client.query('SELECT 1 FROM sandbox_world_starts WHERE digest = $1', [digest])
      if (known.rowCount === 0) await client.query('INSERT INTO sandbox_world_starts (digest, body) VALUES ($1, $2)', [digest, start])
      await client.query(
        `INSERT INTO sandbox_worlds (world_id, name, tenant_id, token_key, source, start_digest, ttl_ms, created_at_ms, last_used_ms, max_bytes, own_secrets)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [row.id, row.name, row.tenantId ?? null, row.tokenKey, row.source, digest, row.ttlMs, row.createdAtMs, row.lastUsedMs, row.maxBytes ?? null, row.ownSecrets]
      )
      await client.query("INSERT INTO world_log (world_id, seq, kind, body, instance) VALUES ($1, 1, 'snapshot', NULL, 'catalogue')", [row.id])
      await client.query("INSERT INTO world_owners (world_id, instance, address, epoch, expires_at, facts) VALUES ($1, '', '', 0, 'epoch', $2)", [row.id, facts])
    },
    async addTenant (row) {
      await client.query(
        'INSERT INTO sandbox_tenants (tenant_id, name, max_worlds, created_at_ms, token_key) VALUES ($1, $2, $3, $4, $5)',
        [row.id, row.name, row.maxWorlds, row.createdAtMs, row.tokenKey]
      )
    },
    async updateTenant (row) {
      const { rowCount } = await client.query(
        'UPDATE sandbox_tenants SET name = $2, max_worlds = $3, token_key = $4 WHERE tenant_id = $1',
        [row.id, row.name, row.maxWorlds, row.tokenKey]
      )
      return (rowCount ?? 0) > 0
    },
    async tenantQuota (id) {
      const { rows } = await client.query<{ max_worlds: number }>('SELECT max_worlds FROM sandbox_tenants WHERE tenant_id = $1', [id])
      return rows[0]?.max_worlds
    },
    deleteWorlds,
    async deleteTenant (id) {
      // its worlds cannot change meanwhile: every change of the catalogue holds its lock
      const worlds = await client.query<{ world_id: string }>('SELECT world_id FROM sandbox_worlds WHERE tenant_id = $1', [id])
      await deleteWorlds(worlds.rows.map((r) => r.world_id))
      const { rowCount } = await client.query('DELETE FROM sandbox_tenants WHERE tenant_id = $1', [id])
      return (rowCount ?? 0) > 0
    },
    async expiringWorlds () {
      const { rows } = await client.query<{ world_id: string, last_used_ms: string, ttl_ms: string, held: boolean }>(
        `SELECT w.world_id, w.last_used_ms, w.ttl_ms, coalesce(o.expires_at > now(), false) AS held
         FROM sandbox_worlds w LEFT JOIN world_owners o ON o.world_id = w.world_id WHERE w.ttl_ms > 0`
      )
      return rows.map((r) => ({ id: r.world_id, lastUsedMs: Number(r.last_used_ms), ttlMs: Number(r.ttl_ms), held: r.held }))
    }
  }
}
