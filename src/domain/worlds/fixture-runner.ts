import { statSync } from 'node:fs'
import { Readable } from 'node:stream'
import { insufficientStorage, shuttingDown, tooManyRequests, workerStopped } from '../../errors.js'
import type { ReadMirror } from '../examiner/mirror-body.js'
import type { Fixture } from '../../fixture/schema.js'
import { loadFixtureFile } from '../../fixture/validate.js'
import { WorkerProcess } from '../../worker-process.js'
import type { PreparedAgency } from '../world.js'
import type { StateSource } from './state-document.js'
import { FairPlaces } from '../fair-places.js'
import { errorOf, runFixtureJob, type FixtureJob, type FixtureOutcome, type ResetBody, type WorldBody } from './fixture-job.js'
import { DEFAULT_WORLD_ID } from './world-ids.js'

/** Jobs on the worker at once at most (bodies being read, state documents being written), one per world. */
export const MAX_FIXTURE_JOBS = 4
/**
 * Jobs waiting for a place at most, all worlds together and one world's (with its place, as many as
 * there are places): one more is a 429.
 */
export const MAX_WAITING_JOBS = 16
export const MAX_WAITING_JOBS_PER_WORLD = MAX_FIXTURE_JOBS - 1
/** The fixture worker's heap bound: a document that needs more is a 507, not the process's memory. */
export const FIXTURE_HEAP_MB = 256
/** The worker ends when it has been idle this long, giving its memory back (the next body starts another). */
const IDLE_MS = 1_000
/**
 * A body of this size or more (and a state document) ends the worker as soon as nothing else is
 * waiting: the memory it grew to (tens of MB for an 8 MiB fixture) goes back at once instead of
 * piling up under the next large body; a new worker starts in about 150 ms, off the loop.
 */
const RETIRE_AFTER_BYTES = 1024 * 1024
/** A start-up fixture file larger than a body may be (8 MiB) is read where it is asked for: the worker's heap is bounded for bodies. */
const WORKER_FILE_BYTES = 8 * 1024 * 1024
/** A reader of a state document that takes no bytes for this long gives it up: its job's place and its read transaction end. */
export const STATE_STALL_MS = 10_000

/** What a job that ran out of the worker's heap answers. */
const outOfMemory = (kind: FixtureJob['kind']) => insufficientStorage(kind === 'state'
  ? `Writing the state document needs more than the ${FIXTURE_HEAP_MB} MB the sandbox gives it; read the world's data in parts (the vendor API's listings) instead`
  : `Reading the document needs more than the ${FIXTURE_HEAP_MB} MB the sandbox gives it; send a smaller fixture, or load a large one at start (SANDBOX_FIXTURES)`)

/** A Buffer crosses between processes as a plain Uint8Array. */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

export interface FixtureRunnerOptions {
  /** The worker's module; absent: bodies are read on this thread (tests of the reading itself). */
  workerFile?: URL
  migrationsDir: string
  /** STATE_STALL_MS, unless given (tests). */
  stateStallMs?: number
  /** Told the bytes of each piece of a state document received (to free them soon after they are sent). */
  countBytes?: (bytes: number) => void
}

interface Waiting {
  kind: FixtureJob['kind']
  /** Gives the job's place back (fair-places.ts). */
  release: () => void
  /** The job leaves the worker's heap grown: see RETIRE_AFTER_BYTES. */
  large: boolean
  resolve: (outcome: FixtureOutcome) => void
  reject: (error: Error) => void
  /** A state document's next piece, and its end (fixture-worker.ts). */
  piece?: (piece: Buffer) => void
  end?: () => void
}

/**
 * Reads large fixture bodies (fixture-job.ts) in a worker process (src/worker-process.ts) started
 * on first use: the event loop that answers requests only hands over the bytes and takes back rows
 * or a snapshot, whatever the document's shape; the 70 to 80 MB reading an 8 MiB document takes
 * are the worker's. Closing the sandbox stops a body in progress at once.
 */
export class FixtureRunner {
  private worker: WorkerProcess | undefined
  private nextId = 1
  private readonly waiting = new Map<number, Waiting>()
  private idle: NodeJS.Timeout | undefined
  /** A large job ran since the worker started: it ends when nothing waits (RETIRE_AFTER_BYTES). */
  private retire = false
  private closed = false
  /** The worker's places, one per world at a time, served in turn among the worlds waiting. */
  private readonly places = new FairPlaces(MAX_FIXTURE_JOBS, { maxWaiting: MAX_WAITING_JOBS, maxWaitingPerKey: MAX_WAITING_JOBS_PER_WORLD })

  constructor (private readonly options: FixtureRunnerOptions) {}

  /**
   * A reset body's parts to keep and its fixture prepared, or with `snapshot` (a world in memory)
   * made into a database's snapshot; an ApiError for a body refused.
   */
  async reset (bytes: Uint8Array, maxValues: number, snapshot: boolean, worldId: string): Promise<ResetBody> {
    const reset = (await this.run({ kind: 'reset', bytes, maxValues, snapshot, settings: this.settings() }, worldId)).reset!
    return reset.snapshot === undefined ? reset : { ...reset, snapshot: asBuffer(reset.snapshot) }
  }

  /** A world-creation body's fields and its fixture as a snapshot (`creator`: whose place it takes); an ApiError for a body refused. */
  async world (bytes: Uint8Array, maxValues: number, creator: string): Promise<WorldBody> {
    const world = (await this.run({ kind: 'world', bytes, maxValues, settings: this.settings() }, creator)).world!
    return world.snapshot === undefined ? world : { ...world, snapshot: asBuffer(world.snapshot) }
  }

  /** An agency in fixture form, checked and made into rows, with what it held in an earlier format; an ApiError for a body refused. */
  async agency (bytes: Uint8Array, maxValues: number, worldId: string): Promise<{ agency: PreparedAgency, warnings: string[] }> {
    return (await this.run({ kind: 'agency', bytes, maxValues, settings: this.settings() }, worldId)).agency!
  }

  /** An examiner mirror's entries, read and kept as text; an ApiError for a body refused. */
  async mirror (bytes: Uint8Array, maxValues: number, worldId: string): Promise<ReadMirror> {
    return (await this.run({ kind: 'mirror', bytes, maxValues, settings: this.settings() }, worldId)).mirror!
  }

  /**
   * A world's state document's JSON (state-document.ts), written from its database file or a
   * snapshot of it on the worker a piece at a time as the answer is read: the first piece is
   * written before this resolves (a document that cannot be written is an error, not an answer
   * cut short), each next one when the reader has taken the last; the world's one place on the
   * worker until the last is sent, or until its reader takes nothing for STATE_STALL_MS (the
   * answer is cut: a reader that never reads holds no place longer). Documents of different
   * worlds are written side by side, one per place.
   */
  async state (source: StateSource, worldId: string): Promise<Readable> {
    const job: FixtureJob = { kind: 'state', ...('file' in source ? { bytes: new Uint8Array(0), file: source.file } : { bytes: source.snapshot }), maxValues: 0, settings: this.settings() }
    if (this.options.workerFile === undefined) return Readable.from((await this.run(job, worldId)).state!.map(asBuffer))
    const release = await this.place(worldId)
    const id = this.nextId++
    const stallMs = this.options.stateStallMs ?? STATE_STALL_MS
    let worker: WorkerProcess | undefined
    return await new Promise<Readable>((resolve, reject) => {
      let stall: NodeJS.Timeout | undefined
      let started = false
      const document = new Readable({
        read: () => {
          clearTimeout(stall)
          if (this.waiting.has(id)) worker?.send({ id, pull: true })
        },
        destroy: (error, callback) => {
          clearTimeout(stall)
          if (this.waiting.has(id)) {
            worker?.send({ id, cancel: true })
            this.finish(id)
          }
          callback(error)
        }
      })
      this.waiting.set(id, {
        kind: 'state',
        release,
        large: true,
        resolve: () => {},
        reject: (error) => {
          if (started) document.destroy(error)
          else reject(error)
        },
        piece: (piece) => {
          this.options.countBytes?.(piece.byteLength)
          stall = setTimeout(() => document.destroy(new Error(`the state document's reader took nothing for ${stallMs} ms`)), stallMs)
          stall.unref()
          document.push(piece)
          if (!started) resolve(document)
          started = true
        },
        end: () => {
          clearTimeout(stall)
          document.push(null)
        }
      })
      worker = this.startWorker()
      this.post(worker, id, job)
    })
  }

  /**
   * The start-up fixture file, read and validated on the worker (a reset to it over a database
   * seeded before this start read it on the event loop: 65 to 130 ms for the demo); warnings go
   * to `onWarning`, one call per line. A file that cannot be read there, is invalid, or is larger
   * than a body may be is read here, so its errors are those of a read at start.
   */
  async fixtureFile (file: string, onWarning: (line: string) => void = () => {}): Promise<Fixture> {
    let size = Number.POSITIVE_INFINITY
    try {
      size = statSync(file).size
    } catch {}
    if (this.options.workerFile !== undefined && size <= WORKER_FILE_BYTES) {
      const read = await this.run({ kind: 'file', bytes: new Uint8Array(0), file, maxValues: 0, settings: this.settings() }, DEFAULT_WORLD_ID, size >= RETIRE_AFTER_BYTES).catch(() => undefined)
      if (read?.file !== undefined) {
        for (const line of read.file.warnings) onWarning(line)
        return read.file.fixture
      }
    }
    return loadFixtureFile(file, onWarning)
  }

  /** Folds a database file's write-ahead log into it from the worker's own connection (see checkpointFile). */
  async checkpoint (file: string): Promise<void> {
    await this.run({ kind: 'checkpoint', bytes: new Uint8Array(0), file, maxValues: 0, settings: this.settings() }, DEFAULT_WORLD_ID)
  }

  /** True while the worker process is up (it ends when idle, and after a large job). */
  get running (): boolean {
    return this.worker !== undefined
  }

  /** Jobs on the worker now. */
  get reading (): number {
    return this.waiting.size
  }

  /** Jobs waiting for a place. */
  get queued (): number {
    return this.places.waiting
  }

  /** Stops the worker: a body being read, or waiting, fails with a 503. */
  async close (): Promise<void> {
    this.closed = true
    this.places.failWaiting(shuttingDown())
    await this.stopWorker()
  }

  private settings () {
    return { migrationsDir: this.options.migrationsDir, nowIso: new Date().toISOString() }
  }

  /** `key`: the world the job is for (or whoever creates one), which holds one place on the worker at a time. */
  private async run (job: FixtureJob, key: string, large = false): Promise<Extract<FixtureOutcome, { ok: true }>> {
    if (this.closed) throw shuttingDown()
    const outcome = this.options.workerFile === undefined ? runFixtureJob(job) : await this.inWorker(job, key, large)
    if (!outcome.ok) throw errorOf(outcome.error)
    return outcome
  }

  private async inWorker (job: FixtureJob, key: string, large: boolean): Promise<FixtureOutcome> {
    const release = await this.place(key)
    const worker = this.startWorker()
    const id = this.nextId++
    return await new Promise<FixtureOutcome>((resolve, reject) => {
      this.waiting.set(id, { kind: job.kind, release, large: large || job.bytes.byteLength >= RETIRE_AFTER_BYTES, resolve, reject })
      this.post(worker, id, job)
    })
  }

  /** The world's place on the worker, once its turn comes; a 429 when too many wait already. */
  private async place (key: string): Promise<() => void> {
    if (this.closed) throw shuttingDown()
    const place = this.places.take(key)
    if (place === undefined) {
      throw tooManyRequests(`${this.places.waiting} fixture documents and state documents are waiting for the sandbox's worker, some of them this world's; send this one again in a moment`, 1)
    }
    const release = await place
    if (!this.closed) return release
    release()
    throw shuttingDown()
  }

  private post (worker: WorkerProcess, id: number, job: FixtureJob): void {
    worker.busy(true)
    worker.send({ id, job })
  }

  /** A job is done: the worker ends when nothing else waits and a large job ran, else when idle. */
  private finish (id: number): void {
    const job = this.waiting.get(id)
    if (job === undefined) return
    this.waiting.delete(id)
    job.release()
    if (job.large) this.retire = true
    if (this.waiting.size > 0) return
    this.worker?.busy(false)
    if (this.retire) void this.stopWorker()
    else this.whenIdle()
  }

  private startWorker (): WorkerProcess {
    if (this.idle !== undefined) clearTimeout(this.idle)
    this.idle = undefined
    if (this.worker !== undefined) return this.worker
    const worker: WorkerProcess = new WorkerProcess(this.options.workerFile!, {
      heapMb: FIXTURE_HEAP_MB,
      onMessage: (received) => {
        const message = received as { id: number, outcome?: FixtureOutcome, failure?: string, piece?: Uint8Array, end?: true }
        const job = this.waiting.get(message.id)
        if (job === undefined) return
        if (message.piece !== undefined) return job.piece?.(asBuffer(message.piece))
        this.finish(message.id)
        if (message.end === true) job.end?.()
        else if (message.outcome !== undefined) job.resolve(message.outcome)
        else job.reject(new Error(`the fixture could not be read: ${message.failure ?? 'unknown error'}`))
      },
      onEnd: (end) => {
        // a worker stopped on purpose (idle, closing) failed its bodies then; this one stopped by itself
        if (this.worker !== worker) return
        this.worker = undefined
        this.failAll(end.outOfMemory ? outOfMemory : workerStopped('fixture worker', end.how))
      }
    })
    this.worker = worker
    return worker
  }

  private whenIdle (): void {
    this.idle = setTimeout(() => {
      this.idle = undefined
      if (this.waiting.size === 0) void this.stopWorker()
    }, IDLE_MS)
    this.idle.unref()
  }

  private async stopWorker (): Promise<void> {
    if (this.idle !== undefined) clearTimeout(this.idle)
    this.idle = undefined
    const worker = this.worker
    this.worker = undefined
    this.retire = false
    this.failAll(shuttingDown())
    if (worker !== undefined) await worker.stop()
  }

  private failAll (error: Error | typeof outOfMemory): void {
    const jobs = [...this.waiting.values()]
    this.waiting.clear()
    for (const job of jobs) {
      job.release()
      job.reject(typeof error === 'function' ? error(job.kind) : error)
    }
  }
}
