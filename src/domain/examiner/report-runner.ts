import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads'
import type { ClientVersion } from '../../db/clients.js'
import { ApiError, insufficientStorage, shuttingDown, tooManyRequests } from '../../errors.js'
import type { Report } from '../../schemas/examiner.js'
import { runReportJob, toColumns, type ClientColumns, type ReportJob } from './report-job.js'

/** Reports waiting for the worker at most; one more is a 429 (each takes up to a second or so). */
export const MAX_QUEUED_REPORTS = 16
/** The report worker's heap bound: a report that needs more fails with a 507 instead of taking the process's memory. */
export const REPORT_HEAP_MB = 256
/**
 * The worker's young generation: small, as what it builds lives until the job ends (V8's default
 * for a large heap lets 30 MB of short-lived objects pile up beside it, in the sandbox's memory).
 */
export const YOUNG_GENERATION_MB = 8
/** The worker ends when no report has come for this long, giving its heap back. */
const IDLE_MS = 2_000

export interface ReportRunnerOptions {
  /** The worker's module; absent: reports are judged on this thread (the examiner's own tests). */
  workerFile?: URL
}

/** A report that could not be computed: a 503 to ask again (never a 500 that looks like the sandbox's own bug). */
const reportFailed = (reason: string) =>
  new ApiError(503, 'report-failed', 'Service Unavailable', `The examiner could not compute the report (${reason}); ask again`, undefined, false, { 'retry-after': '1' })

/** Gives the clients of the agencies a report compares, as columns to send to the worker. */
export type ClientsOf = (agencyId: number) => Promise<readonly ClientVersion[]>

/** Gives one declared mirror's client list as the bytes of its JSON text (undefined: no such mirror). */
export type MirrorBytes = (agencyId: number) => Buffer | undefined

interface Running {
  resolve: (report: Report) => void
  reject: (error: Error) => void
  clientsOf: ClientsOf
  mirrorBytes: MirrorBytes
}

/**
 * Judges examiner sessions of every world, one report at a time, on a worker thread started on
 * first use: the event loop that answers partner requests never runs a report, a report's memory
 * is bounded by the worker's heap, and closing the process stops one in progress at once.
 */
export class ReportRunner {
  private worker: Worker | undefined
  /** Where mirror lists are put for the worker, which waits for them (report-worker.ts). */
  private mirrorPort: MessagePort | undefined
  private readonly queue: Array<() => void> = []
  private busy = false
  private nextId = 1
  private readonly running = new Map<number, Running>()
  private jobs = 0
  private closed = false
  private idle: NodeJS.Timeout | undefined

  constructor (private readonly options: ReportRunnerOptions = {}) {}

  /**
   * The session's report; a 429 when MAX_QUEUED_REPORTS wait already, unless `bounded` is false
   * (the sandbox's own work, such as the reports of the sessions a reset ends, always waits its turn).
   */
  async run (job: ReportJob, clientsOf: ClientsOf, mirrorBytes: MirrorBytes, { bounded = true }: { bounded?: boolean } = {}): Promise<Report> {
    if (this.closed) throw shuttingDown()
    if (this.options.workerFile === undefined) {
      this.jobs++
      return runReportJob(
        job,
        async (agencies) => new Map(await Promise.all(agencies.map(async (a): Promise<[number, ClientColumns]> => [a, toColumns(await clientsOf(a))]))),
        (agencyId) => mirrorBytes(agencyId)?.toString('utf8') ?? '[]'
      )
    }
    if (bounded && this.queue.length >= MAX_QUEUED_REPORTS) {
      throw tooManyRequests(`${MAX_QUEUED_REPORTS} examiner reports are waiting to be computed; ask again in a moment`, 1)
    }
    await this.turn()
    try {
      if (this.closed) throw shuttingDown()
      this.jobs++
      return await this.inWorker(job, clientsOf, mirrorBytes)
    } finally {
      // the next report's turn, handed over directly (busy stays true while reports wait)
      const next = this.queue.shift()
      if (next === undefined) {
        this.busy = false
        this.whenIdle()
      } else {
        next()
      }
    }
  }

  /** Reports computed since the start (on the worker or, without one, on this thread). */
  get computed (): number {
    return this.jobs
  }

  /** Stops the worker: a report in progress, or waiting, fails with a 503. */
  async close (): Promise<void> {
    if (this.idle !== undefined) clearTimeout(this.idle)
    this.idle = undefined
    const worker = this.worker
    this.worker = undefined
    this.mirrorPort?.close()
    this.mirrorPort = undefined
    this.closed = true
    this.failAll(shuttingDown())
    for (const waiting of this.queue.splice(0)) waiting()
    if (worker !== undefined) await worker.terminate()
  }

  /** Ends the worker once no report has come for IDLE_MS, giving its heap back (the next report starts another). */
  private whenIdle (): void {
    if (this.idle !== undefined) clearTimeout(this.idle)
    this.idle = setTimeout(() => {
      this.idle = undefined
      const worker = this.worker
      if (this.busy || worker === undefined) return
      this.worker = undefined
      this.mirrorPort?.close()
      this.mirrorPort = undefined
      void worker.terminate()
    }, IDLE_MS)
    this.idle.unref()
  }

  /** Waits until no other report is computed. */
  private async turn (): Promise<void> {
    if (!this.busy) {
      this.busy = true
      return
    }
    await new Promise<void>((resolve) => this.queue.push(resolve))
  }

  private inWorker (job: ReportJob, clientsOf: ClientsOf, mirrorBytes: MirrorBytes): Promise<Report> {
    const worker = this.startWorker()
    const id = this.nextId++
    return new Promise<Report>((resolve, reject) => {
      this.running.set(id, { resolve, reject, clientsOf, mirrorBytes })
      worker.postMessage({ type: 'job', id, job })
    })
  }

  private startWorker (): Worker {
    if (this.worker !== undefined) return this.worker
    const { port1, port2 } = new MessageChannel()
    const worker = new Worker(this.options.workerFile!, {
      // no loader flags of the parent (a test runner's TypeScript loader): the worker is plain JavaScript
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: REPORT_HEAP_MB, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      workerData: { mirrors: port2 },
      transferList: [port2]
    })
    worker.unref()
    port1.unref()
    this.mirrorPort = port1
    worker.on('message', (message: { type: string, id: number, agencies?: number[], agencyId?: number, signal?: Int32Array, report?: Report, message?: string }) => {
      if (message.type === 'mirror') {
        this.sendMirror(port1, message.signal!, this.running.get(message.id)?.mirrorBytes(message.agencyId!))
        return
      }
      const job = this.running.get(message.id)
      if (job === undefined) return
      if (message.type === 'need') {
        this.sendClients(worker, message.id, message.agencies ?? [], job)
      } else {
        this.running.delete(message.id)
        if (message.type === 'done') job.resolve(message.report!)
        else job.reject(reportFailed(message.message ?? 'unknown error'))
      }
    })
    worker.on('error', (error: Error & { code?: string }) => {
      this.failAll(error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? insufficientStorage(`The report needs more than the ${REPORT_HEAP_MB} MB the examiner may use; end sessions sooner, or post smaller mirrors (upTo)`)
        : reportFailed(error.message))
    })
    worker.on('exit', () => {
      // a worker stopped on purpose (idle, closing) had no report left; this one stopped by itself
      if (this.worker !== worker) return
      this.worker = undefined
      this.failAll(reportFailed('its worker stopped'))
    })
    this.worker = worker
    return worker
  }

  /** Puts a mirror list where the waiting worker reads it, then wakes it (always, so it never waits for nothing). */
  private sendMirror (port: MessagePort, signal: Int32Array, bytes: Buffer | undefined): void {
    try {
      const whole = bytes !== undefined && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
      port.postMessage({ bytes }, whole ? [bytes.buffer as ArrayBuffer] : [])
    } finally {
      Atomics.store(signal, 0, 1)
      Atomics.notify(signal, 0)
    }
  }

  private sendClients (worker: Worker, id: number, agencies: number[], job: Running): void {
    Promise.all(agencies.map(async (agencyId): Promise<[number, ClientColumns]> => [agencyId, toColumns(await job.clientsOf(agencyId))])).then(
      (clients) => {
        const transfer = clients.flatMap(([, c]) => [c.numbers.buffer, c.deleted.buffer, c.modifiedMs.buffer]) as ArrayBuffer[]
        worker.postMessage({ type: 'clients', id, clients }, transfer)
      },
      (e: unknown) => {
        this.running.delete(id)
        job.reject(e instanceof Error ? e : new Error(String(e)))
      }
    )
  }

  private failAll (error: Error): void {
    for (const job of this.running.values()) job.reject(error)
    this.running.clear()
  }
}
