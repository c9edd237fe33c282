/** A window's events by key: what a hosted world's log keeps of it (worlds/world-state.ts). */
export type WindowEvents = Record<string, number[]>

/**
 * A sliding-window budget: a key may have at most `max` recorded events in any `windowMs`
 * milliseconds. Nothing is counted by asking; the caller records an event once it has happened
 * (an accepted creation), so refused or failed attempts never use the budget. Times are given by
 * the caller (milliseconds on one clock), and an event is recorded at the time it began, so a
 * slow request does not move its place in the window.
 */
export class SlidingWindow {
  /** Times of the recorded events per key, ascending; a key without events in the window has no entry. */
  private readonly events = new Map<string, number[]>()

  constructor (readonly max: number, readonly windowMs: number) {}

  /** The key's events newer than one window before `at` (older ones are dropped for good). */
  private live (key: string, at: number): number[] {
    const log = this.events.get(key)
    if (log === undefined) return []
    let drop = 0
    while (drop < log.length && log[drop] <= at - this.windowMs) drop++
    if (drop > 0) log.splice(0, drop)
    if (log.length === 0) this.events.delete(key)
    return log
  }

  /** Whether one more event of `key` at `at` keeps the window within `max`. */
  hasRoom (key: string, at: number): boolean {
    return this.live(key, at).length < this.max
  }

  /** Counts one event of `key` that began at `at` (kept in time order, whenever it is recorded). */
  record (key: string, at: number): void {
    const log = this.live(key, at)
    let i = log.length
    while (i > 0 && log[i - 1] > at) i--
    log.splice(i, 0, at)
    this.events.set(key, log)
  }

  /** Forgets every event (a reset of the sandbox). */
  clear (): void {
    this.events.clear()
  }

  /** Every key's events (those past the window may still be among them until the key is next used). */
  snapshot (): WindowEvents {
    return Object.fromEntries(this.events)
  }

  /** Takes the events a hosted world's log kept (its owner's, before this instance took the world). */
  adopt (events: WindowEvents): void {
    this.events.clear()
    for (const [key, times] of Object.entries(events)) if (times.length > 0) this.events.set(key, [...times])
  }

  /** What is left of the key's budget at `at`, and the milliseconds until its oldest event leaves the window (0: none in it). */
  state (key: string, at: number): { remaining: number, resetMs: number } {
    const log = this.live(key, at)
    return { remaining: Math.max(0, this.max - log.length), resetMs: log.length === 0 ? 0 : Math.max(0, log[0] + this.windowMs - at) }
  }
}
