import pg from 'pg'
import { StartupError } from '../../startup-error.js'

/**
 * Whether PostgreSQL answers, asked apart from the pool (whose connections may all be taken by
 * requests waiting on a stalled server): at start, until it answers (waitUntilReachable); for
 * /_sandbox/health, briefly and cached (StorageProbe).
 */

/** Where the URL points, without its user or password: what a log line may say. */
export function whereOf (url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port === '' ? '5432' : parsed.port}${parsed.pathname}`
  } catch {
    return 'SANDBOX_DATABASE_URL'
  }
}

/** One question on a connection of its own: `SELECT 1` within `timeoutMs`, connecting included. */
async function ask (url: string, timeoutMs: number, name: string): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    // eslint-disable-next-line camelcase -- pg's own option names
    query_timeout: timeoutMs,
    // eslint-disable-next-line camelcase -- pg's own option names
    statement_timeout: timeoutMs,
    // eslint-disable-next-line camelcase -- pg's own option names
    application_name: name
  })
  client.on('error', () => undefined)
  try {
    await client.connect()
    await client.query('SELECT 1')
  } finally {
    void client.end().catch(() => undefined)
  }
}

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

export interface StartWait {
  /** How long to keep trying, in all. */
  totalMs: number
  /** Each attempt's bound. */
  attemptMs: number
  /** One line per failed attempt. */
  notice: (line: string) => void
}

/**
 * Waits until PostgreSQL answers, trying again after 0.5 s, 1 s, 2 s... (at most 5 s) with a line
 * for each failure; past `totalMs`, a StartupError of one line.
 */
export async function waitUntilReachable (url: string, { totalMs, attemptMs, notice }: StartWait): Promise<void> {
  const where = whereOf(url)
  const deadline = Date.now() + totalMs
  let pause = 500
  for (let attempt = 1; ; attempt++) {
    try {
      await ask(url, attemptMs, 'agency-sandbox start')
      if (attempt > 1) notice(`PostgreSQL at ${where} answers (attempt ${attempt})`)
      return
    } catch (e) {
      const reason = (e as Error).message
      const left = deadline - Date.now()
      if (left <= 0) {
        throw new StartupError(`PostgreSQL at ${where} did not answer within ${Math.round(totalMs / 1000)} s ` +
          `(${reason}); start it, or check SANDBOX_DATABASE_URL (SANDBOX_PG_START_WAIT_SECONDS sets the wait)`)
      }
      const wait = Math.min(pause, left)
      notice(`PostgreSQL at ${where} does not answer (${reason}); attempt ${attempt}, trying again in ${(wait / 1000).toFixed(1)} s`)
      await sleep(wait)
      pause = Math.min(pause * 2, 5000)
    }
  }
}

/** What /_sandbox/health says of PostgreSQL: nothing when it answered in time, else the problem. */
export type ProbeResult = { ok: true, ms: number } | { ok: false, problem: string }

/** A probe answers within this; a slower answer is a problem of its own. */
export const PROBE_TIMEOUT_MS = 800
export const PROBE_SLOW_MS = 500
/** A probe's result is reused this long: a flood of health calls asks PostgreSQL twice a second at most. */
export const PROBE_CACHE_MS = 500

/**
 * PostgreSQL as health sees it: one `SELECT 1` on a new connection, answered within
 * PROBE_TIMEOUT_MS (else a problem, answered when the time is up, the question left to end on its
 * own), its result reused for PROBE_CACHE_MS; calls meanwhile share the question in flight.
 */
export class StorageProbe {
  private last: { atMs: number, result: ProbeResult } | undefined
  private asking: Promise<ProbeResult> | undefined

  constructor (private readonly url: string, private readonly now: () => number = Date.now) {}

  async check (): Promise<ProbeResult> {
    const last = this.last
    if (last !== undefined && this.now() - last.atMs < PROBE_CACHE_MS) return last.result
    this.asking ??= this.probe().then((result) => {
      this.last = { atMs: this.now(), result }
      this.asking = undefined
      return result
    })
    return await this.asking
  }

  private async probe (): Promise<ProbeResult> {
    const started = this.now()
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<ProbeResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, problem: `PostgreSQL did not answer within ${PROBE_TIMEOUT_MS} ms (slow or stalled)` }), PROBE_TIMEOUT_MS)
    })
    const answered = ask(this.url, PROBE_TIMEOUT_MS + 200, 'agency-sandbox health').then((): ProbeResult => {
      const ms = this.now() - started
      return ms > PROBE_SLOW_MS ? { ok: false, problem: `PostgreSQL is slow: SELECT 1 took ${ms} ms` } : { ok: true, ms }
    }, (e: Error): ProbeResult => ({ ok: false, problem: `PostgreSQL cannot be reached: ${e.message}` }))
    try {
      return await Promise.race([answered, late])
    } finally {
      clearTimeout(timer)
    }
  }
}
