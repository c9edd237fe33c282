import pg from 'pg'
import type { Db } from '../../db/database.js'
import type { CapturedStep, UnitOfWork } from '../../db/index.js'
import { AppendNotSent, Fenced, type NewEntry, type WorldLog } from '../../db/postgres/world-log.js'
import { ApiError, OutcomeUnknownAnswer, worldDeleted, writeNotApplied } from '../../errors.js'
import { pagesOf } from './starts.js'
import type { World } from './world.js'
import { encodeSteps, stateOf } from './world-state.js'

/**
 * A world this instance owns (hosted mode): it runs on SQLite in memory as in a single process,
 * and every commit reaches the world's log (world-log.ts) before anyone is answered from it.
 * - A request that may write takes the world's turn (one at a time) before its handler; its
 *   commands are captured (UnitOfWork.capture) and, once it is answered, queued for the log. Turns
 *   that queue while an append is on its way share the next one (group commit); the answer leaves
 *   once its append is in PostgreSQL.
 * - A read answered while a write it may have seen is not yet in the log waits for that write's
 *   append (`settled`), and does not leave if the append fails.
 * - The instruments' state (world-state.ts) goes with an append whenever its JSON changed; records
 *   of the examiner (a database of the world's own) and state changed by reads (fault counts) go
 *   with the next append or the background flush.
 * - An append whose answer is lost is resolved before anyone is answered (world-log.ts,
 *   outcomes.ts): found in the log, it succeeded. One that fails leaves the world's memory ahead
 *   of its log (or unknown): every request waiting is answered 503 (saying nothing was applied
 *   only when that is known), and the world is given up (`onLost`), to be loaded again from its log.
 *   When its lease was taken from it, the world may have been deleted: what waits is answered once
 *   `onLost` knows, as deleted (404) if it was.
 */

export interface OwnedWorldOptions {
  log: WorldLog
  epoch: number
  /** The log's last entry, as loaded. */
  seq: number
  /** The world's start is in the catalogue (a created world): a reset to it is logged without its body. */
  startInCatalogue: boolean
  /** An append not confirmed within this is answered as of unknown outcome, and the world given up. */
  answerWithinMs: number
  /**
   * The world's memory is no longer what its log holds (or may not be): it must be given up. A
   * promise: requests waiting are answered once it settles (the world deleted meanwhile, or not).
   */
  onLost: (reason: Error) => Promise<void> | void
  /** A commit of more steps than this is appended as a snapshot (replaying it would cost more). */
  maxCommitSteps?: number
  /**
   * Appends after which the next one is a snapshot, so a load replays few, once the commits since
   * the last snapshot also hold at least SNAPSHOT_LOG_SHARE of the world's size.
   */
  snapshotEvery?: number
}

/** A request's turn to write the world: once answered, `finish` queues what it wrote and resolves when that is in the log. */
export interface WriteTurn {
  finish(): Promise<void>
}

interface Waiter {
  resolve: () => void
  reject: (e: ApiError) => void
}

/** What waits for the next append: the turns finished (the last one's number), their data and records steps, whether the data must go whole. */
interface Batch {
  lastTurn: number
  data: CapturedStep[]
  records: CapturedStep[]
  snapshot: boolean
  waiters: Waiter[]
}

/**
 * A snapshot copies the whole world while the world's writes wait for it: one every 500 commits
 * put a log note's p99 at 1.2 s in a world of 10,000 clients (bench/README.md). So a snapshot
 * waits until the commits since the last one hold this share of the world's bytes: the log never
 * holds more than about twice what the world is, and a load replays at most half a world's worth
 * of commits (a demo-sized world, 1.7 MB, takes one every 1,000 or so log notes).
 */
const SNAPSHOT_LOG_SHARE = 0.5

const emptyBatch = (lastTurn: number): Batch => ({ lastTurn, data: [], records: [], snapshot: false, waiters: [] })

export class OwnedWorld {
  private seq: number
  private commitsSinceSnapshot = 0
  /** Bytes of the commit entries appended since the last snapshot. */
  private bytesSinceSnapshot = 0
  /** Turns granted so far, and the last whose writes are in the log. */
  private granted = 0
  private durable = 0
  private turnHeld = false
  private readonly turnQueue: Array<{ grant: (turn: WriteTurn) => void, refuse: (e: ApiError) => void }> = []
  private pending: Batch
  private inFlight: Batch | undefined
  /** Reads waiting for the writes they may have seen: resolved once the turn they name is durable. */
  private readers: Array<{ turn: number, waiter: Waiter }> = []
  /** The unit of work being captured (a reset may swap the data for another database). */
  private capturing: UnitOfWork
  /** The state's JSON as last appended. */
  private stateText: string
  private lost: Error | undefined
  /** Settled once it is known whether the world was lost to its deletion (`onLost`). */
  private lossKnown: Promise<void> = Promise.resolve()
  private readonly maxCommitSteps: number
  private readonly snapshotEvery: number

  /** The examiner's records: the world's own database (`recordsDb`), captured as its data is. */
  private readonly records: UnitOfWork

  constructor (readonly world: World, private readonly recordsDb: Db, private readonly options: OwnedWorldOptions) {
    this.records = world.records
    this.seq = options.seq
    this.maxCommitSteps = options.maxCommitSteps ?? 2000
    this.snapshotEvery = options.snapshotEvery ?? 500
    this.pending = emptyBatch(0)
    this.capturing = world.sql
    world.sql.capture()
    this.records.capture()
    this.stateText = JSON.stringify(stateOf(world))
    world.simulator.inWriteTurns(async (work) => {
      const turn = await this.beginTurn()
      try {
        work()
      } finally {
        await turn.finish()
      }
    })
  }

  get epoch (): number { return this.options.epoch }

  /** Takes the world's turn to write (at once when free). */
  beginTurn (): WriteTurn | Promise<WriteTurn> {
    if (this.lost !== undefined) return this.refusal(this.notApplied())
    if (!this.turnHeld) return this.grant()
    return new Promise((resolve, reject) => this.turnQueue.push({ grant: resolve, refuse: reject }))
  }

  private grant (): WriteTurn {
    this.turnHeld = true
    const number = ++this.granted
    let finished: Promise<void> | undefined
    return { finish: () => (finished ??= this.finish(number)) }
  }

  /**
   * Undefined when a read may be answered now: no write it could have seen is still on its way to
   * the log; else resolved once those are there (rejected when they failed).
   */
  settled (): Promise<void> | undefined {
    if (this.lost !== undefined) return this.refusal(this.notApplied())
    if (this.durable >= this.granted) return undefined
    const turn = this.granted
    return new Promise((resolve, reject) => this.readers.push({ turn, waiter: { resolve, reject } }))
  }

  /** True while nothing is held or on its way (a world given up now loses nothing). */
  get quiet (): boolean {
    return !this.turnHeld && this.inFlight === undefined && this.pending.waiters.length === 0
  }

  /**
   * Appends what changed without a write turn (the examiner's records, fault counts a read moved),
   * when nothing else is on its way; the background's 100 ms flush, and the last one before the
   * world is given up.
   */
  flush (): Promise<void> | undefined {
    if (this.lost !== undefined || this.turnHeld || this.inFlight !== undefined || this.pending.waiters.length > 0) return undefined
    if (this.records.capturedSteps === 0 && this.capturing.capturedSteps === 0 && JSON.stringify(stateOf(this.world)) === this.stateText) return undefined
    const done = new Promise<void>((resolve, reject) => this.pending.waiters.push({ resolve, reject }))
    this.pending.lastTurn = this.durable
    this.takeSteps(this.pending)
    this.startAppend()
    return done
  }

  /**
   * Gives the world up now (its lease ran out, an append failed, it is deleted): whatever waits is
   * answered 503, the append on its way as of unknown outcome unless PostgreSQL said it refused it.
   */
  lose (reason: Error, refused = false): void {
    if (this.lost !== undefined) return
    this.lost = reason
    const notApplied = this.notApplied()
    const sent = refused ? writeNotApplied(reason.message) : new OutcomeUnknownAnswer(`it did not confirm the write (${reason.message})`, 'check-first')
    const refusals = [
      ...(this.inFlight?.waiters ?? []).map((waiter) => () => waiter.reject(this.answer(sent))),
      ...this.pending.waiters.map((waiter) => () => waiter.reject(this.answer(notApplied))),
      ...this.turnQueue.splice(0).map((queued) => () => queued.refuse(this.answer(notApplied))),
      ...this.readers.splice(0).map(({ waiter }) => () => waiter.reject(this.answer(notApplied)))
    ]
    this.pending = emptyBatch(0)
    const known = this.options.onLost(reason)
    this.lossKnown = known === undefined ? Promise.resolve() : known.catch(() => undefined)
    void this.lossKnown.then(() => { for (const refuse of refusals) refuse() })
  }

  private notApplied (): ApiError {
    return writeNotApplied(`world ${this.world.id} is being loaded again (${this.lost?.message ?? 'lost'})`)
  }

  /** What a request refused after the world was lost answers: as deleted when it was (the HTTP layer makes that a partner's 401). */
  private answer (error: ApiError): ApiError {
    return this.world.deleted ? worldDeleted(this.world.id) : error
  }

  /** Rejects with `error` (or as deleted) once the loss is understood. */
  private async refusal (error: ApiError): Promise<never> {
    await this.lossKnown
    throw this.answer(error)
  }

  private async finish (number: number): Promise<void> {
    const done = new Promise<void>((resolve, reject) => {
      if (this.lost !== undefined) {
        this.refusal(this.notApplied()).catch(reject)
        return
      }
      const batch = this.pending
      this.takeSteps(batch)
      const nothing = batch.data.length === 0 && batch.records.length === 0 && !batch.snapshot && JSON.stringify(stateOf(this.world)) === this.stateText
      // a turn that wrote nothing is in the log once the turns before it are: it joins the latest append
      const joins = !nothing || batch.waiters.length > 0 ? batch : this.inFlight
      if (joins === undefined) {
        this.durable = number
        this.wakeReaders()
        return resolve()
      }
      joins.lastTurn = number
      joins.waiters.push({ resolve, reject })
    })
    // the turn passes on only once its writes are queued, so the next one's are not among them
    this.turnHeld = false
    if (this.lost === undefined) this.startAppend()
    const next = this.turnQueue.shift()
    if (next !== undefined && this.lost === undefined) next.grant(this.grant())
    await done
  }

  /** Moves the steps captured since the last take into the batch (a data swapped for another database: the batch goes whole). */
  private takeSteps (batch: Batch): void {
    if (this.world.sql !== this.capturing) {
      this.capturing.takeCaptured()
      this.capturing = this.world.sql
      this.capturing.capture()
      batch.snapshot = true
    } else {
      for (const step of this.capturing.takeCaptured()) batch.data.push(step)
    }
    for (const step of this.records.takeCaptured()) batch.records.push(step)
  }

  /** Sends the batch waiting, if any and nothing is on its way (a snapshot waits for a turn held: its pages would hold that turn's writes). */
  private startAppend (): void {
    const batch = this.pending
    if (this.inFlight !== undefined || batch.waiters.length === 0) return
    const large = batch.data.length > this.maxCommitSteps || batch.data.some((step) => 'unreplayable' in step) || batch.records.some((step) => 'unreplayable' in step)
    const due = this.commitsSinceSnapshot >= this.snapshotEvery && this.bytesSinceSnapshot >= SNAPSHOT_LOG_SHARE * this.world.bytes()
    const snapshot = batch.snapshot || large || (due && !this.turnHeld)
    if (snapshot && this.turnHeld) return
    this.pending = emptyBatch(batch.lastTurn)
    this.inFlight = batch
    const state = JSON.stringify(stateOf(this.world))
    const entry: NewEntry = snapshot
      ? {
          kind: 'snapshot',
          // a created world reset to its start: its start is in the catalogue already
          body: this.options.startInCatalogue && this.world.atStart ? null : pagesOf(this.world.db),
          records: pagesOf(this.recordsDb),
          state: Buffer.from(state)
        }
      : {
          kind: 'commit',
          body: batch.data.length === 0 ? null : encodeSteps(batch.data),
          records: batch.records.length === 0 ? null : encodeSteps(batch.records),
          state: state === this.stateText ? null : Buffer.from(state)
        }
    const seq = this.seq + 1
    const timer = setTimeout(() => this.lose(new Error(`no answer from PostgreSQL within ${this.options.answerWithinMs} ms`)), this.options.answerWithinMs)
    this.options.log.append(this.world.id, this.options.epoch, seq, entry).then(() => {
      clearTimeout(timer)
      if (this.lost !== undefined) return
      this.seq = seq
      this.stateText = state
      this.commitsSinceSnapshot = snapshot ? 0 : this.commitsSinceSnapshot + 1
      this.bytesSinceSnapshot = snapshot ? 0 : this.bytesSinceSnapshot + entryBytes(entry)
      this.inFlight = undefined
      this.durable = Math.max(this.durable, batch.lastTurn)
      for (const waiter of batch.waiters) waiter.resolve()
      this.wakeReaders()
      this.startAppend()
    }, (e: unknown) => {
      clearTimeout(timer)
      // refused by PostgreSQL itself (an error of the statement, the fence), never sent, or learnt absent: nothing was applied
      const refused = e instanceof Fenced || e instanceof AppendNotSent || (e instanceof Error && e.name === 'NotApplied') ||
        (e instanceof pg.DatabaseError && e.severity === 'ERROR')
      this.lose(e instanceof Error ? e : new Error(String(e)), refused)
    })
  }

  private wakeReaders (): void {
    if (this.readers.length === 0) return
    const ready = this.readers.filter((r) => r.turn <= this.durable)
    this.readers = this.readers.filter((r) => r.turn > this.durable)
    for (const { waiter } of ready) waiter.resolve()
  }
}

/** What an entry adds to the log. */
function entryBytes (entry: NewEntry): number {
  return (entry.body?.byteLength ?? 0) + (entry.records?.byteLength ?? 0) + (entry.state?.byteLength ?? 0)
}
