import type { LoadResult } from './protocol.js'

/** Latency figures, rates and medians of load results. */

export interface LatencySummary {
  p50Ms: number
  p99Ms: number
  meanMs: number
}

export function summarize (latencies: Float64Array): LatencySummary {
  const n = latencies.length
  if (n === 0) return { p50Ms: 0, p99Ms: 0, meanMs: 0 }
  const sorted = latencies.slice().sort()
  const at = (q: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]
  let sum = 0
  for (let i = 0; i < n; i++) sum += sorted[i]
  return { p50Ms: at(0.5), p99Ms: at(0.99), meanMs: sum / n }
}

/** Requests answered per second of load. */
export const rateOf = (r: LoadResult): number => (r.seconds > 0 ? r.requests / r.seconds : 0)

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length === 0 ? 0 : sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
