/**
 * A sliding-window store for @fastify/rate-limit: a key may have at most `max` accepted
 * requests in any `timeWindow` milliseconds. Only accepted requests are remembered, so a
 * caller offering 100/s gets exactly 25 through each second, and `ttl` is the time until the
 * oldest accepted request leaves the window (the Retry-After). Keeps real time.
 */
type Callback = (err: Error | null, res: { current: number; ttl: number }) => void

export class SlidingWindowStore {
  private readonly hits = new Map<string, number[]>()

  private readonly now: () => number

  /** @fastify/rate-limit constructs stores with its own options; only `now` is read here. */
  constructor(options: { now?: () => number } = {}) {
    this.now = typeof options.now === 'function' ? options.now : Date.now
  }

  private window(key: string, timeWindow: number, at: number): number[] {
    const log = this.hits.get(key) ?? []
    let drop = 0
    while (drop < log.length && log[drop] <= at - timeWindow) drop++
    if (drop > 0) log.splice(0, drop)
    return log
  }

  incr(key: string, cb: Callback, timeWindow: number, max: number): void {
    const at = this.now()
    const log = this.window(key, timeWindow, at)
    if (log.length < max) {
      log.push(at)
      this.hits.set(key, log)
      cb(null, { current: log.length, ttl: log[0] + timeWindow - at })
      return
    }
    this.hits.set(key, log)
    cb(null, { current: max + 1, ttl: Math.max(1, log[0] + timeWindow - at) })
  }

  read(key: string, cb: Callback, timeWindow: number): void {
    const at = this.now()
    const log = this.window(key, timeWindow, at)
    cb(null, { current: log.length, ttl: log.length === 0 ? 0 : log[0] + timeWindow - at })
  }

  child(): SlidingWindowStore {
    return new SlidingWindowStore({ now: this.now })
  }
}
