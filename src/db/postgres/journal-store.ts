import type pg from 'pg'
import { MOVE_LOCK, moveRecords, shipRecords, type ShippedRecord } from './examiner-store.js'
import { inTransaction } from './world-log.js'

/**
 * The request journals of every instance in PostgreSQL (migrations/postgres/003-journal.sql):
 * entries shipped by the instance that answered them, moved into one journal in the order they
 * were answered and read by any instance once every instance alive has shipped what it had
 * answered before the read began.
 */

/** The channel a reader announces its number on: every instance ships its entries when it hears it. */
export const JOURNAL_CHANNEL = 'sandbox_journal_wanted'
/** An instance not seen for this long (by the database's clock) is not waited for: it ended. */
const ALIVE = "interval '3 seconds'"
const LAST_READ = 'SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM journal_reads'

/** One entry as shipped: what the journal's filters select by, and its JSON text without the id. */
export interface ShippedEntry {
  /** Its id in the journal of the instance that answered, and when the request arrived (see EntryText.realMs). */
  localId: number
  realMs: number
  worldId: string
  atMs: number
  method: string
  path: string
  agencyId: number | null
  status: number
  entry: string
}

/** What a read selects in the database (the path glob is matched by the reader). */
export interface StoredFilter {
  method?: string
  agencyId?: number
  status?: number
  sinceId?: number
  sinceMs?: number
}

/** The entries kept per world: the newest, within both bounds (the local journal's). */
export interface JournalBounds {
  capacity: number
  budgetBytes: number
}

export class JournalStore {
  constructor (private readonly pool: pg.Pool, private readonly instance: string) {}

  /** This instance is alive, with nothing to ship for the reads before now. */
  async register (): Promise<void> {
    await this.pool.query(
      `INSERT INTO journal_instances (instance, shipped_read) VALUES ($1, (${LAST_READ}))
       ON CONFLICT (instance) DO UPDATE SET seen = now()`, [this.instance])
  }

  /** This instance is still alive (listed again, as behind every read, if its row was lost). */
  async beat (): Promise<void> {
    await this.pool.query(
      'INSERT INTO journal_instances (instance, shipped_read) VALUES ($1, 0) ON CONFLICT (instance) DO UPDATE SET seen = now()', [this.instance])
  }

  async unregister (): Promise<void> {
    await this.pool.query('DELETE FROM journal_instances WHERE instance = $1', [this.instance])
  }

  /** The last read announced: what a ship that collects its entries after asking covers. */
  async lastRead (): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(LAST_READ)
    return Number(rows[0].n)
  }

  /**
   * Ships entries (each with its order here and the time it was answered) and records that this
   * instance shipped for the reads up to `read`. Until a reader moves them, this instance's
   * shipped entries of a world are kept within its journal's capacity (the newest). The examiner's
   * records go in the same transaction (examiner-store.ts); `read` undefined: they alone are shipped.
   */
  async ship (read: number | undefined, entries: readonly ShippedEntry[], capacity: (worldId: string) => number, records: readonly ShippedRecord[] = []): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await shipRecords(client, this.instance, records)
      if (entries.length > 0) {
        const column = <K extends keyof ShippedEntry>(key: K) => entries.map((e) => e[key])
        await client.query(
          `INSERT INTO journal_shipped (instance, local_id, real_ms, world_id, at_ms, method, path, agency_id, status, entry)
           SELECT $1, * FROM unnest($2::bigint[], $3::float8[], $4::text[], $5::float8[], $6::text[], $7::text[], $8::bigint[], $9::int[], $10::text[])`,
          [this.instance, column('localId'), column('realMs'), column('worldId'), column('atMs'), column('method'), column('path'),
            column('agencyId'), column('status'), column('entry')]
        )
        const newest = new Map(entries.map((e) => [e.worldId, e.localId]))
        for (const [worldId, localId] of newest) {
          await client.query('DELETE FROM journal_shipped WHERE instance = $1 AND world_id = $2 AND local_id <= $3', [this.instance, worldId, localId - capacity(worldId)])
        }
      }
      // a ship of the examiner's records alone (read undefined) is no ship for any read
      if (read === undefined) return
      await client.query(
        `INSERT INTO journal_instances (instance, shipped_read) VALUES ($1, $2)
         ON CONFLICT (instance) DO UPDATE SET seen = now(), shipped_read = greatest(journal_instances.shipped_read, $2)`,
        [this.instance, read])
    })
  }

  /**
   * Moves every entry shipped into the journal, in the order the requests arrived (each
   * instance's in its own order), then keeps each world's newest within its bounds; the examiner's
   * records are moved too. One move at a time, of any instance: ids are given and committed in one order.
   */
  async publish (bounds: (worldId: string) => JournalBounds): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query(MOVE_LOCK)
      await moveRecords(client)
      const { rows } = await client.query<{ world_id: string }>(
        `WITH moved AS (DELETE FROM journal_shipped RETURNING *),
         added AS (INSERT INTO journal_entries (world_id, at_ms, method, path, agency_id, status, entry, bytes, instance, local_id)
           SELECT world_id, at_ms, method, path, agency_id, status, entry, octet_length(entry), instance, local_id FROM moved
           ORDER BY real_ms, instance, local_id RETURNING world_id)
         SELECT DISTINCT world_id FROM added`)
      for (const { world_id: worldId } of rows) {
        const { capacity, budgetBytes } = bounds(worldId)
        await client.query(
          `DELETE FROM journal_entries WHERE world_id = $1 AND id <= (
             SELECT id FROM (SELECT id, row_number() OVER w AS n, sum(bytes) OVER w AS total FROM journal_entries
                             WHERE world_id = $1 WINDOW w AS (ORDER BY id DESC)) newest
             WHERE n > $2 OR total > $3 ORDER BY id DESC LIMIT 1)`, [worldId, capacity, budgetBytes])
      }
    })
  }

  /** A new read: its number, announced to every instance listening, naming this one (which ships for it itself). */
  async announceRead (): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(`SELECT nextval('journal_reads') AS n, pg_notify('${JOURNAL_CHANNEL}', $1) AS _`, [this.instance])
    return Number(rows[0].n)
  }

  /** The instances alive that have not shipped for the read `read` yet. */
  async behind (read: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ instance: string }>(
      `SELECT instance FROM journal_instances WHERE shipped_read < $1 AND seen > now() - ${ALIVE}`, [read])
    return rows.map((r) => r.instance)
  }

  /** A world's entries the filter selects, oldest first. */
  async entries (worldId: string, f: StoredFilter): Promise<Array<{ id: string, path: string, entry: string }>> {
    const { rows } = await this.pool.query<{ id: string, path: string, entry: string }>(
      `SELECT id, path, entry FROM journal_entries WHERE world_id = $1
         AND ($2::text IS NULL OR method = $2) AND ($3::bigint IS NULL OR agency_id = $3)
         AND ($4::int IS NULL OR status = $4) AND ($5::bigint IS NULL OR id > $5) AND ($6::float8 IS NULL OR at_ms > $6)
       ORDER BY id`,
      [worldId, f.method ?? null, f.agencyId ?? null, f.status ?? null, f.sinceId ?? null, f.sinceMs ?? null])
    return rows
  }

  /** Forgets a world's entries, those shipped and not yet moved included. */
  async clear (worldId: string): Promise<void> {
    await this.pool.query('WITH shipped AS (DELETE FROM journal_shipped WHERE world_id = $1) DELETE FROM journal_entries WHERE world_id = $1', [worldId])
  }
}
