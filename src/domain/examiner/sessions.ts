import type { ClientVersion } from '../../db/clients.js'
import type { SessionRepository, SessionRow } from '../../db/sessions.js'
import { notFound } from '../../errors.js'
import { SESSION_REQUEST_CAP, type Mirror, type Report, type ReportSummary, type ReportWorld, type Session } from '../../schemas/examiner.js'
import type { Clock } from '../clock.js'
import type { RequestRecord } from './codec.js'
import { readMirrorInTurns, type ReadMirror } from './mirror-body.js'
import { ChangesDuringReports } from './changes-during-reports.js'
import { RecordingLog } from './recording-log.js'
import { keptReport, summarize } from './report.js'
import { changeRecords, checkMirror, endedWhileRead, MAX_OPEN_SESSIONS, sessionView, tooManyOpen, type EndedBy } from './session-rules.js'
import type { ReportJob } from './report-job.js'
import type { WorldReports } from './report-runner.js'

export { FLUSH_INTERVAL_MS } from './recording-log.js'
export type { RequestRecord } from './codec.js'
export { MAX_MIRRORS_PER_SESSION, MAX_OPEN_SESSIONS, type EndedBy } from './session-rules.js'

export interface ExaminerOptions {
  repo: SessionRepository
  clock: Clock
  /** The world's clients now: what the sync check compares mirrors and reads with. */
  clientsOf: (agencyId: number) => Promise<readonly ClientVersion[]>
  /** Whether the world has this agency (mirrors are declared of agencies that exist). */
  agencyExists: (agencyId: number) => boolean
  /** Where reports are computed (a worker thread shared by every world). */
  reports: WorldReports
  /** Most requests recorded per session (SESSION_REQUEST_CAP). */
  cap?: number
  /** The world as a report names it (its start's digest may be computed on first use). */
  worldFacts: () => Promise<ReportWorld>
}

/** What a world's examiner does (createExaminer). */
export interface Examiner {
  readonly recording: boolean
  /**
   * Where a listing arriving now stands among the records (its `arrivedAt`): a change recorded
   * from there on came after it arrived, even when it is recorded before the listing's answer.
   * Taken once per listing a session records, which is recorded with it.
   */
  arrival: () => number
  wants: (clientId: string | null) => boolean
  record: (request: RequestRecord) => void
  /** A commit changed these clients ([agencyId, clientNumber]). */
  noteChanges: (clients: ReadonlyArray<readonly [number, number]>) => void
  start: (body: { name?: string, clientId?: string }) => Promise<Session>
  list: () => Promise<Session[]>
  get: (id: number) => Promise<Session>
  end: (id: number) => Promise<ReportSummary>
  endAll: (by: EndedBy) => Promise<void>
  delete: (id: number) => Promise<void>
  mirror: (id: number, body: Mirror | ReadMirror) => Promise<{ agencyId: number, clients: number }>
  report: (id: number) => Promise<Report>
  close: () => void
}

/**
 * The examiner sessions of one world: each records the world's vendor requests of one test run
 * (of one integration or of all) in the world's log (recording-log.ts), in SQLite so an open
 * session survives a restart. A report is computed on demand while the session is open, and once
 * when it ends: that report is kept, and is the session's report from then on, whatever happens
 * to the data afterwards.
 */
export function createExaminer ({ repo, clock, clientsOf, agencyExists, reports, worldFacts, cap = SESSION_REQUEST_CAP }: ExaminerOptions) {
  const log = new RecordingLog(repo, { atMs: Math.round(clock.nowMs()), realMs: Math.round(clock.realMs()) }, cap)
  const open = new Map<number, SessionRow>()
  /** Sessions ended whose report is being computed (or was not, before a restart): their part of the log stays. */
  const ending = new Map<number, Promise<Report>>()
  for (const row of repo.listOpen()) {
    // a session opened before the shared log keeps its own chunks and continues in the log
    const adopted = row.startSeq === null ? { ...row, startSeq: log.nextSeq } : row
    if (row.startSeq === null) repo.adopt(row.id, log.nextSeq)
    open.set(row.id, adopted)
    log.listen(row.id, row.clientId, row.recorded, row.capped)
  }

  function view (row: SessionRow): Session {
    return sessionView(row, log.countOf(row.id) ?? row)
  }

  function session (id: number): SessionRow {
    const row = repo.get(id)
    if (row === undefined) throw notFound(`No session ${id}; GET /_sandbox/sessions lists the sessions`)
    return row
  }

  /** What computing the session's report takes: its chunks, which requests of them are its, its mirrors. */
  function jobOf (row: SessionRow, sessionView: Session, world: ReportWorld): ReportJob {
    log.flush()
    const toSeq = row.endSeq ?? log.nextSeq
    return {
      session: sessionView,
      ownChunks: repo.ownChunks(row.id),
      chunks: row.startSeq === null ? [] : repo.logChunks(row.startSeq, toSeq),
      range: { fromSeq: row.startSeq ?? toSeq, toSeq, clientId: row.clientId, cap },
      mirrors: repo.mirrors(row.id),
      horizonMs: row.endedMs ?? clock.nowMs(),
      world
    }
  }

  const changesDuringReports = new ChangesDuringReports()

  async function compute (row: SessionRow, sessionView: Session, bounded = true): Promise<Report> {
    const job = jobOf(row, sessionView, await worldFacts())
    const changes = changesDuringReports.watch(clientsOf)
    try {
      return await reports.run(job, changes.clientsOf, (agencyId) => repo.mirrorClients(row.id, agencyId), { bounded })
    } finally {
      changes.stop()
    }
  }

  /** Forgets the log's chunks no open or ending session reads. */
  function trim (): void {
    let from = log.nextSeq
    for (const row of open.values()) from = Math.min(from, row.startSeq ?? from)
    for (const id of ending.keys()) from = Math.min(from, repo.get(id)?.startSeq ?? from)
    repo.trimLog(from)
  }

  /** The report a session ended with: kept, or computed once (a session that ended before reports were kept). */
  async function endedReport (row: SessionRow): Promise<Report> {
    const kept = repo.report(row.id)
    if (kept !== undefined) return keptReport(kept, await worldFacts())
    const running = ending.get(row.id)
    if (running !== undefined) return running
    return keepReport(row, compute(row, view(row)))
  }

  async function keepReport (row: SessionRow, computing: Promise<Report>): Promise<Report> {
    ending.set(row.id, computing)
    try {
      const report = await computing
      repo.keepReport(row.id, JSON.stringify(report))
      return report
    } finally {
      ending.delete(row.id)
      trim()
    }
  }

  /**
   * Ends an open session: it stops recording now, and its report is computed against the data as
   * it stands now, and kept. `bounded`: the report takes its place in the runner's bounded queue
   * (a partner's call may be refused when it is full; the sandbox's own endings wait their turn).
   */
  async function endSession (row: SessionRow, by: EndedBy, bounded = true): Promise<Report> {
    log.flush()
    const counted = view(row)
    log.forget(row.id)
    open.delete(row.id)
    const endedMs = clock.nowMs()
    const endSeq = log.nextSeq
    repo.end(row.id, { endedMs, endSeq, by, recorded: counted.recorded, capped: counted.capped })
    const ended = { ...row, endedMs, endSeq, endedBy: by, recorded: counted.recorded, capped: counted.capped }
    return keepReport(ended, compute(ended, view(ended), bounded))
  }

  const examiner: Examiner = {
    /** True while a session is open: the recording points skip all work otherwise. */
    get recording (): boolean {
      return log.recording
    },

    arrival: (): number => log.position,

    /** Whether a request presenting this Client Id would be recorded by an open session. */
    wants: (clientId: string | null): boolean => log.wants(clientId),

    /** Records a request once in the world's log, for every open session that takes its Client Id. */
    record (request: RequestRecord): void {
      if (log.wants(request.clientId)) log.append(request)
    },

    /**
     * Clients a commit of the world's data changed: while sessions record, logged in order among
     * the requests, so the sync check knows which change came before which listing or read even
     * when the clock stands still and they share one instant; while reports are computed, not
     * judged by them (changes-during-reports.ts).
     */
    noteChanges (clients: ReadonlyArray<readonly [number, number]>): void {
      changesDuringReports.note(clients)
      if (!log.recording || clients.length === 0) return
      for (const change of changeRecords(clients, clock.nowMs(), clock.realMs())) log.appendChange(change)
    },

    async start ({ name, clientId }: { name?: string, clientId?: string }): Promise<Session> {
      if (open.size >= MAX_OPEN_SESSIONS) throw tooManyOpen(open.size)
      log.flush()
      const startedMs = clock.nowMs()
      const id = repo.insert(name ?? `session at ${new Date(startedMs).toISOString()}`, clientId ?? null, startedMs, log.nextSeq)
      const row = session(id)
      open.set(id, row)
      log.listen(id, row.clientId)
      return view(row)
    },

    list: async (): Promise<Session[]> => {
      log.flush()
      return repo.list().map(view)
    },

    get: async (id: number): Promise<Session> => {
      log.flush()
      return view(session(id))
    },

    /** Ends the session and sums up its report (ending an ended session answers the report it ended with). */
    async end (id: number): Promise<ReportSummary> {
      const row = session(id)
      return summarize(row.endedMs === null && open.has(id) ? await endSession(row, 'end') : await endedReport(row))
    },

    /** Ends every open session (a reset of the world), each report in turn: their reports say what ended them. */
    async endAll (by: EndedBy): Promise<void> {
      for (const row of [...open.values()]) await endSession(row, by, false)
    },

    /** Deletes a session, ended or open, with its report and mirrors. */
    async delete (id: number): Promise<void> {
      session(id)
      log.forget(id)
      open.delete(id)
      repo.delete(id)
      trim()
    },

    /**
     * Keeps what the partner says it stored for an agency (a later post for the agency replaces it):
     * a body as posted (its entries read in turns), or one read whole on the fixture worker.
     */
    async mirror (id: number, body: Mirror | ReadMirror): Promise<{ agencyId: number, clients: number }> {
      const row = session(id)
      checkMirror({ id, ended: row.endedMs !== null }, body.agencyId, agencyExists(body.agencyId), repo.mirroredAgencies(id))
      const read = 'pairs' in body ? body : await readMirrorInTurns(body)
      if (!open.has(id)) throw endedWhileRead(id)
      log.flush()
      repo.putMirror(id, { agencyId: read.agencyId, upTo: read.upTo, postedMs: clock.nowMs(), postedSeq: log.nextSeq, clients: read.pairs })
      return { agencyId: read.agencyId, clients: read.count }
    },

    /** The session's report: computed now while it is open, the kept one once it has ended. */
    async report (id: number): Promise<Report> {
      const row = session(id)
      if (row.endedMs !== null || !open.has(id)) return endedReport(row)
      return compute(row, view(row))
    },

    /** Writes what waits (at shutdown, before the database closes). */
    close: () => log.flush()
  }
  return examiner
}
