/**
 * The sandbox clock. Every timestamp the sandbox makes and every `asOf` comparison reads it.
 * Runs with real time plus an offset, or stands frozen at a fixed instant.
 */
export interface ClockState {
  now: string
  frozen: boolean
}

/** The first and last instants the clock can read: years 1 to 9999, the range of a .NET DateTime and of ISO 8601's four-digit years. */
export const CLOCK_MIN_MS = Date.parse('0001-01-01T00:00:00.000Z')
export const CLOCK_MAX_MS = Date.parse('9999-12-31T23:59:59.999Z')
export const CLOCK_RANGE = '0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z'

/** How a clock is set: its offset from real time, or the instant it stands still at. */
export interface ClockSetting {
  offsetMs: number
  frozenAt: number | null
}

export class Clock {
  private offsetMs = 0
  private frozenAt: number | null = null

  constructor (private readonly realNow: () => number = Date.now) {}

  /** A running clock set close to the end of year 9999 stops there. */
  nowMs (): number {
    return this.frozenAt ?? Math.min(CLOCK_MAX_MS, this.realNow() + this.offsetMs)
  }

  /** The real time the clock runs on, whatever it was set to (rate windows keep real time). */
  realMs (): number {
    return this.realNow()
  }

  now (): Date {
    return new Date(this.nowMs())
  }

  iso (): string {
    return this.now().toISOString()
  }

  set (nowMs: number, frozen: boolean): void {
    if (frozen) {
      this.frozenAt = nowMs
    } else {
      this.frozenAt = null
      this.offsetMs = nowMs - this.realNow()
    }
  }

  advance (ms: number): void {
    if (this.frozenAt !== null) this.frozenAt += ms
    else this.offsetMs += ms
  }

  reset (): void {
    this.offsetMs = 0
    this.frozenAt = null
  }

  /** The setting as it stands (what adopt takes). */
  setting (): ClockSetting {
    return { offsetMs: this.offsetMs, frozenAt: this.frozenAt }
  }

  /** Takes a setting a hosted world's log kept (its owner's, before this instance took the world). */
  adopt (setting: ClockSetting): void {
    this.offsetMs = setting.offsetMs
    this.frozenAt = setting.frozenAt
  }

  state (): ClockState {
    return { now: this.iso(), frozen: this.frozenAt !== null }
  }
}
