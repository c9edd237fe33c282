import type { UnitOfWork } from './unit-of-work.js'

export type { ClientVersion } from './clients.js'

/** Examiner sessions, their recorded requests (in chunks) and the mirrors partners declared. */

export interface SessionRow {
  id: number
  name: string
  clientId: string | null
  startedMs: number
  endedMs: number | null
  recorded: number
  capped: boolean
}

/** Requests recorded for one session since the last flush, as one JSON array. */
export interface RecordChunk {
  sessionId: number
  firstSeq: number
  count: number
  /** JSON array of recorded requests, compressed with raw deflate. */
  requests: Buffer
  /** True when this chunk reached the session's cap. */
  capped: boolean
}

export interface MirrorRow {
  agencyId: number
  upTo: number | null
  postedMs: number
  /** JSON array of [clientNumber, modifiedMs]. */
  clients: string
}

interface RawSession {
  session_id: number; name: string; client_id: string | null; started_ms: number; ended_ms: number | null; recorded: number; capped: number
}
const toSession = (r: RawSession): SessionRow => ({
  id: r.session_id, name: r.name, clientId: r.client_id, startedMs: r.started_ms, endedMs: r.ended_ms, recorded: r.recorded, capped: r.capped === 1
})

/**
 * The sessions of one world (every query is scoped to `worldId`, so a session id of another world
 * is unknown here). Every statement writes only examiner tables, a log no answer is derived from:
 * log commands, which signal no change.
 */
export function createSessionRepository (sql: UnitOfWork, worldId = 'default') {
  const insertSession = sql.logCommand<[string, string | null, number, string]>(
    'INSERT INTO examiner_sessions (name, client_id, started_ms, world_id) VALUES (?, ?, ?, ?)'
  )
  const selectSession = sql.query<[number, string], RawSession>('SELECT * FROM examiner_sessions WHERE session_id = ? AND world_id = ?')
  const selectSessions = sql.query<[string], RawSession>('SELECT * FROM examiner_sessions WHERE world_id = ? ORDER BY session_id')
  const selectOpen = sql.query<[string], RawSession>('SELECT * FROM examiner_sessions WHERE world_id = ? AND ended_ms IS NULL ORDER BY session_id')
  const endSession = sql.logCommand<[number, number]>('UPDATE examiner_sessions SET ended_ms = ? WHERE session_id = ? AND ended_ms IS NULL')
  const deleteAll = sql.logCommand<[string]>('DELETE FROM examiner_sessions WHERE world_id = ?')
  const insertChunk = sql.logCommand<[number, number, number, Buffer]>(
    'INSERT INTO examiner_records (session_id, first_seq, count, requests) VALUES (?, ?, ?, ?)'
  )
  const countChunk = sql.logCommand<[number, number, number]>(
    'UPDATE examiner_sessions SET recorded = recorded + ?, capped = max(capped, ?) WHERE session_id = ?'
  )
  const selectChunks = sql.query<[number], { firstSeq: number, requests: Buffer }>(
    'SELECT first_seq AS firstSeq, requests FROM examiner_records WHERE session_id = ? ORDER BY first_seq'
  )
  const upsertMirror = sql.logCommand<[number, number, number | null, number, string]>(
    `INSERT INTO examiner_mirrors (session_id, agency_id, up_to, posted_ms, clients) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (session_id, agency_id) DO UPDATE SET up_to = excluded.up_to, posted_ms = excluded.posted_ms, clients = excluded.clients`
  )
  const selectMirrors = sql.query<[number], { agency_id: number; up_to: number | null; posted_ms: number; clients: string }>(
    'SELECT agency_id, up_to, posted_ms, clients FROM examiner_mirrors WHERE session_id = ? ORDER BY agency_id'
  )

  return {
    insert (name: string, clientId: string | null, startedMs: number): number {
      return Number(sql.transaction(() => insertSession.run(name, clientId, startedMs, worldId)).lastInsertRowid)
    },
    get (id: number): SessionRow | undefined {
      const row = selectSession.get(id, worldId)
      return row === undefined ? undefined : toSession(row)
    },
    list: (): SessionRow[] => selectSessions.all(worldId).map(toSession),
    listOpen: (): SessionRow[] => selectOpen.all(worldId).map(toSession),
    /** Forgets every session of the world, with its records and mirrors (the world is gone). */
    deleteAll (): void {
      sql.transaction(() => deleteAll.run(worldId))
    },
    end (id: number, endedMs: number): void {
      sql.transaction(() => endSession.run(endedMs, id))
    },
    /**
     * Appends recorded requests. Recording is a log no reader derives answers from, so it is
     * written without the change signal (see UnitOfWork.logCommand): the read model's cached
     * client answers stay valid while a session records every read.
     */
    append (chunks: readonly RecordChunk[]): void {
      sql.transaction(() => {
        for (const chunk of chunks) {
          if (chunk.count > 0) insertChunk.run(chunk.sessionId, chunk.firstSeq, chunk.count, chunk.requests)
          countChunk.run(chunk.count, chunk.capped ? 1 : 0, chunk.sessionId)
        }
      })
    },
    /** The session's chunks in recording order. */
    chunks: (sessionId: number): IterableIterator<{ firstSeq: number, requests: Buffer }> => selectChunks.iterate(sessionId),
    putMirror (sessionId: number, mirror: MirrorRow): void {
      sql.transaction(() => upsertMirror.run(sessionId, mirror.agencyId, mirror.upTo, mirror.postedMs, mirror.clients))
    },
    mirrors: (sessionId: number): MirrorRow[] =>
      selectMirrors.all(sessionId).map((r) => ({ agencyId: r.agency_id, upTo: r.up_to, postedMs: r.posted_ms, clients: r.clients }))
  }
}

export type SessionRepository = ReturnType<typeof createSessionRepository>

/** Forgets the sessions of every world but this one (at start-up: worlds in memory ended with their process). */
export function forgetSessionsOutside (sql: UnitOfWork, worldId: string): void {
  sql.transaction(() => sql.logCommand<[string]>('DELETE FROM examiner_sessions WHERE world_id <> ?').run(worldId))
}
