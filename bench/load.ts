import { randomUUID } from 'node:crypto'
import { Agent, request as httpRequest } from 'node:http'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { summarize } from './stats.js'
import { UUID_PLACEHOLDER, type Budget, type LoadJob, type LoadMessage, type LoadResult, type RequestVariant } from './protocol.js'

/**
 * The fixed-rate load generator: a child process of load-run.ts (forked with IPC, advanced
 * serialization). It receives one LoadJob with a rate, warms the server up, tells the parent it
 * is measuring, offers the measured load at even intervals whatever the answers take (an open
 * loop, which wrk cannot do) and answers with a LoadResult. Closed loops run on wrk (wrk.ts).
 */

/** Latencies of the expected answers, in a growable typed array. */
class Latencies {
  private values = new Float64Array(1 << 16)
  private count = 0

  add (ms: number): void {
    if (this.count === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2)
      bigger.set(this.values)
      this.values = bigger
    }
    this.values[this.count++] = ms
  }

  get size (): number {
    return this.count
  }

  toArray (): Float64Array {
    return this.values.slice(0, this.count)
  }
}

/** What came back: statuses, latencies, failures. */
class Tally {
  readonly latencies = new Latencies()
  readonly statuses = new Map<number, number>()
  errors = 0

  constructor (private readonly expect: Set<number>) {}

  count (status: number, ms: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
    if (this.expect.has(status)) this.latencies.add(ms)
    else this.errors++
  }

  result (tool: string, seconds: number): LoadResult {
    return {
      tool,
      requests: this.latencies.size,
      errors: this.errors,
      seconds,
      statuses: Object.fromEntries([...this.statuses].map(([status, n]) => [String(status), n])),
      latency: summarize(this.latencies.toArray())
    }
  }
}

const fill = (body: string): string => (body.includes(UUID_PLACEHOLDER) ? body.split(UUID_PLACEHOLDER).join(randomUUID()) : body)

function headersFor (job: LoadJob, variant: RequestVariant): Record<string, string> {
  return variant.body === undefined
    ? { authorization: job.authorization }
    : { authorization: job.authorization, 'content-type': 'application/json' }
}

/** One request over a keep-alive agent; status 0 on a socket error. */
function send (job: LoadJob, agent: Agent, variant: RequestVariant): Promise<{ status: number; ms: number }> {
  const started = performance.now()
  return new Promise((resolve) => {
    const done = (status: number) => resolve({ status, ms: performance.now() - started })
    const req = httpRequest(job.origin + variant.path, { method: variant.method, headers: headersFor(job, variant), agent }, (res) => {
      res.resume()
      res.on('end', () => done(res.statusCode ?? 0))
      res.on('error', () => done(0))
    })
    req.on('error', () => done(0))
    req.end(variant.body === undefined ? undefined : fill(variant.body))
  })
}

/** Offers `rate` requests per second at even intervals, whatever the answers take, and counts them by second. */
async function fixedRate (job: LoadJob, rate: number, budget: Budget): Promise<LoadResult> {
  const total = 'amount' in budget ? budget.amount : Math.round(budget.seconds * rate)
  const interval = 1000 / rate
  const agent = new Agent({ keepAlive: true, maxSockets: job.connections })
  const tally = new Tally(new Set(job.expect))
  const seconds = new Map<number, Map<number, number>>()
  const pending: Promise<void>[] = []
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    const wait = started + i * interval - performance.now()
    if (wait > 0) await sleep(wait)
    const second = Math.floor((performance.now() - started) / 1000)
    pending.push(send(job, agent, job.variants[i % job.variants.length]).then(({ status, ms }) => {
      tally.count(status, ms)
      const bucket = seconds.get(second) ?? new Map<number, number>()
      bucket.set(status, (bucket.get(status) ?? 0) + 1)
      seconds.set(second, bucket)
    }))
  }
  await Promise.all(pending)
  agent.destroy()
  // the load lasted as long as it was offered, however fast the last answer came
  const elapsed = Math.max((performance.now() - started) / 1000, total / rate)
  const perSecond = [...seconds.entries()].sort(([a], [b]) => a - b).map(([second, byStatus]) => ({
    second,
    byStatus: Object.fromEntries([...byStatus].map(([status, n]) => [String(status), n]))
  }))
  return { ...tally.result('paced', elapsed), perSecond }
}

async function run (job: LoadJob, tell: (m: LoadMessage) => void): Promise<LoadResult> {
  if (job.rate === undefined) throw new Error('load.ts offers a fixed rate; a closed loop runs on wrk (wrk.ts)')
  if (job.warmup !== null) await fixedRate(job, job.rate, job.warmup)
  tell({ type: 'measuring' })
  return fixedRate(job, job.rate, job.measure)
}

const tell = (message: LoadMessage): Promise<void> =>
  new Promise((resolve) => {
    if (process.send === undefined) throw new Error('load.ts runs as a child process of run.ts (fork with IPC)')
    process.send(message, () => resolve())
  })

process.once('message', (job: LoadJob) => {
  run(job, (m) => { void tell(m) }).then(
    async (result) => {
      await tell({ type: 'result', result })
      process.exit(0)
    },
    async (error: unknown) => {
      await tell({ type: 'error', message: error instanceof Error ? error.stack ?? error.message : String(error) })
      process.exit(1)
    }
  )
})
