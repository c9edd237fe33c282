/**
 * The sandbox clock. Every timestamp the sandbox makes and every `asOf` comparison reads it.
 * Runs with real time plus an offset, or stands frozen at a fixed instant.
 */
export interface ClockState {
  now: string
  frozen: boolean
}

export class Clock {
  private offsetMs = 0
  private frozenAt: number | null = null

  constructor (private readonly realNow: () => number = Date.now) {}

  nowMs (): number {
    return this.frozenAt ?? this.realNow() + this.offsetMs
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

  state (): ClockState {
    return { now: this.iso(), frozen: this.frozenAt !== null }
  }
}
