import pg from 'pg'
import { CommitStats } from '../../metrics/histogram.js'
import { commitMarked, lookUp, markAppend, newAppendId, NotApplied, OUTCOME_WAIT_MS, OutcomeUnknown, pruneAppendIds } from './outcomes.js'

/**
 * Worlds' data kept in PostgreSQL as logs (migrations/postgres/001-world-log.sql, 009): each
 * world's latest snapshot (its SQLite databases, whole) and the commits its owner made since. Only
 * the world's owner appends (src/domain/worlds/owned-world.ts), each append fenced by the epoch of
 * its lease (owners.ts) in the same statement; it reads the log once, when it takes the world.
 * Each append carries an id of its own, so that one whose answer is lost is resolved before
 * anyone is answered (outcomes.ts).
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

/** The append was never sent: no connection to PostgreSQL could be had within its bound. */
export class AppendNotSent extends Error {
  constructor (cause: unknown) {
    super(`no connection to PostgreSQL: ${cause instanceof Error ? cause.message : String(cause)}`)
    this.name = 'AppendNotSent'
  }
}

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
 * The append's id ($9) is written beside it under its lock, held until the statement's transaction
 * ends (outcomes.ts: how a lost answer is resolved).
 */
const APPEND = `
  WITH owner AS (
    SELECT 1 FROM world_owners WHERE world_id = $1 AND instance = $2 AND epoch = $3 FOR SHARE
  ), held AS (
    SELECT pg_advisory_xact_lock(hashtextextended($9, 0)) FROM owner
  ), marked AS (
    INSERT INTO sandbox_appends (append_id, subject) SELECT $9, $1 FROM held
  ), earlier AS (
    DELETE FROM world_log WHERE world_id = $1 AND $5 = 'snapshot' AND seq < $4 AND EXISTS (SELECT 1 FROM owner)
  ), entry AS (
    INSERT INTO world_log (world_id, seq, kind, body, records, state, instance)
    SELECT $1, $4, $5, $6, $7, $8, $2 FROM owner RETURNING 1
  )
  SELECT count(*)::int AS appended FROM entry`

type EntryRow = Omit<LogEntry, 'seq'> & { seq: string }

export class WorldLog {
  /** Appends to the worlds' logs by this instance: their outcomes and times (/_sandbox/metrics). */
  readonly stats = new CommitStats()

  constructor (readonly pool: pg.Pool, private readonly instance: string) {}

  /** The world's log from its latest snapshot ([] : the world has no log, or it was deleted). */
  async load (worldId: string): Promise<LogEntry[]> {
    const { rows } = await this.pool.query<EntryRow>(LOAD, [worldId])
    return rows.map((row) => ({ ...row, seq: Number(row.seq) }))
  }

  /**
   * Appends the entry `seq` to the world's log as its owner at `epoch`: resolved once it is in
   * PostgreSQL ('found' when its answer was lost and it was learnt there); Fenced when the world is
   * no longer this instance's, or PostgreSQL's own error: nothing was applied. When the answer is
   * lost (the connection failed, or the server did not answer in time) the outcome is learnt from
   * a new connection (outcomes.ts): NotApplied, or OutcomeUnknown when it cannot be within `waitMs`.
   */
  async append (worldId: string, epoch: number, seq: number, entry: NewEntry, waitMs = OUTCOME_WAIT_MS): Promise<'committed' | 'found'> {
    const { stats } = this
    const started = performance.now()
    const id = newAppendId()
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (e) {
      stats.failed++
      throw new AppendNotSent(e)
    }
    let appended: number
    try {
      const { rows } = await client.query<{ appended: number }>({
        name: 'sandbox-append',
        text: APPEND,
        values: [worldId, this.instance, epoch, seq, entry.kind, entry.body, entry.records, entry.state, id]
      })
      appended = rows[0].appended
    } catch (e) {
      // closed first: a server still running the statement sees the connection end, and ends it
      client.release(e as Error)
      if (e instanceof pg.DatabaseError && e.severity === 'ERROR') {
        stats.failed++
        throw e
      }
      const applied = await lookUp(id, this.pool.options, waitMs)
      if (applied === true) {
        stats.foundAfterLoss++
        stats.seconds.observe((performance.now() - started) / 1000)
        return 'found'
      }
      if (applied === false) stats.absentAfterLoss++
      else stats.unknown++
      throw applied === false ? new NotApplied(e) : new OutcomeUnknown(e)
    }
    client.release()
    if (appended !== 1) {
      stats.failed++
      throw new Fenced(worldId)
    }
    stats.committed++
    stats.seconds.observe((performance.now() - started) / 1000)
    pruneAppendIds(this.pool)
    return 'committed'
  }
}
