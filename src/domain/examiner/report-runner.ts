import type { ClientVersion } from '../../db/clients.js'
import { ApiError, insufficientStorage, shuttingDown, tooManyRequests } from '../../errors.js'
import type { Report } from '../../schemas/examiner.js'
import { WorkerProcess } from '../../worker-process.js'
import { FairPlaces } from '../fair-places.js'
import { runReportJob, toColumns, type ClientColumns, type ReportJob } from './report-job.js'

/** Reports waiting for the worker at most, and one world's; one more is a 429 (each takes up to a second or so). */
export const MAX_QUEUED_REPORTS = 16
export const MAX_QUEUED_REPORTS_PER_WORLD = 4
/** The report worker's heap bound: a report that needs more fails with a 507 instead of taking the process's memory. */
export const REPORT_HEAP_MB = 256
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
export type MirrorBytes = (agencyId: number) => Buffer | undefined | Promise<Buffer | undefined>

/** The report runner as one world's examiner uses it: its reports take their turn as that world's. */
export type WorldReports = Pick<ReportRunner, 'run'>

/** How a report waits its turn: `bounded` false for the sandbox's own work (never refused); `worldId`, whose turn it is. */
export interface RunOptions {
  bounded?: boolean
  worldId?: string
}

interface Running {
  resolve: (report: Report) => void
  reject: (error: Error) => void
  clientsOf: ClientsOf
  mirrorBytes: MirrorBytes
}

/**
 * Judges examiner sessions of every world, one report at a time, in a worker process
 * (src/worker-process.ts) started on first use: the event loop that answers partner requests never
 * runs a report, a report's memory is the worker's and bounded by its heap, and closing the
 * sandbox stops one in progress at once.
 */
export class ReportRunner {
  private worker: WorkerProcess | undefined
  /** One report at a time; the worlds waiting are served in turn, so one world's many reports never starve another's. */
  private readonly places = new FairPlaces(1, { maxWaiting: MAX_QUEUED_REPORTS, maxWaitingPerKey: MAX_QUEUED_REPORTS_PER_WORLD })
  private nextId = 1
  private readonly running = new Map<number, Running>()
  private jobs = 0
  private closed = false
  private idle: NodeJS.Timeout | undefined

  constructor (private readonly options: ReportRunnerOptions = {}) {}

  /** The same runner for one world's examiner: its reports wait their turn as that world's. */
  of (worldId: string): WorldReports {
    return { run: async (job, clientsOf, mirrorBytes, options = {}) => await this.run(job, clientsOf, mirrorBytes, { ...options, worldId }) }
  }

  /**
   * The session's report; a 429 when MAX_QUEUED_REPORTS wait already (or MAX_QUEUED_REPORTS_PER_WORLD
   * of its world), unless `bounded` is false (the sandbox's own work, such as the reports of the
   * sessions a reset ends, always waits its turn).
   */
  async run (job: ReportJob, clientsOf: ClientsOf, mirrorBytes: MirrorBytes, { bounded = true, worldId = '' }: RunOptions = {}): Promise<Report> {
    if (this.closed) throw shuttingDown()
    if (this.options.workerFile === undefined) {
      this.jobs++
      return runReportJob(
        job,
        async (agencies) => new Map(await Promise.all(agencies.map(async (a): Promise<[number, ClientColumns]> => [a, toColumns(await clientsOf(a))]))),
        async (agencyId) => (await mirrorBytes(agencyId))?.toString('utf8') ?? '[]'
      )
    }
    const turn = this.places.take(worldId, bounded)
    if (turn === undefined) {
      throw tooManyRequests(`${this.places.waiting} examiner reports are waiting to be computed, some of them this world's; ask again in a moment`, 1)
    }
    const release = await turn
    try {
      if (this.closed) throw shuttingDown()
      this.jobs++
      return await this.inWorker(job, clientsOf, mirrorBytes)
    } finally {
      // the next report's turn (busy while reports wait)
      release()
      if (this.places.held === 0) this.whenIdle()
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
    this.closed = true
    this.failAll(shuttingDown())
    this.places.failWaiting(shuttingDown())
    if (worker !== undefined) await worker.stop()
  }

  /** Ends the worker once no report has come for IDLE_MS, giving its heap back (the next report starts another). */
  private whenIdle (): void {
    if (this.idle !== undefined) clearTimeout(this.idle)
    this.idle = setTimeout(() => {
      this.idle = undefined
      const worker = this.worker
      if (this.places.held > 0 || worker === undefined) return
      this.worker = undefined
      void worker.stop()
    }, IDLE_MS)
    this.idle.unref()
  }

  private inWorker (job: ReportJob, clientsOf: ClientsOf, mirrorBytes: MirrorBytes): Promise<Report> {
    const worker = this.startWorker()
    const id = this.nextId++
    worker.busy(true)
    return new Promise<Report>((resolve, reject) => {
      this.running.set(id, { resolve, reject, clientsOf, mirrorBytes })
      worker.send({ type: 'job', id, job })
    }).finally(() => worker.busy(false))
  }

  private startWorker (): WorkerProcess {
    if (this.worker !== undefined) return this.worker
    const worker: WorkerProcess = new WorkerProcess(this.options.workerFile!, {
      heapMb: REPORT_HEAP_MB,
      onMessage: (received) => {
        const message = received as { type: string, id: number, agencies?: number[], agencyId?: number, report?: Report, message?: string }
        const job = this.running.get(message.id)
        if (job === undefined) return
        if (message.type === 'mirror') {
          this.sendMirror(worker, message.id, message.agencyId!, job)
        } else if (message.type === 'need') {
          this.sendClients(worker, message.id, message.agencies ?? [], job)
        } else {
          this.running.delete(message.id)
          if (message.type === 'done') job.resolve(message.report!)
          else job.reject(reportFailed(message.message ?? 'unknown error'))
        }
      },
      onEnd: (end) => {
        // a worker stopped on purpose (idle, closing) had no report left; this one stopped by itself
        if (this.worker !== worker) return
        this.worker = undefined
        this.failAll(end.outOfMemory
          ? insufficientStorage(`The report needs more than the ${REPORT_HEAP_MB} MB the examiner may use; end sessions sooner, or post smaller mirrors (upTo)`)
          : reportFailed(`its worker stopped: ${end.how}`))
      }
    })
    this.worker = worker
    return worker
  }

  private sendMirror (worker: WorkerProcess, id: number, agencyId: number, job: Running): void {
    Promise.resolve(job.mirrorBytes(agencyId)).then(
      (bytes) => worker.send({ type: 'mirror', id, bytes }),
      (e: unknown) => this.failJob(id, job, e)
    )
  }

  private sendClients (worker: WorkerProcess, id: number, agencies: number[], job: Running): void {
    Promise.all(agencies.map(async (agencyId): Promise<[number, ClientColumns]> => [agencyId, toColumns(await job.clientsOf(agencyId))])).then(
      (clients) => worker.send({ type: 'clients', id, clients }),
      (e: unknown) => this.failJob(id, job, e)
    )
  }

  private failJob (id: number, job: Running, e: unknown): void {
    this.running.delete(id)
    job.reject(e instanceof Error ? e : new Error(String(e)))
  }

  private failAll (error: Error): void {
    for (const job of this.running.values()) job.reject(error)
    this.running.clear()
  }
}
