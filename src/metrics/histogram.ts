/**
 * Counts kept on the request path in plain numbers and arrays (prom-client reads them only when
 * /_sandbox/metrics is scraped: registry.ts), so that counting costs a request almost nothing.
 */

/** Upper bounds of the latency buckets, in seconds (the last bucket, +Inf, is implicit). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

/** A histogram's counts: observations per bucket (not cumulative), their sum and number. */
export class Buckets {
  readonly counts: number[]
  sum = 0
  count = 0

  constructor (readonly bounds: readonly number[] = LATENCY_BUCKETS) {
    this.counts = new Array<number>(bounds.length + 1).fill(0)
  }

  observe (value: number): void {
    const { bounds } = this
    let i = 0
    while (i < bounds.length && value > bounds[i]) i++
    this.counts[i]++
    this.sum += value
    this.count++
  }
}

/** Outcomes of the commits of one kind (a world's log, the catalogue), and how long they took. */
export class CommitStats {
  /** Committed and confirmed. */
  committed = 0
  /** Refused or failed before or at COMMIT: nothing applied. */
  failed = 0
  /** The COMMIT's answer lost; asked again, it was there (answered as committed). */
  foundAfterLoss = 0
  /** The COMMIT's answer lost; asked again, nothing was applied. */
  absentAfterLoss = 0
  /** The COMMIT's answer lost, and the outcome could not be learnt in time. */
  unknown = 0
  /** Seconds from the first statement of the append to the end of its commit. */
  readonly seconds = new Buckets()
}
