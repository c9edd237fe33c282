import type { BenchData } from './data.js'
import { UUID_PLACEHOLDER, type RequestVariant } from './protocol.js'

/** The scenarios of issue 7, as requests over the benchmark's data. */

export type ScenarioId =
  | 'get-client' | 'get-client-all' | 'batch-200' | 'changed-all' | 'changed-recent' | 'search-policy' | 'log-note' | 'create-client'

export interface Scenario {
  id: ScenarioId
  title: string
  /** The sandbox's route pattern (the ceiling registers the same). */
  route: { method: 'GET' | 'POST'; url: string }
  /** Requests sent in turn. */
  variants: RequestVariant[]
  /** Statuses that count as answered. */
  expect: number[]
  /** Connections of the closed loop (or the paced client's most at once). */
  connections: number
  /** What it is measured against: the sandbox's answers from memory, or the write ceiling. */
  ceiling: 'answers' | 'write'
  /** Open loop at a fixed offered rate instead of a closed loop. */
  rate?: { perSecond: number; seconds: number }
}

export interface ScenarioSizes {
  /** Distinct clients (and policy numbers) the single reads rotate over. */
  rotate: number
  /** Distinct batches of 200. */
  batches: number
  /** Distinct clients written to. */
  writeClients: number
  /** Seconds of offered load for create client. */
  rateSeconds: number
}

export const SCENARIO_IDS: readonly ScenarioId[] = [
  'get-client', 'get-client-all', 'batch-200', 'changed-all', 'changed-recent', 'search-policy', 'log-note', 'create-client'
]

export const ALL_GROUPS = 'Details,People,Contacts,Claims,Policies,Invoices'
export const BATCH_SIZE = 200
/** Offered load of the create-client scenario; the sandbox accepts 25 per second. */
export const CREATE_RATE = 100
export const CREATE_LIMIT = 25
/** Connections of the closed loops: many for reads, fewer for writes (each waits for a commit). */
export const READ_CONNECTIONS = 32
export const WRITE_CONNECTIONS = 10

/** A 4.0 batch read of these client numbers. */
function batchRequest (data: BenchData, numbers: number[]): RequestVariant {
  return { method: 'POST', path: `/vendor/agency/${data.agencyId}/clients?version=4.0`, body: JSON.stringify({ clientNumbers: numbers }) }
}

/** `count` items spread evenly over `items`. */
function spread<T> (items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items]
  const step = items.length / count
  return Array.from({ length: count }, (_, i) => items[Math.floor(i * step)])
}

export function buildScenarios (data: BenchData, sizes: ScenarioSizes): Scenario[] {
  const agency = `/vendor/agency/${data.agencyId}`
  const live = data.liveClientNumbers
  const readClients = spread(live, sizes.rotate)
  const batchStarts = spread(Array.from({ length: Math.max(1, live.length - BATCH_SIZE + 1) }, (_, i) => i), sizes.batches)

  const scenarios: Scenario[] = [
    {
      id: 'get-client',
      title: 'get client, default includes',
      route: { method: 'GET', url: '/vendor/agency/:agencyId/client/:clientId' },
      variants: readClients.map((n) => ({ method: 'GET', path: `${agency}/client/${n}?version=4.0` })),
      expect: [200],
      connections: READ_CONNECTIONS,
      ceiling: 'answers'
    },
    {
      id: 'get-client-all',
      title: 'get client, all groups',
      route: { method: 'GET', url: '/vendor/agency/:agencyId/client/:clientId' },
      variants: readClients.map((n) => ({ method: 'GET', path: `${agency}/client/${n}?version=4.0&include=${ALL_GROUPS}` })),
      expect: [200],
      connections: READ_CONNECTIONS,
      ceiling: 'answers'
    },
    {
      id: 'batch-200',
      title: `batch read of ${BATCH_SIZE}`,
      route: { method: 'POST', url: '/vendor/agency/:agencyId/clients' },
      variants: batchStarts.map((start) => batchRequest(data, live.slice(start, start + BATCH_SIZE))),
      expect: [200],
      connections: READ_CONNECTIONS,
      ceiling: 'answers'
    },
    {
      id: 'changed-all',
      title: `changed clients, no asOf (${live.length.toLocaleString('en-US')} ids)`,
      route: { method: 'GET', url: '/vendor/agency/:agencyId/clients' },
      variants: [{ method: 'GET', path: `${agency}/clients?version=4.0` }],
      expect: [200],
      connections: READ_CONNECTIONS,
      ceiling: 'answers'
    },
    {
      id: 'changed-recent',
      title: `changed clients, recent asOf (${data.recent.changed} ids)`,
      route: { method: 'GET', url: '/vendor/agency/:agencyId/clients' },
      variants: [{ method: 'GET', path: `${agency}/clients?version=4.0&asOf=${encodeURIComponent(data.recent.asOf)}` }],
      expect: [200],
      connections: READ_CONNECTIONS,
      ceiling: 'answers'
    },
    {
      id: 'search-policy',
      title: 'search by policy number',
      route: { method: 'GET', url: '/vendor/agency/:agencyId/clients/search' },
      variants: spread(data.policyNumbers, sizes.rotate).map((p) => ({
        method: 'GET',
        path: `${agency}/clients/search?version=4.0&policyNumber=${encodeURIComponent(p)}`
      })),
      expect: [200],
      connections: READ_CONNECTIONS,
      ceiling: 'answers'
    },
    {
      id: 'log-note',
      title: 'log note write',
      route: { method: 'POST', url: '/vendor/agency/:agencyId/client/:clientId/log' },
      variants: spread(live, sizes.writeClients).map((n) => ({
        method: 'POST',
        path: `${agency}/client/${n}/log?version=4.0`,
        body: `{"refId":"${UUID_PLACEHOLDER}","ts":"2026-11-20T10:00:00Z","channel":29,"note":"<p>Called about the renewal</p>"}`
      })),
      expect: [200],
      connections: WRITE_CONNECTIONS,
      ceiling: 'write'
    },
    {
      id: 'create-client',
      title: `create client, ${CREATE_RATE}/s offered`,
      route: { method: 'POST', url: '/vendor/agency/:agencyId/client' },
      variants: [{
        method: 'POST',
        path: `${agency}/client?version=4.0`,
        body: JSON.stringify({
          people: [{ firstName: 'Ada', lastName: 'Bench', mainContactType: 'First' }],
          log: { channel: 29, note: 'Created by the benchmark', ts: '2026-11-20T10:00:00Z' }
        })
      }],
      expect: [200, 429],
      connections: WRITE_CONNECTIONS,
      ceiling: 'answers',
      rate: { perSecond: CREATE_RATE, seconds: sizes.rateSeconds }
    }
  ]
  return scenarios
}

/**
 * A partner's first full sync: every live client once, in consecutive batches of BATCH_SIZE sent
 * in turn. A pass reads each client once, so the sandbox finds none of them in memory.
 */
export function syncVariants (data: BenchData): RequestVariant[] {
  const live = data.liveClientNumbers
  const variants: RequestVariant[] = []
  for (let start = 0; start < live.length; start += BATCH_SIZE) variants.push(batchRequest(data, live.slice(start, start + BATCH_SIZE)))
  return variants
}
