import type { ClientRepository, ConcatPiece } from '../db/index.js'
import { BufferPool } from './buffer-pool.js'
import { ByteSlabs, NOT_KEPT } from './byte-slabs.js'
import { EncodedJson } from './encoded.js'

/**
 * Batch-read answers: each client's JSON (by the one rule, joined by SQLite) is kept as bytes per
 * agency and groups, in slabs allocated once and reused when the cache starts over, so it makes
 * no garbage; SQLite reads only the clients not kept. A large answer is sent from the slabs
 * themselves (chunks viewing them, nothing copied), and the slabs are written again only once
 * no answer reads them; while the cache waits to start over, answers are copied into buffers
 * lent by a pool instead, so the answers that read the slabs can only finish.
 */

/** Bytes of client JSON kept by default (about 5,500 clients of 3 kB). */
export const BATCH_CACHE_BYTES = 16 * 1024 * 1024
/** Clients (absent ones too) kept at most; past either bound, the cache starts over. */
const BATCH_CACHE_ENTRIES = 100_000
/** A client the cache knows not to be there (unknown or deleted). */
const ABSENT = -1
/** An answer this large is sent from the slabs; a smaller one is copied (a copy of a few kB costs less than a stream). */
const SENT_FROM_SLABS_BYTES = 64 * 1024

const SHARED_ANSWER_BUFFERS = new BufferPool()

export class BatchAnswers {
  /** Per agency and groups: each client's handle in `slabs`, or ABSENT. */
  private readonly kept = new Map<string, Map<number, number>>()
  private readonly slabs: ByteSlabs
  /** One pool for every world's batch answers: buffers kept for reuse are the process's, not each world's. */
  private readonly answers = SHARED_ANSWER_BUFFERS
  private entries = 0
  /** The cache filled up during a request: the next request starts it over (this one still uses its handles). */
  private full = false
  /** Answers being written from the slabs: they start over only when none is. */
  private reading = 0
  private readonly doneReading = () => {
    this.reading--
  }

  constructor (
    private readonly clients: Pick<ClientRepository, 'concatLiveClientsIn'>,
    budget = BATCH_CACHE_BYTES
  ) {
    // slabs of 1 MiB, or a quarter of a smaller budget (a world in memory keeps 1 MiB: allocated as it fills)
    this.slabs = new ByteSlabs(budget, Math.max(1, Math.min(1024 * 1024, Math.ceil(budget / 4))))
  }

  /**
   * The live clients among `clientNumbers` (distinct), in that order, as a JSON array of the
   * clients joined by `pieces`; `keep` false reads every client now and keeps none.
   */
  json (agencyId: number, clientNumbers: readonly number[], groupsKey: string, pieces: readonly ConcatPiece[], keep: boolean): EncodedJson {
    // starting over between requests, never during one: its handles stay valid
    if (this.full) this.clear()
    const key = `${agencyId}|${groupsKey}`
    let kept = keep ? this.kept.get(key) : undefined
    if (keep && kept === undefined) this.kept.set(key, (kept = new Map()))
    // this request's parts by position: a handle, text read now (not kept), or ABSENT
    const found: Array<number | string | undefined> = []
    const missing: number[] = []
    for (const n of clientNumbers) {
      const part = kept?.get(n)
      found.push(part)
      if (part === undefined) missing.push(n)
    }
    if (missing.length > 0) {
      const read = new Map(this.clients.concatLiveClientsIn(agencyId, missing, pieces))
      for (let i = 0; i < clientNumbers.length; i++) {
        if (found[i] !== undefined) continue
        const n = clientNumbers[i]
        const text = read.get(n)
        found[i] = text === undefined ? ABSENT : kept === undefined ? text : this.keep(kept, n, text)
      }
    }
    const parts = found.filter((part): part is number | string => part !== ABSENT)
    // the length is measured only for an answer that could be sent from the slabs (a full cache copies, and measures as it does)
    if (!this.full && parts.some((part) => typeof part === 'number') && this.slabs.jsonLength(parts) >= SENT_FROM_SLABS_BYTES) {
      this.reading++
      return new EncodedJson(this.slabs.jsonChunks(parts), this.doneReading)
    }
    const body = this.slabs.jsonArray(parts, (length) => this.answers.take(length))
    return new EncodedJson(body, this.answers.lends(body) ? () => this.answers.give(body) : null)
  }

  /** Answers being written from the slabs now. */
  get answersReading (): number {
    return this.reading
  }

  /** Keeps a client's text if there is room: its handle, or the text itself when it cannot be kept. */
  private keep (kept: Map<number, number>, clientNumber: number, text: string): number | string {
    const bytes = Buffer.byteLength(text, 'utf8')
    // a client larger than a slab is answered, never kept; a full cache keeps nothing more
    const handle = this.full || bytes > this.slabs.slabBytes ? NOT_KEPT : this.slabs.keep(text, bytes)
    if (handle === NOT_KEPT) {
      if (bytes <= this.slabs.slabBytes) this.full = true
      return text
    }
    kept.set(clientNumber, handle)
    if (++this.entries >= BATCH_CACHE_ENTRIES) this.full = true
    return handle
  }

  /** Forgets one client in every groups of its agency (its bytes stay in their slab until the cache starts over). */
  forget (agencyId: number, clientNumber: number): void {
    const prefix = `${agencyId}|`
    for (const [key, kept] of this.kept) if (key.startsWith(prefix)) kept.delete(clientNumber)
  }

  /**
   * Forgets every kept client. Their slabs are written again from the start, or, while answers
   * still read them, once they are written: until then nothing more is kept.
   */
  clear (): void {
    this.kept.clear()
    this.entries = 0
    this.full = this.reading > 0
    if (!this.full) this.slabs.reset()
  }
}
