import { Worker } from 'node:worker_threads'
import type { ClientVersion } from '../../db/clients.js'
import { ApiError, insufficientStorage, tooManyRequests } from '../../errors.js'
import type { Report } from '../../schemas/examiner.js'
import { runReportJob, toColumns, type ClientColumns, type ReportJob } from './report-job.js'

/** Reports waiting for the worker at most; one more is a 429 (each takes up to a second or so). */
export const MAX_QUEUED_REPORTS = 16
/** The report worker's heap bound: a report that needs more fails with a 507 instead of taking the process's memory. */
export const REPORT_HEAP_MB = 256

export interface ReportRunnerOptions {
  /** The worker's module; absent: reports are judged on this thread (the examiner's own tests). */
  workerFile?: URL
}

/** A report that could not be computed: a 503 to ask again (never a 500 that looks like the sandbox's own bug). */
const reportFailed = (reason: string) =>
  new ApiError(503, 'report-failed', 'Service Unavailable', `The examiner could not compute the report (${reason}); ask again`, undefined, false, { 'retry-after': '1' })

/** Gives the clients of the agencies a report compares, as columns to send to the worker. */
export type ClientsOf = (agencyId: number) => Promise<readonly ClientVersion[]>

interface Running {
  resolve: (report: Report) => void
  reject: (error: Error) => void
  clientsOf: ClientsOf
}

/**
 * Judges examiner sessions of every world, one report at a time, on a worker thread started on
 * first use: the event loop that answers partner requests never runs a report, a report's memory
 * is bounded by the worker's heap, and closing the process stops one in progress at once.
 */
export class ReportRunner {
  private worker: Worker | undefined
  private readonly queue: Array<() => void> = []
  private busy = false
  private nextId = 1
  private readonly running = new Map<number, Running>()

  constructor (private readonly options: ReportRunnerOptions = {}) {}

  /**
   * The session's report; a 429 when MAX_QUEUED_REPORTS wait already, unless `bounded` is false
   * (the sandbox's own work, such as the reports of the sessions a reset ends, always waits its turn).
   */
  async run (job: ReportJob, clientsOf: ClientsOf, { bounded = true }: { bounded?: boolean } = {}): Promise<Report> {
    if (this.options.workerFile === undefined) {
      return runReportJob(job, async (agencies) => new Map(await Promise.all(agencies.map(async (a): Promise<[number, ClientColumns]> => [a, toColumns(await clientsOf(a))]))))
    }
    if (bounded && this.queue.length >= MAX_QUEUED_REPORTS) {
      throw tooManyRequests(`${MAX_QUEUED_REPORTS} examiner reports are waiting to be computed; ask again in a moment`, 1)
    }
    await this.turn()
    try {
      return await this.inWorker(job, clientsOf)
    } finally {
      // the next report's turn, handed over directly (busy stays true while reports wait)
      const next = this.queue.shift()
      if (next === undefined) this.busy = false
      else next()
    }
  }

  /** Stops the worker (a report in progress fails). */
  async close (): Promise<void> {
    const worker = this.worker
    this.worker = undefined
    this.failAll(new Error('the sandbox is shutting down'))
    if (worker !== undefined) await worker.terminate()
  }

  /** Waits until no other report is computed. */
  private async turn (): Promise<void> {
    if (!this.busy) {
      this.busy = true
      return
    }
    await new Promise<void>((resolve) => this.queue.push(resolve))
  }

  private inWorker (job: ReportJob, clientsOf: ClientsOf): Promise<Report> {
    const worker = this.startWorker()
    const id = this.nextId++
    return new Promise<Report>((resolve, reject) => {
      this.running.set(id, { resolve, reject, clientsOf })
      worker.postMessage({ type: 'job', id, job })
    })
  }

  private startWorker (): Worker {
    if (this.worker !== undefined) return this.worker
    // no loader flags of the parent (a test runner's TypeScript loader): the worker is plain JavaScript
    const worker = new Worker(this.options.workerFile!, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: REPORT_HEAP_MB } })
    worker.unref()
    worker.on('message', (message: { type: string, id: number, agencies?: number[], report?: Report, message?: string }) => {
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
      if (this.worker === worker) this.worker = undefined
      this.failAll(reportFailed('its worker stopped'))
    })
    this.worker = worker
    return worker
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
