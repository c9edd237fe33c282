import type { LatencySummary } from './stats.js'

/**
 * What the benchmark's processes tell each other: the orchestrator (run.ts) hands a LoadJob to
 * the load generator (wrk for a closed loop, bench/wrk.ts; load.ts, a child process, for a fixed
 * rate) and gets a LoadResult back; the ceiling server
 * (ceiling.ts) reads a CeilingFile, the write ceiling (write-ceiling.ts) a WriteCeilingFile.
 */

/** Replaced by a fresh random UUID in every request body that contains it. */
export const UUID_PLACEHOLDER = '{{uuid}}'

export interface RequestVariant {
  method: 'GET' | 'POST'
  /** Path and query string. */
  path: string
  /** JSON text; may contain UUID_PLACEHOLDER. */
  body?: string
}

/** How long a load lasts: seconds, or a number of requests. */
export type Budget = { seconds: number } | { amount: number }

export interface LoadJob {
  /** http://host:port of the server under load. */
  origin: string
  authorization: string
  /** Requests sent in turn, round-robin over all connections. */
  variants: RequestVariant[]
  connections: number
  /** Load before the measurement, not recorded. */
  warmup: Budget | null
  measure: Budget
  /** Statuses that count as answered requests; any other status is an error. */
  expect: number[]
  /** Offer this many requests per second at even intervals (open loop) instead of a closed loop. */
  rate?: number
}

export interface SecondCount {
  /** Second since the first request was sent (by send time). */
  second: number
  byStatus: Record<string, number>
}

export interface LoadResult {
  tool: string
  /** Requests answered with an expected status. */
  requests: number
  /** Other statuses, socket errors and timeouts. */
  errors: number
  /** From the first request sent to the last answer (or to the end of the offered load). */
  seconds: number
  statuses: Record<string, number>
  /** Latency of the answers, milliseconds. */
  latency: LatencySummary
  /** Rate mode only: answers by the second their request was sent in. */
  perSecond?: SecondCount[]
}

export type LoadMessage =
  | { type: 'measuring' }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string }

/** One stored answer of the sandbox. */
export interface StoredResponse {
  method: string
  /** Path and query string, as requested. */
  url: string
  /** The request body sent, when there was one. */
  body?: string
  status: number
  contentType: string
  payload: string
}

export interface CeilingFile {
  /** Basic-auth credentials the ceiling accepts. */
  credentials: { clientId: string; clientSecret: string }
  /** Route patterns to register, as the sandbox registers them. */
  routes: { method: string; url: string }[]
  responses: StoredResponse[]
}

/** What the write ceiling (write-ceiling.ts) needs: who may write, to which clients, on which route. */
export interface WriteCeilingFile {
  credentials: { clientId: string; clientSecret: string }
  agencyId: number
  /** The clients that exist (the live ones of the agency). */
  clientNumbers: number[]
  /** The sandbox's route pattern of a log note. */
  route: string
}
