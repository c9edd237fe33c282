import { deflateRawSync, inflateRawSync } from 'node:zlib'
import type { SessionRepository, SessionRow } from '../../db/sessions.js'
import { notFound, invalidField } from '../../errors.js'
import { SESSION_REQUEST_CAP, type Mirror, type Report, type ReportSummary, type Session } from '../../schemas/examiner.js'
import { parseTimestamp } from '../../time.js'
import type { Clock } from '../clock.js'
import { chunkHeader, encodeRequest, requestDecoder, type RequestRecord, type TimeBases } from './codec.js'
import type { RecordedRequest } from './records.js'
import { buildReport, summarize, type DeclaredMirror } from './report.js'
import type { ClientsOf } from './sync.js'

/**
 * How long recorded requests wait in memory before they are encoded and written, in one
 * transaction. Each flush has a fixed cost (a deflate stream and a SQLite commit, a few hundred
 * microseconds together), so at full load it is spread over a couple of thousand requests; what
 * waits stays under a megabyte, and a process killed outright loses at most this much recording.
 */
export const FLUSH_INTERVAL_MS = 100
/** A flush happens at once when this many requests wait. */
const FLUSH_AT_REQUESTS = 4_000

export interface ExaminerOptions {
  repo: SessionRepository
  clock: Clock
  /** The world's clients now: what the sync check compares mirrors and reads with. */
  clientsOf: ClientsOf
  /** Most requests recorded per session (SESSION_REQUEST_CAP). */
  cap?: number
}

export type { RequestRecord } from './codec.js'

/** Level 1: most of the size for little of the time (a chunk of JSON requests shrinks about 15 times). */
const DEFLATE = { level: 1 }

interface OpenSession {
  row: SessionRow
  /** Requests recorded so far, flushed or not. */
  recorded: number
  capped: boolean
  /** Recorded since the last flush (a chunk's requests are numbered from its first). */
  pending: RequestRecord[]
  /** Whether `capped` changed since the last flush. */
  cappedPending: boolean
}

/**
 * Examiner sessions: each records the vendor requests of one test run of one integration (or of
 * all), in SQLite so a session survives a restart, and judges them on demand (report.ts).
 * Recording is on the path of every vendor request while a session is open, so it only appends
 * the request's fields to memory; a timer encodes and writes what waits every FLUSH_INTERVAL_MS
 * (ending, reporting and closing write it at once). Encoding a few thousand requests in one go
 * costs far less per request than one at a time between other requests, which push the encoding
 * code and its data out of the CPU's caches.
 */
export function createExaminer ({ repo, clock, clientsOf, cap = SESSION_REQUEST_CAP }: ExaminerOptions) {
  const open = new Map<number, OpenSession>()
  for (const row of repo.listOpen()) open.set(row.id, { row, recorded: row.recorded, capped: row.capped, pending: [], cappedPending: false })
  /** What recorded times are relative to (see LINE_FORMAT): small numbers are written faster. */
  const bases: TimeBases = { atMs: Math.round(clock.nowMs()), realMs: Math.round(clock.realMs()) }
  const header = chunkHeader(bases) + '\n'
  let waiting = 0
  let timer: NodeJS.Timeout | undefined

  function flush (): void {
    if (timer !== undefined) {
      clearTimeout(timer)
      timer = undefined
    }
    if (waiting === 0 && ![...open.values()].some((s) => s.cappedPending)) return
    const chunks = []
    for (const session of open.values()) {
      if (session.pending.length === 0 && !session.cappedPending) continue
      const rows = session.pending
      chunks.push({
        sessionId: session.row.id,
        firstSeq: session.recorded - rows.length + 1,
        count: rows.length,
        requests: deflateRawSync(header + rows.map((r) => encodeRequest(r, bases)).join('\n'), DEFLATE),
        capped: session.capped
      })
      session.pending = []
      session.cappedPending = false
    }
    waiting = 0
    repo.append(chunks)
  }

  function schedule (): void {
    if (waiting >= FLUSH_AT_REQUESTS) return flush()
    if (timer !== undefined) return
    timer = setTimeout(flush, FLUSH_INTERVAL_MS)
    // An idle process may exit with requests waiting only when it is not closed properly (close() flushes).
    timer.unref()
  }

  function view (row: SessionRow): Session {
    const live = open.get(row.id)
    return {
      id: row.id,
      name: row.name,
      clientId: row.clientId,
      startedAt: new Date(row.startedMs).toISOString(),
      ...(row.endedMs === null ? {} : { endedAt: new Date(row.endedMs).toISOString() }),
      recorded: live?.recorded ?? row.recorded,
      capped: live?.capped ?? row.capped
    }
  }

  function session (id: number): SessionRow {
    const row = repo.get(id)
    if (row === undefined) throw notFound(`No session ${id}; GET /_sandbox/sessions lists the sessions`)
    return row
  }

  function report (id: number): Report {
    flush()
    const row = session(id)
    const requests: RecordedRequest[] = []
    const decode = requestDecoder()
    for (const chunk of repo.chunks(id)) {
      for (const request of decode(inflateRawSync(chunk.requests).toString('utf8'), chunk.firstSeq)) requests.push(request)
    }
    const mirrors: DeclaredMirror[] = repo.mirrors(id).map((m) => ({
      agencyId: m.agencyId,
      upTo: m.upTo,
      postedMs: m.postedMs,
      clients: JSON.parse(m.clients) as Array<[number, number]>
    }))
    return buildReport({ session: view(row), requests, mirrors, clientsOf })
  }

  return {
    /** True while a session is open: the recording points skip all work otherwise. */
    get recording (): boolean {
      return open.size > 0
    },

    /** Whether a request presenting this Client Id would be recorded by any open session. */
    wants (clientId: string | null): boolean {
      for (const s of open.values()) if (s.row.clientId === null || s.row.clientId === clientId) return true
      return false
    },

    /** Records a request in every open session that takes its Client Id. */
    record (request: RequestRecord): void {
      for (const s of open.values()) {
        if (s.row.clientId !== null && s.row.clientId !== request.clientId) continue
        if (s.recorded >= cap) {
          if (!s.capped) {
            s.capped = true
            s.cappedPending = true
            schedule()
          }
          continue
        }
        s.recorded++
        s.pending.push(request)
        waiting++
        schedule()
      }
    },

    start ({ name, clientId }: { name?: string, clientId?: string }): Session {
      const startedMs = clock.nowMs()
      const id = repo.insert(name ?? `session at ${new Date(startedMs).toISOString()}`, clientId ?? null, startedMs)
      const row = session(id)
      open.set(id, { row, recorded: 0, capped: false, pending: [], cappedPending: false })
      return view(row)
    },

    list: (): Session[] => repo.list().map(view),

    get: (id: number): Session => view(session(id)),

    /** Ends the session (ending an ended one answers the same) and sums up its report. */
    end (id: number): ReportSummary {
      session(id)
      flush()
      if (open.delete(id)) repo.end(id, clock.nowMs())
      return summarize(report(id))
    },

    /** Keeps what the partner says it stored for an agency (a later post for the agency replaces it). */
    mirror (id: number, body: Mirror): { agencyId: number, clients: number } {
      session(id)
      const pairs: Array<[number, number]> = body.clients.map((c, i) => {
        const ms = parseTimestamp(c.modified)
        if (ms === null) throw invalidField(`clients[${i}].modified`, `'${c.modified.slice(0, 40)}' is not an ISO 8601 date-time such as 2026-11-22T09:00:00Z`)
        return [c.clientNumber, ms]
      })
      repo.putMirror(id, { agencyId: body.agencyId, upTo: body.upTo ?? null, postedMs: clock.nowMs(), clients: JSON.stringify(pairs) })
      return { agencyId: body.agencyId, clients: pairs.length }
    },

    report,

    /** Writes what waits (at shutdown, before the database closes). */
    close: flush
  }
}

export type Examiner = ReturnType<typeof createExaminer>
