import type { UnitOfWork } from './unit-of-work.js'

export type { ClientVersion } from './clients.js'

/**
 * Examiner sessions of one world, the world's log of recorded requests (in chunks) that its open
 * sessions share, the mirrors partners declared, and each ended session's report.
 */

export interface SessionRow {
  id: number
  name: string
  clientId: string | null
  startedMs: number
  endedMs: number | null
  recorded: number
  capped: boolean
  /** The log position the session starts at (null: recorded before the log, in chunks of its own). */
  startSeq: number | null
  /** The log position after its last request, once ended. */
  endSeq: number | null
  /** What ended it: `end` (asked to) or `reset` (its world's reset). */
  endedBy: string | null
}

/** Requests of the world's log recorded since the last flush, as one compressed chunk of lines. */
export interface LogChunk {
  firstSeq: number
  count: number
  /** The requests as lines (examiner/codec.ts), compressed with raw deflate. */
  requests: Buffer
}

export interface MirrorRow {
  agencyId: number
  upTo: number | null
  postedMs: number
  /** The log position when it was posted (null: posted before positions were kept). */
  postedSeq: number | null
  /** JSON array of [clientNumber, modifiedMs]. */
  clients: string
}

interface RawSession {
  session_id: number
  name: string
  client_id: string | null
  started_ms: number
  ended_ms: number | null
  recorded: number
  capped: number
  start_seq: number | null
  end_seq: number | null
  ended_by: string | null
}
const toSession = (r: RawSession): SessionRow => ({
  id: r.session_id,
  name: r.name,
  clientId: r.client_id,
  startedMs: r.started_ms,
  endedMs: r.ended_ms,
  recorded: r.recorded,
  capped: r.capped === 1,
  startSeq: r.start_seq,
  endSeq: r.end_seq,
  endedBy: r.ended_by
})

const SESSION = 'SELECT session_id, name, client_id, started_ms, ended_ms, recorded, capped, start_seq, end_seq, ended_by FROM examiner_sessions'

/**
 * The sessions of one world (every query is scoped to `worldId`, so a session id of another world
 * is unknown here). Every statement writes only examiner tables, a log no answer is derived from:
 * log commands, which signal no change.
 */
export function createSessionRepository (sql: UnitOfWork, worldId = 'default') {
  const insertSession = sql.logCommand<[string, string | null, number, number, string]>(
    'INSERT INTO examiner_sessions (name, client_id, started_ms, start_seq, world_id) VALUES (?, ?, ?, ?, ?)'
  )
  const selectSession = sql.query<[number, string], RawSession>(`${SESSION} WHERE session_id = ? AND world_id = ?`)
  const selectSessions = sql.query<[string], RawSession>(`${SESSION} WHERE world_id = ? ORDER BY session_id`)
  const selectOpen = sql.query<[string], RawSession>(`${SESSION} WHERE world_id = ? AND ended_ms IS NULL ORDER BY session_id`)
  const endSession = sql.logCommand<[number, number, string, number, number, number]>(
    'UPDATE examiner_sessions SET ended_ms = ?, end_seq = ?, ended_by = ?, recorded = ?, capped = ? WHERE session_id = ? AND ended_ms IS NULL'
  )
  const adoptSession = sql.logCommand<[number, number]>('UPDATE examiner_sessions SET start_seq = ? WHERE session_id = ? AND start_seq IS NULL')
  const keepReport = sql.logCommand<[string, number]>('UPDATE examiner_sessions SET report = ? WHERE session_id = ? AND report IS NULL')
  const selectReport = sql.query<[number, string], { report: string | null }>('SELECT report FROM examiner_sessions WHERE session_id = ? AND world_id = ?')
  const deleteSession = sql.logCommand<[number, string]>('DELETE FROM examiner_sessions WHERE session_id = ? AND world_id = ?')
  const deleteSessions = sql.logCommand<[string]>('DELETE FROM examiner_sessions WHERE world_id = ?')
  const countSession = sql.logCommand<[number, number, number]>('UPDATE examiner_sessions SET recorded = ?, capped = ? WHERE session_id = ?')

  const insertChunk = sql.logCommand<[string, number, number, Buffer]>(
    'INSERT INTO examiner_log (world_id, first_seq, count, requests) VALUES (?, ?, ?, ?)'
  )
  const selectChunks = sql.query<[string, number, number], { firstSeq: number, requests: Buffer }>(
    `SELECT first_seq AS firstSeq, requests FROM examiner_log
     WHERE world_id = ? AND first_seq + count > ? AND first_seq < ? ORDER BY first_seq`
  )
  const trimLog = sql.logCommand<[string, number]>('DELETE FROM examiner_log WHERE world_id = ? AND first_seq + count <= ?')
  const deleteLog = sql.logCommand<[string]>('DELETE FROM examiner_log WHERE world_id = ?')
  const lastSeq = sql.query<[string, string], { n: number | null }>(
    `SELECT max(coalesce((SELECT max(first_seq + count) FROM examiner_log WHERE world_id = ?), 0),
                coalesce((SELECT max(max(coalesce(end_seq, 0), coalesce(start_seq, 0))) FROM examiner_sessions WHERE world_id = ?), 0)) AS n`
  )
  // chunks of the sessions recorded before the shared log
  const selectOwnChunks = sql.query<[number], { firstSeq: number, requests: Buffer }>(
    'SELECT first_seq AS firstSeq, requests FROM examiner_records WHERE session_id = ? ORDER BY first_seq'
  )

  const upsertMirror = sql.logCommand<[number, number, number | null, number, number | null, string]>(
    `INSERT INTO examiner_mirrors (session_id, agency_id, up_to, posted_ms, posted_seq, clients) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (session_id, agency_id) DO UPDATE SET up_to = excluded.up_to, posted_ms = excluded.posted_ms,
       posted_seq = excluded.posted_seq, clients = excluded.clients`
  )
  const selectMirrors = sql.query<[number], { agency_id: number; up_to: number | null; posted_ms: number; posted_seq: number | null }>(
    'SELECT agency_id, up_to, posted_ms, posted_seq FROM examiner_mirrors WHERE session_id = ? ORDER BY agency_id'
  )
  // as bytes: they go to the report worker without becoming a string on this thread
  const selectMirrorClients = sql.query<[number, number], Buffer>(
    'SELECT CAST(clients AS BLOB) FROM examiner_mirrors WHERE session_id = ? AND agency_id = ?'
  ).pluck()
  const mirroredAgencies = sql.query<[number], number>('SELECT agency_id FROM examiner_mirrors WHERE session_id = ?').pluck()

  return {
    insert (name: string, clientId: string | null, startedMs: number, startSeq: number): number {
      return Number(sql.transaction(() => insertSession.run(name, clientId, startedMs, startSeq, worldId)).lastInsertRowid)
    },
    get (id: number): SessionRow | undefined {
      const row = selectSession.get(id, worldId)
      return row === undefined ? undefined : toSession(row)
    },
    list: (): SessionRow[] => selectSessions.all(worldId).map(toSession),
    listOpen: (): SessionRow[] => selectOpen.all(worldId).map(toSession),
    /** Ends a session: its place in the log ends here, its count is final (its report is kept once computed). */
    end (id: number, ended: { endedMs: number, endSeq: number, by: string, recorded: number, capped: boolean }): void {
      sql.transaction(() => endSession.run(ended.endedMs, ended.endSeq, ended.by, ended.recorded, ended.capped ? 1 : 0, id))
    },
    /** An open session recorded before the world's log goes on in the log from `seq`. */
    adopt (id: number, seq: number): void {
      sql.transaction(() => adoptSession.run(seq, id))
    },
    /** Keeps the report a session ended with (computed once, when it ended or when first read). */
    keepReport (id: number, report: string): void {
      sql.transaction(() => keepReport.run(report, id))
    },
    /** The report an ended session ended with (undefined while open, or for a session ended before reports were kept). */
    report (id: number): string | undefined {
      return selectReport.get(id, worldId)?.report ?? undefined
    },
    delete (id: number): boolean {
      return sql.transaction(() => deleteSession.run(id, worldId)).changes > 0
    },
    /** Forgets every session of the world, with its records, mirrors and log (the world is gone). */
    deleteAll (): void {
      sql.transaction(() => {
        deleteSessions.run(worldId)
        deleteLog.run(worldId)
      })
    },
    /**
     * Appends chunks to the world's log and writes the open sessions' counts, in one transaction.
     * Recording is a log no reader derives answers from, so it is written without the change
     * signal (see UnitOfWork.logCommand): cached client answers stay valid while sessions record.
     */
    append (chunks: readonly LogChunk[], counts: ReadonlyArray<{ id: number, recorded: number, capped: boolean }>): void {
      sql.transaction(() => {
        for (const chunk of chunks) insertChunk.run(worldId, chunk.firstSeq, chunk.count, chunk.requests)
        for (const c of counts) countSession.run(c.recorded, c.capped ? 1 : 0, c.id)
      })
    },
    /** Chunks of the log holding positions from `fromSeq` up to (not including) `toSeq`, in order. */
    logChunks: (fromSeq: number, toSeq: number): Array<{ firstSeq: number, requests: Buffer }> => selectChunks.all(worldId, fromSeq, toSeq),
    /** Chunks of a session recorded before the shared log. */
    ownChunks: (sessionId: number): Array<{ firstSeq: number, requests: Buffer }> => selectOwnChunks.all(sessionId),
    /** Forgets the log's chunks wholly before `seq` (no open session reads them). */
    trimLog (seq: number): void {
      sql.transaction(() => trimLog.run(worldId, seq))
    },
    /** The position after the last one the world's log or sessions used. */
    lastSeq: (): number => lastSeq.get(worldId, worldId)?.n ?? 0,
    putMirror (sessionId: number, mirror: MirrorRow): void {
      sql.transaction(() => upsertMirror.run(sessionId, mirror.agencyId, mirror.upTo, mirror.postedMs, mirror.postedSeq, mirror.clients))
    },
    /** The session's mirrors without their client lists (mirrorClients reads one). */
    mirrors: (sessionId: number): Array<Omit<MirrorRow, 'clients'>> =>
      selectMirrors.all(sessionId).map((r) => ({ agencyId: r.agency_id, upTo: r.up_to, postedMs: r.posted_ms, postedSeq: r.posted_seq })),
    /** One mirror's client list: the UTF-8 bytes of its JSON text. */
    mirrorClients: (sessionId: number, agencyId: number): Buffer | undefined => selectMirrorClients.get(sessionId, agencyId),
    mirroredAgencies: (sessionId: number): number[] => mirroredAgencies.all(sessionId)
  }
}

export type SessionRepository = ReturnType<typeof createSessionRepository>

/** Forgets the sessions and logs of every world but this one (at start-up: worlds in memory ended with their process). */
export function forgetSessionsOutside (sql: UnitOfWork, worldId: string): void {
  sql.transaction(() => {
    sql.logCommand<[string]>('DELETE FROM examiner_sessions WHERE world_id <> ?').run(worldId)
    sql.logCommand<[string]>('DELETE FROM examiner_log WHERE world_id <> ?').run(worldId)
  })
}
