import type pg from 'pg'
import { inTransaction } from './world-log.js'

/**
 * Examiner sessions of hosted worlds in PostgreSQL (migrations/postgres/004-examiner.sql): the
 * sessions, their mirrors and kept reports, and the requests every instance recorded, in the
 * order they arrived. Records are shipped and moved with the request journal (journal-store.ts:
 * the same transactions, under the same lock), so a session's range of positions holds exactly
 * what was answered between the marks taken at its start and its end, on every instance.
 */

/** A recorded request (or a change of a client) as shipped by the instance that recorded it. */
export interface ShippedRecord {
  /** Its order on that instance, and when the request arrived (a change: when it was committed). */
  localSeq: number
  realMs: number
  worldId: string
  clientId: string | null
  change: boolean
  /** Its id in that instance's journal (0: not journaled, or a change). */
  journalId: number
  /** The request as a line of the examiner's format (codec.ts), its times absolute. */
  line: string
}

export interface StoredSession {
  id: number
  name: string
  clientId: string | null
  startedMs: number
  startSeq: number
  endedMs: number | null
  endSeq: number | null
  endedBy: string | null
  recorded: number
  capped: boolean
}

export interface StoredMirror {
  agencyId: number
  upTo: number | null
  postedMs: number
  postedSeq: number
}

interface RawSession {
  session_id: number
  name: string
  client_id: string | null
  started_ms: number
  start_seq: string
  ended_ms: number | null
  end_seq: string | null
  ended_by: string | null
  recorded: number
  capped: boolean
}

const SESSION = 'SELECT session_id, name, client_id, started_ms, start_seq, ended_ms, end_seq, ended_by, recorded, capped FROM examiner_sessions'

const toSession = (r: RawSession): StoredSession => ({
  id: r.session_id,
  name: r.name,
  clientId: r.client_id,
  startedMs: r.started_ms,
  startSeq: Number(r.start_seq),
  endedMs: r.ended_ms,
  endSeq: r.end_seq === null ? null : Number(r.end_seq),
  endedBy: r.ended_by,
  recorded: r.recorded,
  capped: r.capped
})

/** The lock the journal's move and the examiner's marks share: a position is taken between two moves, never during one. */
export const MOVE_LOCK = "SELECT pg_advisory_xact_lock(hashtext('journal'))"

/** Adds records to those shipped and not yet moved (in the journal's shipping transaction): one row per world. */
export async function shipRecords (client: pg.PoolClient, instance: string, records: readonly ShippedRecord[]): Promise<void> {
  const byWorld = new Map<string, ShippedRecord[]>()
  for (const record of records) {
    const same = byWorld.get(record.worldId)
    if (same === undefined) byWorld.set(record.worldId, [record])
    else same.push(record)
  }
  for (const [worldId, shipped] of byWorld) {
    await client.query(
      'INSERT INTO examiner_shipped (instance, world_id, first_local_seq, real_ms, client_ids, changes, journal_ids, lines) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [instance, worldId, shipped[0].localSeq, shipped.map((r) => r.realMs), shipped.map((r) => r.clientId), shipped.map((r) => r.change),
        shipped.map((r) => r.journalId), shipped.map((r) => r.line).join('\n')])
  }
}

/**
 * Moves every record shipped to the world's records, in the order the requests arrived (in the
 * journal's move, under MOVE_LOCK); those of a world deleted meanwhile (shipped by an instance that
 * had not heard yet) are dropped.
 */
export async function moveRecords (client: pg.PoolClient): Promise<void> {
  await client.query(
    `WITH moved AS (DELETE FROM examiner_shipped RETURNING *)
     INSERT INTO examiner_records (world_id, client_id, change, line, instance, local_journal_id)
     SELECT m.world_id, r.client_id, r.change, r.line, m.instance, coalesce(r.journal_id, 0)
     FROM moved m, unnest(m.real_ms, m.client_ids, m.changes, m.journal_ids, string_to_array(m.lines, E'\\n')) WITH ORDINALITY AS r (real_ms, client_id, change, journal_id, line, n)
     WHERE EXISTS (SELECT 1 FROM world_head h WHERE h.world_id = m.world_id)
     ORDER BY r.real_ms, m.instance, m.first_local_seq, r.n`)
}

export class ExaminerStore {
  constructor (private readonly pool: pg.Pool) {}

  /** A position: every record moved before it is before it, every one moved after it after. */
  async mark (): Promise<number> {
    return await inTransaction(this.pool, async (client) => {
      await client.query(MOVE_LOCK)
      const { rows } = await client.query<{ n: string }>("SELECT nextval('examiner_positions') AS n")
      return Number(rows[0].n)
    })
  }

  async insert (worldId: string, name: string, clientId: string | null, startedMs: number, startSeq: number): Promise<StoredSession> {
    const { rows } = await this.pool.query<RawSession>(
      `WITH added AS (INSERT INTO examiner_sessions (world_id, name, client_id, started_ms, start_seq) VALUES ($1, $2, $3, $4, $5) RETURNING *)
       ${SESSION.replace('examiner_sessions', 'added')}`, [worldId, name, clientId, startedMs, startSeq])
    return toSession(rows[0])
  }

  async get (worldId: string, id: number): Promise<StoredSession | undefined> {
    const { rows } = await this.pool.query<RawSession>(`${SESSION} WHERE world_id = $1 AND session_id = $2`, [worldId, id])
    return rows.length === 0 ? undefined : toSession(rows[0])
  }

  async list (worldId: string): Promise<StoredSession[]> {
    const { rows } = await this.pool.query<RawSession>(`${SESSION} WHERE world_id = $1 ORDER BY session_id`, [worldId])
    return rows.map(toSession)
  }

  /** Requests recorded for the session from its start up to `toSeq` (changes are no one's). */
  async count (worldId: string, session: StoredSession, toSeq: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM examiner_records WHERE world_id = $1 AND seq >= $2 AND seq < $3 AND NOT change
         AND ($4::text IS NULL OR client_id = $4)`, [worldId, session.startSeq, toSeq, session.clientId])
    return Number(rows[0].n)
  }

  /**
   * The session's records (its Client Id's requests and every change) from its start up to
   * `toSeq`, in order, each with its request's id in the shared journal (0 once the journal no
   * longer keeps it): the line holds the id in its instance's own journal.
   */
  async records (worldId: string, session: StoredSession, toSeq: number): Promise<Array<{ seq: string, line: string, journal_id: string }>> {
    const { rows } = await this.pool.query<{ seq: string, line: string, journal_id: string }>(
      `SELECT r.seq, r.line, coalesce(e.id, 0) AS journal_id FROM examiner_records r
         LEFT JOIN journal_entries e ON r.local_journal_id > 0 AND e.world_id = r.world_id AND e.instance = r.instance AND e.local_id = r.local_journal_id
       WHERE r.world_id = $1 AND r.seq >= $2 AND r.seq < $3 AND (r.change OR $4::text IS NULL OR r.client_id = $4) ORDER BY r.seq`,
      [worldId, session.startSeq, toSeq, session.clientId])
    return rows
  }

  async end (id: number, ended: { endedMs: number, endSeq: number, by: string, recorded: number, capped: boolean }): Promise<void> {
    await this.pool.query('UPDATE examiner_sessions SET ended_ms = $2, end_seq = $3, ended_by = $4, recorded = $5, capped = $6 WHERE session_id = $1 AND ended_ms IS NULL',
      [id, ended.endedMs, ended.endSeq, ended.by, ended.recorded, ended.capped])
  }

  /** Keeps the report a session ended with; the first kept stays (another instance may have judged it too): the one kept is answered. */
  async keepReport (id: number, report: string): Promise<string> {
    const { rows } = await this.pool.query<{ report: string }>(
      `WITH kept AS (UPDATE examiner_sessions SET report = $2 WHERE session_id = $1 AND report IS NULL RETURNING report)
       SELECT report FROM kept UNION ALL SELECT report FROM examiner_sessions WHERE session_id = $1 AND report IS NOT NULL`, [id, report])
    return rows[0]?.report ?? report
  }

  async report (id: number): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ report: string | null }>('SELECT report FROM examiner_sessions WHERE session_id = $1', [id])
    return rows[0]?.report ?? undefined
  }

  async delete (id: number): Promise<void> {
    await this.pool.query('DELETE FROM examiner_sessions WHERE session_id = $1', [id])
  }

  /** Forgets the world's records no session still needs (open, or ended and not yet judged). */
  async trim (worldId: string): Promise<void> {
    await this.pool.query(
      `DELETE FROM examiner_records WHERE world_id = $1 AND seq < coalesce(
         (SELECT min(start_seq) FROM examiner_sessions WHERE world_id = $1 AND report IS NULL), 'Infinity'::float8)`, [worldId])
  }

  async putMirror (id: number, mirror: StoredMirror & { clients: string }): Promise<void> {
    await this.pool.query(
      `INSERT INTO examiner_mirrors (session_id, agency_id, up_to, posted_ms, posted_seq, clients) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (session_id, agency_id) DO UPDATE SET up_to = $3, posted_ms = $4, posted_seq = $5, clients = $6`,
      [id, mirror.agencyId, mirror.upTo, mirror.postedMs, mirror.postedSeq, mirror.clients])
  }

  async mirrors (id: number): Promise<StoredMirror[]> {
    const { rows } = await this.pool.query<{ agency_id: string, up_to: number | null, posted_ms: number, posted_seq: string }>(
      'SELECT agency_id, up_to, posted_ms, posted_seq FROM examiner_mirrors WHERE session_id = $1 ORDER BY agency_id', [id])
    return rows.map((r) => ({ agencyId: Number(r.agency_id), upTo: r.up_to, postedMs: r.posted_ms, postedSeq: Number(r.posted_seq) }))
  }

  async mirrorClients (id: number, agencyId: number): Promise<Buffer | undefined> {
    const { rows } = await this.pool.query<{ clients: string }>('SELECT clients FROM examiner_mirrors WHERE session_id = $1 AND agency_id = $2', [id, agencyId])
    return rows.length === 0 ? undefined : Buffer.from(rows[0].clients, 'utf8')
  }
}
