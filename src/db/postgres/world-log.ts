import pg from 'pg'
import { CommitStats } from '../../metrics/histogram.js'
import type { CommitDelivery } from './commit-delivery.js'
import { commitMarked, markAppend, newAppendId, NotApplied, OutcomeUnknown } from './outcomes.js'

/**
 * Worlds' data kept in PostgreSQL as logs (migrations/postgres/001-world-log.sql): each world's
 * latest snapshot (its SQLite database, whole) and the commits made since. Instances replay the
 * entries they have not seen; a writer holds the world's lock (a transaction-scoped advisory
 * lock) from reading the entries it lacks to appending its own, so commits take one order.
 * Each turn that appends carries an id of its own, so that a COMMIT whose answer is lost is
 * resolved before anyone is answered (outcomes.ts).
 */

export interface LogEntry {
  seq: number
  kind: 'snapshot' | 'commit'
  /** Null only for a world's start asked for without it (entriesAfter). */
  body: Buffer | null
  /** The instruments the commit changed beside the data (see replica.ts). */
  effects: unknown
}

/** A writer's turn on one world's log: the world is locked until commit or rollback. */
export interface LogTurn {
  /** The log's last sequence number (0: empty). */
  readonly head: number
  entriesAfter(seq: number, start?: 'with' | 'without'): Promise<LogEntry[]>
  /**
   * Appends one entry after the head; a snapshot makes every earlier entry unnecessary (they are
   * deleted). A snapshot without a body is the world's start (a created world's: catalogue.ts).
   */
  append(kind: LogEntry['kind'], body: Buffer | undefined, effects?: unknown): Promise<number>
  commit(): Promise<void>
  rollback(): Promise<void>
}

/** The channel each commit notifies, with `<world id> <seq>`: readers replay before they are asked. */
export const LOG_CHANNEL = 'sandbox_world_log'

/** How long PostgreSQL may take: the bounds every connection of an instance's pool works under. */
export interface StorageBounds {
  /**
   * Each statement's and each lock wait's bound on the server (statement_timeout, lock_timeout);
   * the client gives up CLIENT_MARGIN_MS after it, in case the server does not answer at all.
   */
  statementTimeoutMs: number
  /** A new connection's bound, and a request's wait for a free connection of the pool. */
  connectTimeoutMs: number
}

export const DEFAULT_STORAGE_BOUNDS: StorageBounds = { statementTimeoutMs: 5000, connectTimeoutMs: 3000 }

/** The client waits this much longer than the server's own bound: a frozen server is given up shortly after. */
export const CLIENT_MARGIN_MS = 500

export interface PoolSettings {
  url: string
  /** Connections of this instance at most. */
  max?: number
  bounds?: StorageBounds
  onError?: (error: Error) => void
}

/**
 * A pool with bounded waits: a server that does not answer fails a request within its bounds (the
 * instance answers 503) instead of holding it. A connection the server closes is reported, not
 * thrown: an idle one, and one taken from the pool between two queries (a write turn's, when
 * PostgreSQL shuts down), which the pool leaves without a listener, so that its error would end
 * the process; its next query fails instead, and the request answers 503.
 */
export function openPool ({ url, max = 10, bounds = DEFAULT_STORAGE_BOUNDS, onError }: PoolSettings): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: bounds.connectTimeoutMs,
    // eslint-disable-next-line camelcase -- pg's own option names
    statement_timeout: bounds.statementTimeoutMs,
    // eslint-disable-next-line camelcase -- pg's own option names
    lock_timeout: bounds.statementTimeoutMs,
    // eslint-disable-next-line camelcase -- pg's own option names
    query_timeout: bounds.statementTimeoutMs + CLIENT_MARGIN_MS,
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

/** What a transaction that writes is marked with (outcomes.ts): the world whose log it appends to, or the catalogue. */
export interface Marked {
  subject: string
  stats: CommitStats
}

/**
 * Runs `run` in one transaction on a connection of the pool: committed when it resolves, rolled
 * back when it throws (a connection that failed is not given back to the pool). A transaction
 * `marked` carries an id, so that a COMMIT whose answer is lost is resolved (outcomes.ts).
 */
export async function inTransaction<T> (pool: pg.Pool, run: (client: pg.PoolClient) => Promise<T>, marked?: Marked): Promise<T> {
  const client = await pool.connect()
  const started = performance.now()
  let id: string | undefined
  try {
    await client.query('BEGIN')
    if (marked !== undefined) {
      id = newAppendId()
      await markAppend(client, id, marked.subject)
    }
    const result = await run(client)
    if (id === undefined) {
      await client.query('COMMIT')
      client.release()
    } else {
      await settle(marked!.stats, started, commitMarked(client, id, pool.options))
    }
    return result
  } catch (e) {
    if (!committing.has(e as object)) {
      if (marked !== undefined) marked.stats.failed++
      await client.query('ROLLBACK').catch(() => undefined)
      client.release(e as Error)
    }
    throw e
  }
}

/** Errors of a commit already settled (the connection given back, the outcome counted). */
const committing = new WeakSet<object>()

/** Counts a marked commit's outcome and time; its error, if any, goes on marked as settled. */
async function settle (stats: CommitStats, started: number, commit: Promise<'committed' | 'found'>): Promise<void> {
  try {
    const how = await commit
    if (how === 'found') stats.foundAfterLoss++
    else stats.committed++
    stats.seconds.observe((performance.now() - started) / 1000)
  } catch (e) {
    if (e instanceof NotApplied) stats.absentAfterLoss++
    else if (e instanceof OutcomeUnknown) stats.unknown++
    else stats.failed++
    if (typeof e === 'object' && e !== null) committing.add(e)
    throw e
  }
}

/** A snapshot without a body is the world's start (migrations/postgres/002-catalogue.sql). */
const ENTRIES_AFTER = `
  SELECT l.seq, l.kind, coalesce(l.body, s.body) AS body, l.effects FROM world_log l
  LEFT JOIN sandbox_worlds w ON l.body IS NULL AND w.world_id = l.world_id
  LEFT JOIN sandbox_world_starts s ON s.digest = w.start_digest
  WHERE l.world_id = $1 AND l.seq > $2
    AND l.seq >= coalesce((SELECT snapshot_seq FROM world_head WHERE world_id = $1), 0)
  ORDER BY l.seq`

const ENTRIES_AFTER_WITHOUT_START = `
  SELECT seq, kind, body, effects FROM world_log
  WHERE world_id = $1 AND seq > $2
    AND seq >= coalesce((SELECT snapshot_seq FROM world_head WHERE world_id = $1), 0)
  ORDER BY seq`

type EntryRow = { seq: string, kind: LogEntry['kind'], body: Buffer, effects: unknown }
const entryOf = (row: EntryRow): LogEntry => ({ seq: Number(row.seq), kind: row.kind, body: row.body, effects: row.effects })

/** A world's last sequence number (0: no log yet), asked on any connection. */
export async function headOf (queryable: Pick<pg.ClientBase, 'query'>, worldId: string): Promise<number> {
  const { rows } = await queryable.query<{ seq: string }>('SELECT seq FROM world_head WHERE world_id = $1', [worldId])
  return rows.length === 0 ? 0 : Number(rows[0].seq)
}

export class WorldLog {
  /** Appends to the worlds' logs by this instance: their outcomes and times (/_sandbox/metrics). */
  readonly stats = new CommitStats()

  constructor (readonly pool: pg.Pool, private readonly instance: string, private readonly delivery?: CommitDelivery) {}

  /** Once every instance reading has heard this instance's commits so far (strict reads: commit-delivery.ts); at once without. */
  async heardEverywhere (): Promise<void> {
    await this.delivery?.heardEverywhere()
  }

  /**
   * Entries after `seq`, starting at the latest snapshot when `seq` is older than it; a snapshot
   * that is the world's start comes with the start's body, or with none when `start` says the
   * caller has it already.
   */
  async entriesAfter (worldId: string, seq: number, start: 'with' | 'without' = 'with'): Promise<LogEntry[]> {
    const { rows } = await this.pool.query<EntryRow>(start === 'with' ? ENTRIES_AFTER : ENTRIES_AFTER_WITHOUT_START, [worldId, seq])
    return rows.map(entryOf)
  }

  /**
   * Locks the world's log for one writer (waiting for another instance's turn to end). Its commit
   * resolves once the append is in PostgreSQL (learnt again when the COMMIT's answer was lost),
   * and throws NotApplied or OutcomeUnknown (outcomes.ts) when its answer was lost and it was not,
   * or could not be learnt; any other error: nothing was applied.
   */
  async turn (worldId: string): Promise<LogTurn> {
    const client = await this.pool.connect()
    const { stats, pool } = this
    let open = true
    /** The turn's id, once it appended (outcomes.ts), and when it began. */
    let appendId: string | undefined
    let started = 0
    const end = async (sql: 'COMMIT' | 'ROLLBACK') => {
      if (!open) return
      open = false
      if (sql === 'COMMIT' && appendId !== undefined) {
        await settle(stats, started, commitMarked(client, appendId, pool.options))
        return
      }
      if (appendId !== undefined) stats.failed++
      try {
        await client.query(sql)
        client.release()
      } catch (e) {
        // a connection that failed mid-transaction is not given back to the pool
        client.release(e as Error)
        throw e
      }
    }
    try {
      await client.query('BEGIN')
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`world:${worldId}`])
      let head = await headOf(client, worldId)
      const instance = this.instance
      return {
        get head () { return head },
        entriesAfter: async (seq, start = 'with') => (await client.query<EntryRow>(start === 'with' ? ENTRIES_AFTER : ENTRIES_AFTER_WITHOUT_START, [worldId, seq])).rows.map(entryOf),
        async append (kind, body, effects) {
          const seq = head + 1
          if (appendId === undefined) {
            started = performance.now()
            appendId = newAppendId()
            await markAppend(client, appendId, worldId)
          }
          await client.query(
            'INSERT INTO world_log (world_id, seq, kind, body, effects, instance) VALUES ($1, $2, $3, $4, $5, $6)',
            [worldId, seq, kind, body ?? null, effects === undefined ? null : JSON.stringify(effects), instance]
          )
          if (kind === 'snapshot') {
            await client.query('DELETE FROM world_log WHERE world_id = $1 AND seq < $2', [worldId, seq])
          }
          await client.query(
            `INSERT INTO world_head (world_id, seq, snapshot_seq) VALUES ($1, $2, $3)
             ON CONFLICT (world_id) DO UPDATE SET seq = excluded.seq,
               snapshot_seq = CASE WHEN $4 THEN excluded.seq ELSE world_head.snapshot_seq END`,
            [worldId, seq, kind === 'snapshot' ? seq : 0, kind === 'snapshot']
          )
          await client.query('SELECT pg_notify($1, $2)', [LOG_CHANNEL, `${worldId} ${seq}`])
          head = seq
          return seq
        },
        commit: async () => await end('COMMIT'),
        rollback: async () => await end('ROLLBACK')
      }
    } catch (e) {
      open = false
      client.release(e as Error)
      throw e
    }
  }
}
