import { performance } from 'node:perf_hooks'
import { raw, send, sendGenerated, text, type Answer, type Call, type RawAnswer, type StreamCall } from './http.js'
import type { Target } from './target.js'
import { holdsSecret, type Rng } from './world.js'

/**
 * The bookkeeping of an attack run: each phase counts its requests, 5xx answers, unanswered
 * requests, crashes, leaks and lost writes, keeps its own figures (named values for the report)
 * and checks (an expectation tried many times: passed, failed, the first failing examples), and
 * the longest health-probe latency and the peak RSS seen while it ran.
 */

export interface Check {
  passed: number
  failed: number
  examples: string[]
}

export type PhaseStatus = 'ran' | 'cut short' | 'skipped' | 'full run only'

const EXAMPLES = 4

export class Phase {
  tried = 0
  fiveXX = 0
  unanswered = 0
  leaks = 0
  lostWrites = 0
  crashes = 0
  probes = 0
  probeFailures = 0
  longestProbeMs = 0
  /** Longest event-loop delay the server measured in itself (loop-monitor.ts), ms. */
  longestLoopDelayMs = 0
  peakRssKb = 0
  /** VmRSS once the phase's requests were all answered. */
  endRssKb = 0
  seconds = 0
  /** See PhaseSpec.ownServers. */
  ownServers = false
  status: PhaseStatus = 'ran'
  /** What went wrong, for the report (5xx, leaks, lost writes, crashes). */
  readonly incidents: string[] = []
  readonly figures: [string, string][] = []
  readonly checks = new Map<string, Check>()
  private readonly endsAt: number

  constructor (readonly name: string, readonly title: string, budgetMs: number) {
    this.endsAt = performance.now() + budgetMs
  }

  /** Milliseconds left of the phase's time budget. */
  timeLeft (): number {
    return this.endsAt - performance.now()
  }

  /** True once the budget is spent; the phase is then reported as cut short. */
  get expired (): boolean {
    if (this.timeLeft() > 0) return false
    this.status = 'cut short'
    return true
  }

  check (name: string, ok: boolean, detail = ''): boolean {
    const c = this.checks.get(name) ?? { passed: 0, failed: 0, examples: [] }
    if (ok) c.passed++
    else {
      c.failed++
      if (c.examples.length < EXAMPLES && detail !== '') c.examples.push(detail)
    }
    this.checks.set(name, c)
    return ok
  }

  figure (name: string, value: string | number): void {
    const shown = typeof value === 'number' ? (Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(1)) : value
    const i = this.figures.findIndex(([n]) => n === name)
    if (i === -1) this.figures.push([name, shown])
    else this.figures[i] = [name, shown]
  }

  incident (what: string): void {
    if (this.incidents.length < 12) this.incidents.push(what)
  }

  leak (detail: string): void {
    this.leaks++
    this.incident(`leak: ${detail}`)
  }

  lost (detail: string): void {
    this.lostWrites++
    this.incident(`lost write: ${detail}`)
  }

  get failedChecks (): number {
    let n = 0
    for (const c of this.checks.values()) if (c.failed > 0) n++
    return n + (this.status === 'ran' || this.status === 'full run only' ? 0 : 1)
  }
}

const DEFAULT_TIMEOUT_MS = 30_000
/** Time granted to a request beyond its phase's budget, so a slow answer is still seen. */
const GRACE_MS = 2_000

export interface Options {
  short: boolean
  seed: number
  out: string
  only: string[] | undefined
}

/** One run: the target, the options, the seeded generator, the phase under way. */
export class Run {
  phase: Phase = new Phase('start', 'Start-up', 60_000)
  readonly phases: Phase[] = []
  /** Median latency of a wrong secret minus that of an unknown user (the timing phase), ms. */
  timingDifferenceMs: number | undefined
  private readonly endsAt: number

  constructor (readonly target: Target, readonly options: Options, readonly rng: Rng, totalMs: number) {
    this.endsAt = performance.now() + totalMs
    target.onCrash = (crash) => {
      this.phase.crashes++
      this.phase.incident(`crash: the server exited (${crash.exit}); last output:\n${crash.output}`)
    }
    target.onProbe = (s) => {
      this.phase.probes++
      if (!s.ok) this.phase.probeFailures++
      else if (s.ms > this.phase.longestProbeMs) this.phase.longestProbeMs = s.ms
    }
  }

  /** Milliseconds left of the whole run. */
  timeLeft (): number {
    return this.endsAt - performance.now()
  }

  private timeout (ms: number | undefined): number {
    return Math.max(1000, Math.min(ms ?? DEFAULT_TIMEOUT_MS, this.phase.timeLeft() + GRACE_MS, this.timeLeft() + GRACE_MS))
  }

  private count (status: number, what: string, body: string | undefined, error?: string): void {
    const p = this.phase
    p.tried++
    if (status >= 500) {
      p.fiveXX++
      p.incident(`${status} for ${what}: ${(body ?? '').slice(0, 160)}`)
    } else if (status === 0) p.unanswered++
    if (status === 0 && error !== undefined && p.unanswered <= 3) p.incident(`no answer to ${what}: ${error}`)
    // No request of the attack asks for the state document itself: a secret in any answer is a leak.
    if (body !== undefined && holdsSecret(body)) p.leak(`client secret in the answer to ${what}`)
  }

  async request (call: Omit<Call, 'timeoutMs'> & { timeoutMs?: number }): Promise<Answer> {
    const a = await send(this.target.origin, { ...call, timeoutMs: this.timeout(call.timeoutMs) })
    this.count(a.status, `${call.method ?? 'GET'} ${call.path.slice(0, 120)}`, text(a), a.error)
    return a
  }

  async raw (request: string | Buffer, timeoutMs?: number): Promise<RawAnswer> {
    const a = await raw(this.target.origin, request, this.timeout(timeoutMs))
    const line = (typeof request === 'string' ? request : request.toString('latin1')).split('\r\n')[0].slice(0, 120)
    this.count(a.status, `raw ${line}`, a.head + '\r\n\r\n' + a.body.toString('utf8'), a.error)
    return a
  }

  async stream (call: Omit<StreamCall, 'timeoutMs'> & { timeoutMs?: number }): Promise<Answer & { written: number }> {
    const a = await sendGenerated(this.target.origin, { ...call, timeoutMs: this.timeout(call.timeoutMs) })
    this.count(a.status, `${call.method} ${call.path} (${call.chunked ? 'chunked' : 'sized'} body of ${call.head.length + call.fillBytes + call.tail.length} bytes)`, text(a), a.error)
    return a
  }

  /** Runs `count` tasks, at most `parallel` at a time, until the phase's budget is spent. */
  async pool (count: number, parallel: number, task: (i: number) => Promise<void>): Promise<number> {
    let next = 0
    let done = 0
    const worker = async () => {
      while (next < count && !this.phase.expired) {
        const i = next++
        await task(i)
        done++
      }
    }
    await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker))
    return done
  }

  /**
   * Server still answering health (after a hostile request). When it does not, waits for the
   * exit to be seen and the restart to finish, so the phase goes on against a live server.
   */
  async healthy (): Promise<boolean> {
    await this.target.ensureUp()
    const a = await send(this.target.origin, { path: '/_sandbox/health', timeoutMs: 10_000 })
    if (a.status === 200) return true
    // A dying process can take a while to exit (and be restarted): wait for a live server, 30 s at most.
    const until = performance.now() + 30_000
    while (performance.now() < until) {
      await sleep(250)
      await this.target.ensureUp()
      if ((await send(this.target.origin, { path: '/_sandbox/health', timeoutMs: 5_000 })).status === 200) break
    }
    return false
  }

  /** Waits (30 s at most) until the server answers health: what it still owes a phase is that phase's. */
  async settle (): Promise<void> {
    await this.target.ensureUp()
    await send(this.target.origin, { path: '/_sandbox/health', timeoutMs: Math.max(2_000, Math.min(30_000, this.timeLeft())) })
    await this.target.ensureUp()
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

/** Median of a list of numbers (0 when empty). */
export function median (values: number[]): number {
  if (values.length === 0) return 0
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

export const mb = (kb: number) => kb / 1024

/** Milliseconds as whole microseconds, never "-0". */
export const microseconds = (ms: number) => String(Math.round(ms * 1000) + 0)

/** A named phase of the attack and its time budgets. */
export interface PhaseSpec {
  name: string
  title: string
  /**
   * The phase attacks server processes of its own: the attacked one sits idle, so its probe and
   * loop figures say only how busy the machine is, and the summary leaves them out.
   */
  ownServers?: boolean
  /** Time budget, milliseconds: the short run's (0: the phase is left out of it) and the full run's. */
  budgetMs: { short: number; full: number }
  run(run: Run): Promise<void>
}

/** `short` in the short run, `full` in the full run. */
export const scale = (run: Run, short: number, full: number) => (run.options.short ? short : full)
