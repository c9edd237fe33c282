import { performance } from 'node:perf_hooks'
import type pg from 'pg'

/**
 * Strict reads without a question per request (hosted mode): a commit is acknowledged only once
 * every other instance that answers from the commits it heard announced has heard it, so such an
 * instance can trust what it heard instead of asking PostgreSQL for the heads on every request.
 *
 * - A reader registers on its listening connection (migrations/postgres/005-readers.sql) before it
 *   reads the heads there, and trusts what it heard only within its lease, which it renews while it
 *   listens. The lease is counted from before the renewal was sent, so it runs out here no later
 *   than in PostgreSQL.
 * - After a commit, a writer sends a ping and reads the readers in one statement. A reader hears
 *   the ping after every commit announced before it (PostgreSQL delivers notifications in commit
 *   order) and answers it. A reader the writer does not see registered has registered after the
 *   writer's commit, so the heads it reads once registered hold the commit.
 * - The writer acknowledges once each reader answered, or once the lease of one that did not has
 *   run out: a reader that stopped (its event loop held, its connection lost) costs the writer at
 *   most a lease, never a stale read. One whose listening connection ended is not waited for.
 */

export const PING_CHANNEL = 'sandbox_ping'
export const PONG_CHANNEL = 'sandbox_pong'

/** How long a registration holds without renewal, and how often a reader renews it. */
export const READER_LEASE_MS = 2000
const RENEW_EVERY_MS = 500
/** A writer waits this much past a silent reader's lease, for the difference between the two clocks' rates. */
const LEASE_MARGIN_MS = 50
/** Answers to pings in one notification at most (PostgreSQL's payloads stay under 8,000 bytes). */
const PONGS_PER_NOTIFICATION = 100

// the ping is the outer side of the join, so it is sent whether or not any reader is registered
const PING_AND_READERS = `
  SELECT r.instance, greatest(0, extract(epoch FROM r.until - now()) * 1000)::float8 AS remaining_ms
  FROM (SELECT pg_notify($1, $2)) AS ping
  LEFT JOIN sandbox_readers r ON r.instance <> $3 AND r.until > now()
    AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.listener_pid)`

const REGISTER = `
  INSERT INTO sandbox_readers (instance, listener_pid, until) VALUES ($1, pg_backend_pid(), now() + $2 * interval '1 millisecond')
  ON CONFLICT (instance) DO UPDATE SET listener_pid = excluded.listener_pid, until = excluded.until`

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

interface Wait {
  /** The readers yet to answer (undefined until the readers are read: answers may come first). */
  pending: Set<string> | undefined
  answered: Set<string>
  done: () => void
}

/** The writer's side: waits until a commit is heard by every registered reader. */
export class CommitDelivery {
  private pings = 0
  private readonly waits = new Map<string, Wait>()

  constructor (private readonly pool: Pick<pg.Pool, 'query'>, private readonly instance: string, private readonly leaseMs = READER_LEASE_MS) {}

  /** Resolves once every commit this instance made before the call is heard by every reader (or its lease ran out). Never throws. */
  async heardEverywhere (): Promise<void> {
    const token = `${this.instance}#${++this.pings}`
    let done = () => {}
    const heard = new Promise<void>((resolve) => { done = resolve })
    const wait: Wait = { pending: undefined, answered: new Set(), done }
    this.waits.set(token, wait)
    let readers: { instance: string, remainingMs: number }[]
    try {
      const { rows } = await this.pool.query<{ instance: string | null, remaining_ms: number }>(PING_AND_READERS, [PING_CHANNEL, token, this.instance])
      readers = rows.flatMap((row) => row.instance === null ? [] : [{ instance: row.instance, remainingMs: row.remaining_ms }])
    } catch {
      // who reads is unknown: outlast every lease (a reader that renews none stops trusting what it heard)
      this.waits.delete(token)
      await sleep(this.leaseMs + LEASE_MARGIN_MS)
      return
    }
    wait.pending = new Set(readers.map((r) => r.instance).filter((reader) => !wait.answered.has(reader)))
    if (wait.pending.size > 0) {
      const timer = setTimeout(done, Math.max(...readers.map((r) => r.remainingMs)) + LEASE_MARGIN_MS)
      await heard
      clearTimeout(timer)
    }
    this.waits.delete(token)
  }

  /** A reader's answers to pings (`<reader>\n<token>\n<token>…`), heard on the listening connection. */
  answered (payload: string): void {
    const [reader, ...tokens] = payload.split('\n')
    for (const token of tokens) {
      const wait = this.waits.get(token)
      if (wait === undefined) continue
      wait.answered.add(reader)
      wait.pending?.delete(reader)
      if (wait.pending?.size === 0) wait.done()
    }
  }
}

/** The reader's side: its registration on the listening connection, and its answers to pings. */
export class ReaderLease {
  private client: pg.ClientBase | undefined
  private renewal: NodeJS.Timeout | undefined
  private unanswered: string[] = []

  constructor (
    private readonly instance: string,
    /** Told the time (performance.now()) until which what this instance heard may be trusted. */
    private readonly trustUntil: (untilMs: number) => void,
    private readonly report: (message: string) => void,
    private readonly leaseMs = READER_LEASE_MS
  ) {}

  /** Registers on the listening connection, once it listens and before the heads are read there, then renews. */
  async register (client: pg.ClientBase): Promise<void> {
    this.dropped()
    this.client = client
    // registrations of instances long gone (a writer skips them already: their connections ended)
    await client.query("DELETE FROM sandbox_readers WHERE until < now() - interval '1 hour'")
    await this.renew(client)
    this.renewal = setInterval(() => {
      this.renew(client).catch((e: Error) => this.report(`PostgreSQL reader lease: ${e.message}`))
    }, RENEW_EVERY_MS)
    this.renewal.unref()
  }

  /** The listening connection is gone: nothing heard is trusted any more. */
  dropped (): void {
    clearInterval(this.renewal)
    this.client = undefined
    this.unanswered = []
    this.trustUntil(0)
  }

  /** A ping heard: answered once the notifications that came with it are handled (they were handled as they came). */
  heard (token: string): void {
    this.unanswered.push(token)
    if (this.unanswered.length === 1) setImmediate(() => this.answer())
  }

  private answer (): void {
    const client = this.client
    const tokens = this.unanswered
    this.unanswered = []
    if (client === undefined) return
    for (let i = 0; i < tokens.length; i += PONGS_PER_NOTIFICATION) {
      const payload = [this.instance, ...tokens.slice(i, i + PONGS_PER_NOTIFICATION)].join('\n')
      client.query('SELECT pg_notify($1, $2)', [PONG_CHANNEL, payload]).catch(() => undefined)
    }
  }

  private async renew (client: pg.ClientBase): Promise<void> {
    const sent = performance.now()
    await client.query(REGISTER, [this.instance, this.leaseMs])
    if (this.client === client) this.trustUntil(sent + this.leaseMs)
  }
}
