import { promisify } from 'node:util'
import { deflateRaw } from 'node:zlib'
import type { ExaminerStore, ShippedRecord, StoredSession } from '../../db/postgres/examiner-store.js'
import { notFound } from '../../errors.js'
import { SESSION_REQUEST_CAP, type Mirror, type Report, type ReportSummary, type ReportWorld, type Session } from '../../schemas/examiner.js'
import type { Clock } from '../clock.js'
import { chunkHeader, encodeRequest, withJournalId, type RequestRecord, type TimeBases } from './codec.js'
import { ChangesDuringReports } from './changes-during-reports.js'
import { readMirrorInTurns, type ReadMirror } from './mirror-body.js'
import type { ReportJob } from './report-job.js'
import type { ClientsOf, WorldReports } from './report-runner.js'
import { keptReport, summarize } from './report.js'
import { changeRecords, checkMirror, endedWhileRead, MAX_OPEN_SESSIONS, sessionView, tooManyOpen, WantedClients, type EndedBy } from './session-rules.js'
import type { Examiner } from './sessions.js'

const deflate = promisify(deflateRaw)

/** Longest a listing not yet recorded holds back the changes noted after it arrived (takeShipment). */
const LISTING_HOLD_MS = 10_000

/** Lines carry absolute times: records of several instances, each with its own clock's start, share one chunk. */
const ABSOLUTE: TimeBases = { atMs: 0, realMs: 0 }

/** The sessions open in a world, as every instance must know them to record: [id, Client Id (null: all)]. */
export type OpenSessions = ReadonlyArray<readonly [id: number, clientId: string | null]>

export interface SharedSessionsOptions {
  worldId: string
  store: ExaminerStore
  /** Waits until every instance alive has shipped what it recorded, and it is moved in arrival order (shared-journals.ts). */
  synced: () => Promise<void>
  /** Records wait to be shipped: they are, within FLUSH_INTERVAL_MS. */
  shipSoon: () => void
  clock: Clock
  clientsOf: ClientsOf
  agencyExists: (agencyId: number) => boolean
  reports: WorldReports
  cap?: number
  /** The world as a report names it. */
  worldFacts: () => Promise<ReportWorld>
}

/** An open session as this instance records for it. */
interface Listener {
  clientId: string | null
  /** This instance's count of the requests of its Client Id when it learnt of the session. */
  baseline: number
  /** This instance alone recorded more than the cap for it: it records no more (the session is capped whatever the others did). */
  capped: boolean
}

interface Waiting {
  localSeq: number
  realMs: number
  change: boolean
  record: RequestRecord
}

/**
 * Hosted mode: the examiner sessions of one world, shared by every instance over PostgreSQL
 * (db/postgres/examiner-store.ts). Which sessions are open travels with the world's commits (a
 * replica's effect), so every instance records the requests they take; each instance holds what
 * it recorded in memory and ships it with the request journal, which moves it in the order the
 * requests arrived. A session's start, end, mirror, count and report first wait until every
 * instance has shipped (as a journal read does), then take a position: the session holds exactly
 * the requests answered, anywhere, between its start and its end. Control calls that change a
 * session take the world's write turn (plugins/replication.ts), so one instance at a time changes
 * a world's sessions, holding them as they are.
 */
export class SharedSessions implements Examiner {
  /** Told the open sessions when they change (in a write turn: replica.ts logs them as an effect). */
  observer: ((open: OpenSessions) => void) | undefined
  private readonly open = new Map<number, Listener>()
  /** Requests recorded here, in all and by Client Id: what a listener's count is a difference of. */
  private total = 0
  private readonly byClient = new Map<string, number>()
  private readonly wanted = new WantedClients()
  private waiting: Waiting[] = []
  /** Listings being answered here (Examiner.arrival), in the order they arrived, until they are recorded. */
  private readonly listings: Array<{ arrival: number, sinceMs: number }> = []
  private localSeq = 0
  /** The order key of the record taken last (never decreasing, as the journal's). */
  private lastKey = 0
  /** Sessions ended here whose report is being computed. */
  private readonly ending = new Map<number, Promise<Report>>()
  private readonly changesDuringReports = new ChangesDuringReports()
  private readonly cap: number

  constructor (private readonly options: SharedSessionsOptions) {
    this.cap = options.cap ?? SESSION_REQUEST_CAP
  }

  get recording (): boolean {
    return this.wanted.any
  }

  /** Where a listing arriving now stands among what this instance records: the local number the next record takes. */
  arrival (): number {
    const arrival = this.localSeq + 1
    this.listings.push({ arrival, sinceMs: performance.now() })
    return arrival
  }

  wants (clientId: string | null): boolean {
    return this.wanted.wants(clientId)
  }

  record (request: RequestRecord): void {
    const clientId = request.clientId ?? null
    if (!this.wants(clientId)) return
    this.total++
    if (clientId !== null) this.byClient.set(clientId, (this.byClient.get(clientId) ?? 0) + 1)
    this.wait(request, false)
  }

  /** Changes committed: not judged by the reports computed meanwhile; logged by the instance that made them (not when replayed). */
  noteChanges (clients: ReadonlyArray<readonly [number, number]>, replayed = false): void {
    this.changesDuringReports.note(clients)
    if (replayed || !this.recording || clients.length === 0) return
    for (const change of changeRecords(clients, this.options.clock.nowMs(), this.options.clock.realMs())) this.wait(change, true)
  }

  /**
   * What waits to be shipped, as lines (the caller ships it, or keeps it to ship again).
   * `holdForListings` (a ship of the timer's): a change noted since a listing being answered
   * arrived, and what follows it, wait for the listing to be recorded before it (a ship places
   * them in the order they are moved), or for LISTING_HOLD_MS; asked again soon. A ship a read
   * waits for takes everything: a read holds what was answered before it began.
   */
  takeShipment (holdForListings = false): ShippedRecord[] {
    // a session this instance alone recorded past the cap for needs nothing more from it
    for (const listener of this.open.values()) {
      if (!listener.capped && this.count(listener.clientId) - listener.baseline > this.cap) {
        listener.capped = true
        this.wanted.change(listener.clientId, -1)
      }
    }
    const held = holdForListings ? this.firstHeld() : -1
    const taken = held === -1 ? this.waiting : this.waiting.slice(0, held)
    this.waiting = held === -1 ? [] : this.waiting.slice(held)
    if (held !== -1) this.options.shipSoon()
    const { worldId } = this.options
    return taken.map((w) => ({ localSeq: w.localSeq, realMs: w.realMs, worldId, clientId: w.record.clientId ?? null, change: w.change, journalId: w.record.journalId, line: encodeRequest(w.record, ABSOLUTE) }))
  }

  /** The open sessions, as the world's commits carry them. */
  state (): OpenSessions {
    return [...this.open].map(([id, listener]) => [id, listener.clientId] as const)
  }

  /** The open sessions as another instance's commit left them (those open before keep their count here). */
  adopt (open: OpenSessions): void {
    const still = new Set(open.map(([id]) => id))
    for (const id of [...this.open.keys()]) if (!still.has(id)) this.forget(id, false)
    for (const [id, clientId] of open) this.listen(id, clientId)
  }

  async start ({ name, clientId }: { name?: string, clientId?: string }): Promise<Session> {
    if (this.open.size >= MAX_OPEN_SESSIONS) throw tooManyOpen(this.open.size)
    await this.options.synced()
    const startedMs = this.options.clock.nowMs()
    const startSeq = await this.options.store.mark()
    const row = await this.options.store.insert(this.options.worldId, name ?? `session at ${new Date(startedMs).toISOString()}`, clientId ?? null, startedMs, startSeq)
    this.listen(row.id, row.clientId)
    this.observer?.(this.state())
    return sessionView(row, { recorded: 0, capped: false })
  }

  async list (): Promise<Session[]> {
    await this.options.synced()
    const rows = await this.options.store.list(this.options.worldId)
    const now = rows.some((row) => row.endedMs === null) ? await this.options.store.mark() : 0
    return await Promise.all(rows.map(async (row) => sessionView(row, await this.counted(row, now))))
  }

  async get (id: number): Promise<Session> {
    await this.options.synced()
    const row = await this.session(id)
    return sessionView(row, await this.counted(row, row.endedMs === null ? await this.options.store.mark() : 0))
  }

  async end (id: number): Promise<ReportSummary> {
    const row = await this.session(id)
    return summarize(row.endedMs === null ? await this.endSession(row, 'end') : await this.endedReport(row))
  }

  async endAll (by: EndedBy): Promise<void> {
    for (const id of [...this.open.keys()]) {
      const row = await this.options.store.get(this.options.worldId, id)
      if (row !== undefined && row.endedMs === null) await this.endSession(row, by, false)
    }
  }

  async delete (id: number): Promise<void> {
    await this.session(id)
    await this.options.store.delete(id)
    this.forget(id)
    await this.options.store.trim(this.options.worldId)
  }

  async mirror (id: number, body: Mirror | ReadMirror): Promise<{ agencyId: number, clients: number }> {
    const row = await this.session(id)
    const mirrored = (await this.options.store.mirrors(id)).map((m) => m.agencyId)
    checkMirror({ id, ended: row.endedMs !== null }, body.agencyId, this.options.agencyExists(body.agencyId), mirrored)
    const read = 'pairs' in body ? body : await readMirrorInTurns(body)
    if (!this.open.has(id)) throw endedWhileRead(id)
    await this.options.synced()
    const postedSeq = await this.options.store.mark()
    await this.options.store.putMirror(id, { agencyId: read.agencyId, upTo: read.upTo, postedMs: this.options.clock.nowMs(), postedSeq, clients: read.pairs })
    return { agencyId: read.agencyId, clients: read.count }
  }

  async report (id: number): Promise<Report> {
    const row = await this.session(id)
    if (row.endedMs !== null) return await this.endedReport(row)
    await this.options.synced()
    const changes = this.changesDuringReports.watch(this.options.clientsOf)
    try {
      const toSeq = await this.options.store.mark()
      return await this.compute(row, toSeq, this.options.clock.nowMs(), sessionView(row, await this.counted(row, toSeq)), changes.clientsOf)
    } finally {
      changes.stop()
    }
  }

  /** Nothing to write here: what waits is shipped by the journal's last ship. */
  close (): void {}

  private listen (id: number, clientId: string | null): void {
    if (this.open.has(id)) return
    this.open.set(id, { clientId, baseline: this.count(clientId), capped: false })
    this.wanted.change(clientId, 1)
  }

  /** A session ended or deleted (told: by this instance, in its write turn). */
  private forget (id: number, told = true): void {
    const listener = this.open.get(id)
    if (listener === undefined) return
    this.open.delete(id)
    if (!listener.capped) this.wanted.change(listener.clientId, -1)
    if (told) this.observer?.(this.state())
  }

  private count (clientId: string | null): number {
    return clientId === null ? this.total : (this.byClient.get(clientId) ?? 0)
  }

  private wait (record: RequestRecord, change: boolean): void {
    // bounded while PostgreSQL cannot take them: a session holds no more than its cap anyway
    if (this.waiting.length >= this.cap) return
    this.lastKey = Math.max(this.lastKey, performance.timeOrigin + performance.now() - record.elapsedMs)
    const entry = { localSeq: ++this.localSeq, realMs: this.lastKey, change, record }
    const at = record.arrivedAt === undefined ? -1 : this.firstChangeFrom(record.arrivedAt)
    if (record.arrivedAt !== undefined) this.answered(record.arrivedAt)
    // its place in what is shipped says where it arrived; the local number means nothing to the others
    record.arrivedAt = undefined
    if (at === -1) {
      this.waiting.push(entry)
    } else {
      entry.realMs = this.waiting[at].realMs
      this.waiting.splice(at, 0, entry)
    }
    this.options.shipSoon()
  }

  /** The first change waiting that came after a listing still being answered here (-1: none). */
  private firstHeld (): number {
    const now = performance.now()
    // a listing never recorded (its answer never ended) holds nothing for long
    while (this.listings.length > 0 && now - this.listings[0].sinceMs > LISTING_HOLD_MS) this.listings.shift()
    if (this.listings.length === 0) return -1
    // in the order they arrived: the first is the oldest
    return this.firstChangeFrom(this.listings[0].arrival)
  }

  /** A listing arrived at `arrival` is recorded: it holds nothing back any more. */
  private answered (arrival: number): void {
    const at = this.listings.findIndex((l) => l.arrival === arrival)
    if (at !== -1) this.listings.splice(at, 1)
  }

  /**
   * The first change waiting that this instance noted from a local number on (-1: none): a listing
   * goes before it. One shipped already stays before the listing: the timer's ships hold such a
   * change back while the listing is answered (takeShipment), a read's do not.
   */
  private firstChangeFrom (localSeq: number): number {
    let found = -1
    for (let i = this.waiting.length - 1; i >= 0 && this.waiting[i].localSeq >= localSeq; i--) if (this.waiting[i].change) found = i
    return found
  }

  private async session (id: number): Promise<StoredSession> {
    const row = await this.options.store.get(this.options.worldId, id)
    if (row === undefined) throw notFound(`No session ${id}; GET /_sandbox/sessions lists the sessions`)
    return row
  }

  /** An open session's count up to `toSeq`; an ended one's as it ended. */
  private async counted (row: StoredSession, toSeq: number): Promise<{ recorded: number, capped: boolean }> {
    if (row.endedMs !== null) return { recorded: row.recorded, capped: row.capped }
    const n = await this.options.store.count(this.options.worldId, row, toSeq)
    return { recorded: Math.min(n, this.cap), capped: n > this.cap }
  }

  private async endSession (row: StoredSession, by: EndedBy, bounded = true): Promise<Report> {
    await this.options.synced()
    // from before the records' end is taken: a change meanwhile may be after it
    const changes = this.changesDuringReports.watch(this.options.clientsOf)
    try {
      const endSeq = await this.options.store.mark()
      const count = await this.counted(row, endSeq)
      const endedMs = this.options.clock.nowMs()
      await this.options.store.end(row.id, { endedMs, endSeq, by, ...count })
      this.forget(row.id)
      const ended: StoredSession = { ...row, endedMs, endSeq, endedBy: by, ...count }
      return await this.keepReport(ended, this.compute(ended, endSeq, endedMs, sessionView(ended, count), changes.clientsOf, bounded))
    } finally {
      changes.stop()
    }
  }

  /** The report a session ended with: kept, or computed once (its instance ended before it kept one). */
  private async endedReport (row: StoredSession): Promise<Report> {
    const kept = await this.options.store.report(row.id)
    if (kept !== undefined) return keptReport(kept, await this.options.worldFacts())
    const running = this.ending.get(row.id)
    if (running !== undefined) return await running
    return await this.keepReport(row, this.compute(row, row.endSeq ?? 0, row.endedMs ?? 0, sessionView(row, row), this.options.clientsOf))
  }

  private async keepReport (row: StoredSession, computing: Promise<Report>): Promise<Report> {
    this.ending.set(row.id, computing)
    try {
      const kept = await this.options.store.keepReport(row.id, JSON.stringify(await computing))
      return JSON.parse(kept) as Report
    } finally {
      this.ending.delete(row.id)
      await this.options.store.trim(this.options.worldId)
    }
  }

  /**
   * The session's report from its records up to `toSeq`: one chunk of the examiner's format,
   * numbered from 1 (a mirror's place among them is the count of records before its position).
   */
  private async compute (row: StoredSession, toSeq: number, horizonMs: number, session: Session, clientsOf: ClientsOf, bounded = true): Promise<Report> {
    const { store, worldId, reports } = this.options
    const records = await store.records(worldId, row, toSeq)
    const seqs = records.map((r) => Number(r.seq))
    const placeOf = (position: number) => 1 + seqs.filter((seq) => seq < position).length
    // each request named by its id in the shared journal, not in the journal of the instance that answered it
    const text = [chunkHeader(ABSOLUTE), ...records.map((r) => withJournalId(r.line, Number(r.journal_id)))].join('\n')
    const job: ReportJob = {
      session,
      ownChunks: [],
      chunks: records.length === 0 ? [] : [{ firstSeq: 1, requests: await deflate(text, { level: 1 }) }],
      range: { fromSeq: 1, toSeq: records.length + 1, clientId: row.clientId, cap: this.cap },
      mirrors: (await store.mirrors(row.id)).map((m) => ({ ...m, postedSeq: placeOf(m.postedSeq) })),
      horizonMs,
      world: await this.options.worldFacts()
    }
    return await reports.run(job, clientsOf, async (agencyId) => await store.mirrorClients(row.id, agencyId), { bounded })
  }
}
