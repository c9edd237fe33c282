import type pg from 'pg'

/**
 * Who owns each world (migrations/postgres/009-world-owners.sql): a lease PostgreSQL's clock times.
 * An instance claims a world whose lease ran out (or that it holds), renews every lease it holds
 * in one statement, and gives them back when it stops. Each claim bumps the world's epoch, which
 * fences the log's appends (world-log.ts).
 */

/** What a claim learnt: the world is this instance's at `epoch`, or another's (until its lease runs out, as far as PostgreSQL knows now). */
export type Claim =
  | { mine: true, epoch: number }
  | { mine: false, instance: string, address: string, leftMs: number }

/** Claims the world unless another instance's lease on it runs; reads that instance in the same statement. */
const CLAIM = `
  WITH claimed AS (
    INSERT INTO world_owners (world_id, instance, address, epoch, expires_at)
    VALUES ($1, $2, $3, 1, now() + $4::int * interval '1 millisecond')
    ON CONFLICT (world_id) DO UPDATE SET instance = excluded.instance, address = excluded.address,
      epoch = world_owners.epoch + 1, expires_at = excluded.expires_at
    WHERE world_owners.expires_at < now() OR world_owners.instance = excluded.instance
    RETURNING epoch
  )
  SELECT (SELECT epoch FROM claimed) AS epoch, o.instance, o.address,
         greatest(0, extract(epoch FROM o.expires_at - now()) * 1000)::float8 AS left_ms
  FROM (SELECT 1) AS one LEFT JOIN world_owners o ON o.world_id = $1`

/**
 * Renews the leases this instance holds at their epochs, and writes the facts and last uses given
 * (the catalogue's, which its sweep of idle worlds reads); answers the worlds still this instance's.
 * The owners' rows are locked first, in the order of their ids, as a deletion of worlds locks them
 * (catalogue.ts): one waits for the other instead of deadlocking with it.
 */
const RENEW = `
  WITH locked AS MATERIALIZED (
    SELECT world_id FROM world_owners WHERE world_id = ANY($3::text[]) AND instance = $1 ORDER BY world_id FOR UPDATE
  ), renewed AS (
    UPDATE world_owners o SET expires_at = now() + $2::int * interval '1 millisecond', facts = coalesce(h.facts, o.facts)
    FROM unnest($3::text[], $4::bigint[], $5::jsonb[]) AS h(world_id, epoch, facts)
    WHERE o.world_id = h.world_id AND o.epoch = h.epoch AND o.instance = $1 AND o.world_id IN (SELECT world_id FROM locked)
    RETURNING o.world_id
  ), used AS (
    UPDATE sandbox_worlds w SET last_used_ms = greatest(w.last_used_ms, u.ms)
    FROM unnest($3::text[], $6::bigint[]) AS u(world_id, ms)
    WHERE w.world_id = u.world_id AND w.world_id IN (SELECT world_id FROM renewed)
  )
  SELECT world_id FROM renewed`

export class Owners {
  constructor (private readonly pool: pg.Pool, readonly instance: string, readonly leaseMs: number) {}

  /** Claims the world for this instance at `address` (a world no lease names yet is this instance's at epoch 1). */
  async claim (worldId: string, address: string): Promise<Claim> {
    const { rows } = await this.pool.query<{ epoch: string | null, instance: string | null, address: string | null, left_ms: number | null }>({
      name: 'sandbox-claim', text: CLAIM, values: [worldId, this.instance, address, this.leaseMs]
    })
    const row = rows[0]
    if (row.epoch !== null) return { mine: true, epoch: Number(row.epoch) }
    return { mine: false, instance: row.instance ?? '', address: row.address ?? '', leftMs: row.left_ms ?? 0 }
  }

  /**
   * Renews the leases on these worlds at these epochs (one statement for all), writing each world's
   * facts given (null: unchanged) and last use; answers the worlds still this instance's.
   */
  async renew (held: ReadonlyArray<{ worldId: string, epoch: number, facts: string | null, lastUsedMs: number }>): Promise<Set<string>> {
    if (held.length === 0) return new Set()
    const { rows } = await this.pool.query<{ world_id: string }>({
      name: 'sandbox-renew',
      text: RENEW,
      values: [this.instance, this.leaseMs, held.map((h) => h.worldId), held.map((h) => h.epoch), held.map((h) => h.facts), held.map((h) => Math.round(h.lastUsedMs))]
    })
    return new Set(rows.map((row) => row.world_id))
  }

  /** The address of the instance whose lease on the world runs now, when it is not this one. */
  async ownerElsewhere (worldId: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ address: string }>(
      'SELECT address FROM world_owners WHERE world_id = $1 AND instance <> $2 AND expires_at > now()', [worldId, this.instance])
    return rows[0]?.address
  }

  /** Gives the leases back: the next request's instance claims at once. */
  async release (worldIds: readonly string[]): Promise<void> {
    if (worldIds.length === 0) return
    await this.pool.query("UPDATE world_owners SET expires_at = now() - interval '1 millisecond' WHERE instance = $1 AND world_id = ANY($2)", [this.instance, worldIds])
  }

  /** What each world's owner last wrote of its data (worlds no owner wrote for are absent). */
  async facts (): Promise<Map<string, unknown>> {
    const { rows } = await this.pool.query<{ world_id: string, facts: unknown }>('SELECT world_id, facts FROM world_owners WHERE facts IS NOT NULL')
    return new Map(rows.map((row) => [row.world_id, row.facts]))
  }
}
