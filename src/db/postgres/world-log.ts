import pg from 'pg'

/**
 * Worlds' data kept in PostgreSQL as logs (migrations/postgres/001-world-log.sql, 010): each
 * world's latest snapshot (its SQLite databases, whole) and the commits its owner made since. Only
 * the world's owner appends (src/domain/worlds/owned-world.ts), each append fenced by the epoch of
 * its lease (owners.ts) in the same statement; it reads the log once, when it takes the world.
 */

export interface LogEntry {
  seq: number
  kind: 'snapshot' | 'commit'
  /** The data: a commit's steps, or a snapshot's pages (null: no step; a snapshot without a body is the world's start). */
  body: Buffer | null
  /** The examiner's records, the same way (null: no step, or none kept). */
  records: Buffer | null
  /** The world's instruments (clock, fault rules, rate window, simulator) as they stood, as JSON, when they changed (null: unchanged). */
  state: Buffer | null
}

export type NewEntry = Omit<LogEntry, 'seq'>

/** The append was refused: the instance no longer holds the world's lease at the epoch it appended with (another took the world). */
export class Fenced extends Error {
  constructor (worldId: string) {
    super(`world ${worldId} is owned by another instance now`)
    this.name = 'Fenced'
  }
}

export interface PoolSettings {
  url: string
  /** Connections of this instance at most. */
  max?: number
  onError?: (error: Error) => void
}

/**
 * A pool with bounded waits: a server that does not answer fails a request within seconds (the
 * instance answers 503) instead of holding it. A connection the server closes is reported, not
 * thrown: an idle one, and one taken from the pool between two queries (a write turn's, when
 * PostgreSQL shuts down), which the pool leaves without a listener, so that its error would end
 * the process; its next query fails instead, and the request answers 503.
 */
export function openPool ({ url, max = 10, onError }: PoolSettings): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: 3000,
    // eslint-disable-next-line camelcase -- pg's own option names
    query_timeout: 10_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // eslint-disable-next-line camelcase -- pg's own option names
    application_name: 'agency-sandbox'
  })
  // every connection reports its own error, idle or taken; the pool's event repeats an idle one's
  pool.on('connect', (client) => client.on('error', (error) => onError?.(error)))
  pool.on('error', () => undefined)
  return pool
}

/**
 * Runs `run` in one transaction on a connection of the pool: committed when it resolves, rolled
 * back when it throws (a connection that failed is not given back to the pool).
 */
export async function inTransaction<T> (pool: pg.Pool, run: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const result = await run(client)
    await client.query('COMMIT')
    client.release()
    return result
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined)
    client.release(e as Error)
    throw e
  }
}

/** The log from its latest snapshot (a snapshot deletes what came before it); a snapshot without a body is the world's start (002-catalogue.sql). */
const LOAD = `
  SELECT l.seq, l.kind, coalesce(l.body, s.body) AS body, l.records, l.state FROM world_log l
  LEFT JOIN sandbox_worlds w ON l.kind = 'snapshot' AND l.body IS NULL AND w.world_id = l.world_id
  LEFT JOIN sandbox_world_starts s ON s.digest = w.start_digest
  WHERE l.world_id = $1 ORDER BY l.seq`

/**
 * One entry, in one statement (so one round trip, committed on its own): appended only while the
 * owner's row names this instance at this epoch, which it holds FOR SHARE until the end, so a claim
 * (an UPDATE of that row) waits for it and then sees it; a snapshot deletes the entries before it.
 */
const APPEND = `
  WITH owner AS (
    SELECT 1 FROM world_owners WHERE world_id = $1 AND instance = $2 AND epoch = $3 FOR SHARE
  ), earlier AS (
    DELETE FROM world_log WHERE world_id = $1 AND $5 = 'snapshot' AND seq < $4 AND EXISTS (SELECT 1 FROM owner)
  ), entry AS (
    INSERT INTO world_log (world_id, seq, kind, body, records, state, instance)
    SELECT $1, $4, $5, $6, $7, $8, $2 FROM owner RETURNING 1
  )
  SELECT count(*)::int AS appended FROM entry`

type EntryRow = Omit<LogEntry, 'seq'> & { seq: string }

export class WorldLog {
  constructor (readonly pool: pg.Pool, private readonly instance: string) {}

  /** The world's log from its latest snapshot ([] : the world has no log, or it was deleted). */
  async load (worldId: string): Promise<LogEntry[]> {
    const { rows } = await this.pool.query<EntryRow>(LOAD, [worldId])
    return rows.map((row) => ({ ...row, seq: Number(row.seq) }))
  }

  /** Appends the entry `seq` to the world's log as its owner at `epoch`; Fenced when that is no longer this instance. */
  async append (worldId: string, epoch: number, seq: number, entry: NewEntry): Promise<void> {
    const { rows } = await this.pool.query<{ appended: number }>({
      name: 'sandbox-append',
      text: APPEND,
      values: [worldId, this.instance, epoch, seq, entry.kind, entry.body, entry.records, entry.state]
    })
    if (rows[0].appended !== 1) throw new Fenced(worldId)
  }
}
