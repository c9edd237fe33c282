import { deflateRawSync } from 'node:zlib'
import type { LogChunk, SessionRepository } from '../../db/sessions.js'
import { chunkHeader, encodeRequest, type RequestRecord, type TimeBases } from './codec.js'
import { WantedClients } from './session-rules.js'

/**
 * How long recorded requests wait in memory before they are encoded and written, in one
 * transaction. Each flush has a fixed cost (a deflate stream and a SQLite commit, a few hundred
 * microseconds together), so at full load it is spread over a couple of thousand requests; what
 * waits stays under a megabyte, and a process killed outright loses at most this much recording.
 */
export const FLUSH_INTERVAL_MS = 100
/** A flush happens at once when this many requests wait. */
const FLUSH_AT_REQUESTS = 4_000
/** Level 1: most of the size for little of the time (a chunk of requests shrinks about 15 times). */
const DEFLATE = { level: 1 }

/** An open session as the log counts for it. */
export interface Listener {
  id: number
  /** Its requests are those presenting this Client Id (null: every request). */
  clientId: string | null
  /** The log's count for its Client Id when it started, less what it had recorded before (a restart). */
  baseline: number
  capped: boolean
  /** The count last written for it. */
  written: number
}

/**
 * A world's log of recorded requests, shared by its open sessions. Each request a session wants
 * is appended once, whatever the number of sessions: what a session holds is a range of the log
 * and a Client Id, and how many it recorded is a difference of running counts. Recording only
 * appends to memory; a timer encodes and writes what waits every FLUSH_INTERVAL_MS (a session's
 * start, end or report writes it at once). Encoding a few thousand requests in one go costs far
 * less per request than one at a time between other requests, which push the encoding code and
 * its data out of the CPU's caches.
 */
export class RecordingLog {
  /** The position the next request appended gets. */
  nextSeq: number
  private pending: RequestRecord[] = []
  private total = 0
  private readonly byClient = new Map<string, number>()
  private readonly listeners = new Map<number, Listener>()
  /** Listeners still recording: those of every Client Id, and of each. */
  private readonly wanted = new WantedClients()
  private timer: NodeJS.Timeout | undefined
  private readonly header: string

  constructor (private readonly repo: SessionRepository, private readonly bases: TimeBases, private readonly cap: number) {
    this.nextSeq = Math.max(1, repo.lastSeq())
    this.header = chunkHeader(bases) + '\n'
  }

  /** The position the next entry appended takes, whether or not what waits was written yet. */
  get position (): number {
    return this.nextSeq + this.pending.length
  }

  /** True while a session records: the recording points skip all work otherwise. */
  get recording (): boolean {
    return this.wanted.any
  }

  /** Whether an open session takes a request presenting this Client Id. */
  wants (clientId: string | null | undefined): boolean {
    return this.wanted.wants(clientId)
  }

  /** Running count of the requests logged for this Client Id (null: all). */
  count (clientId: string | null): number {
    return clientId === null ? this.total : (this.byClient.get(clientId) ?? 0)
  }

  /** What a session has recorded: its count since it started, at most the cap. */
  recorded (listener: Listener): number {
    return Math.min(this.cap, this.count(listener.clientId) - listener.baseline)
  }

  /** An open session's count now (what waits to be written included); undefined once it stopped listening. */
  countOf (id: number): { recorded: number, capped: boolean } | undefined {
    const listener = this.listeners.get(id)
    if (listener === undefined) return undefined
    return { recorded: this.recorded(listener), capped: listener.capped || this.count(listener.clientId) - listener.baseline > this.cap }
  }

  /** A change of the world's data while sessions record: in the log for its order among requests, counted by no session. */
  appendChange (change: RequestRecord): void {
    this.pending.push(change)
    if (this.pending.length >= FLUSH_AT_REQUESTS) this.flush()
    else this.schedule()
  }

  append (request: RequestRecord): void {
    this.pending.push(request)
    this.total++
    const { clientId } = request
    if (clientId !== undefined) this.byClient.set(clientId, (this.byClient.get(clientId) ?? 0) + 1)
    if (this.pending.length >= FLUSH_AT_REQUESTS) this.flush()
    else this.schedule()
  }

  /** A session starts listening (recorded: what it had recorded before this process, if it was open at a restart). */
  listen (id: number, clientId: string | null, recorded = 0, capped = false): Listener {
    const listener = { id, clientId, baseline: this.count(clientId) - recorded, capped, written: recorded }
    this.listeners.set(id, listener)
    if (!capped) this.wanted.change(clientId, 1)
    return listener
  }

  /** A session stops listening (ended or deleted). */
  forget (id: number): void {
    const listener = this.listeners.get(id)
    if (listener === undefined) return
    this.listeners.delete(id)
    if (!listener.capped) this.wanted.change(listener.clientId, -1)
  }

  get listening (): number {
    return this.listeners.size
  }

  /** Encodes and writes what waits, with each session's count; a session at the cap stops wanting requests. */
  flush (): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    const counts = []
    for (const listener of this.listeners.values()) {
      const recorded = this.recorded(listener)
      // capped: a request came past the cap (one at the cap is recorded, nothing is left out yet)
      const capped = listener.capped || this.count(listener.clientId) - listener.baseline > this.cap
      if (recorded === listener.written && capped === listener.capped) continue
      if (capped && !listener.capped) this.wanted.change(listener.clientId, -1)
      listener.written = recorded
      listener.capped = capped
      counts.push({ id: listener.id, recorded, capped })
    }
    if (this.pending.length === 0 && counts.length === 0) return
    const chunks: LogChunk[] = []
    if (this.pending.length > 0) {
      const text = this.header + this.pending.map((r) => encodeRequest(r, this.bases)).join('\n')
      chunks.push({ firstSeq: this.nextSeq, count: this.pending.length, requests: deflateRawSync(text, DEFLATE) })
      this.nextSeq += this.pending.length
      this.pending = []
    }
    this.repo.append(chunks, counts)
  }

  private schedule (): void {
    if (this.timer !== undefined) return
    this.timer = setTimeout(() => this.flush(), FLUSH_INTERVAL_MS)
    // An idle process may exit with requests waiting only when it is not closed properly (close flushes).
    this.timer.unref()
  }
}
