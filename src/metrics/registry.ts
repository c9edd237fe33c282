import type { Metric, Registry } from 'prom-client'
import type { Buckets, CommitStats } from './histogram.js'
import { RequestCounts } from './requests.js'

/**
 * The instance's metrics in the Prometheus text format (GET /_sandbox/metrics), with prom-client.
 * Nothing here runs on the request path: requests, appends and commits are counted in plain
 * numbers where they happen (requests.ts, histogram.ts), and each metric below reads them when
 * the metrics are scraped. A part of the sandbox with figures of its own adds them as a source
 * (a function given this registry): the worlds' (worldMetrics), PostgreSQL's in hosted mode
 * (storageMetrics). Hosted mode's ownership of worlds and its leases belong here as one more
 * source: worlds owned by this instance, leases held, taken over and handed over.
 * prom-client itself is loaded by the first scrape (its modules take some 200 ms to load, which a
 * start should not pay), or at once when the process's own figures are wanted.
 */

type PromClient = typeof import('prom-client')
type Labels = Record<string, string | number>

/** One series of a counter or gauge. */
export interface Sample {
  labels?: Labels
  value: number
}

/** One series of a histogram. */
export interface HistogramSample {
  labels?: Labels
  buckets: Buckets
}

interface Definition {
  name: string
  help: string
  type: 'counter' | 'gauge' | 'histogram'
  values: () => Array<Sample & { metricName?: string }>
}

export class SandboxMetrics {
  /** Requests answered, by route, method, status, world and tenant, and their latency. */
  readonly requests = new RequestCounts()
  private readonly definitions: Definition[] = []
  private processMetrics = false
  private registry: Promise<Registry> | undefined

  /** A counter read when scraped. */
  counter (name: string, help: string, read: () => Sample[]): void {
    this.definitions.push({ name, help, type: 'counter', values: read })
  }

  /** A gauge read when scraped. */
  gauge (name: string, help: string, read: () => Sample[]): void {
    this.definitions.push({ name, help, type: 'gauge', values: read })
  }

  /** A histogram read when scraped, from counts per bucket (histogram.ts). */
  histogram (name: string, help: string, read: () => HistogramSample[]): void {
    this.definitions.push({
      name,
      help,
      type: 'histogram',
      values: () => read().flatMap(({ labels = {}, buckets }) => {
        const values: Array<Sample & { metricName: string }> = []
        let cumulative = 0
        buckets.bounds.forEach((bound, i) => {
          cumulative += buckets.counts[i]
          values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: bound }, value: cumulative })
        })
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: buckets.count })
        values.push({ metricName: `${name}_sum`, labels, value: buckets.sum })
        values.push({ metricName: `${name}_count`, labels, value: buckets.count })
        return values
      })
    })
  }

  /**
   * The process's own figures (CPU, memory, event-loop delay, garbage collection): process-wide
   * observers, so only `serve`, whose process is the sandbox's, turns them on; from now on.
   */
  withProcessMetrics (): void {
    this.processMetrics = true
    void this.loaded().catch(() => undefined)
  }

  /** The metrics in the Prometheus text format. */
  async text (): Promise<string> {
    return await (await this.loaded()).metrics()
  }

  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8'

  private async loaded (): Promise<Registry> {
    this.registry ??= import('prom-client').then((loaded: PromClient & { default?: PromClient }) => {
      // a CommonJS package: bundled, its exports come as the default export
      const { Registry, collectDefaultMetrics } = loaded.default ?? loaded
      const registry = new Registry()
      for (const { name, help, type, values } of this.definitions) {
        const metric = {
          name,
          help,
          type,
          aggregator: 'sum',
          get: async () => ({ name, help, type, aggregator: 'sum', values: values().map((v) => ({ ...v, labels: v.labels ?? {} })) })
        }
        registry.registerMetric(metric as unknown as Metric)
      }
      if (this.processMetrics) collectDefaultMetrics({ register: registry })
      return registry
    })
    return await this.registry
  }
}

/** What the worlds' metrics read: the worlds alive and their tenants. */
export interface WorldsFacts {
  /** Every world, the default one first. */
  worlds(): Array<{ id: string, tenantId: string | undefined, bytes(): number }>
  tenants(): number
  /** Whether a world of this id is alive (series of the others are forgotten). */
  alive(worldId: string): boolean
}

/** Requests (requests.ts), and the worlds with what their data takes. */
export function worldMetrics (metrics: SandboxMetrics, facts: WorldsFacts): void {
  const { requests } = metrics
  metrics.counter('sandbox_http_requests_total', 'Requests answered, by route, method, status, world and tenant (empty: none)', () => {
    requests.forgetWorldsBut(facts.alive)
    return [...requests.cells()].map((c) => ({ labels: { route: c.route, method: c.method, status: c.status, world: c.world, tenant: c.tenant }, value: c.count }))
  })
  metrics.histogram('sandbox_http_request_duration_seconds', 'Time from a request\'s arrival to its answer, by route and method',
    () => [...requests.latency()].map((c) => ({ labels: { route: c.route, method: c.method }, buckets: c.buckets })))
  metrics.gauge('sandbox_worlds', 'Worlds held, the default world included', () => [{ value: facts.worlds().length }])
  metrics.gauge('sandbox_world_bytes', 'Memory a world\'s data takes (its SQLite database), by world and tenant',
    () => facts.worlds().map((w) => ({ labels: { world: w.id, tenant: w.tenantId ?? '' }, value: w.bytes() })))
  metrics.gauge('sandbox_tenants', 'Tenants of the programme', () => [{ value: facts.tenants() }])
}

/** What PostgreSQL's metrics read (hosted mode): the pool, and the commits of this instance. */
export interface StorageFigures {
  pool: { totalCount: number, idleCount: number, waitingCount: number }
  appends: CommitStats
  catalogueChanges: CommitStats
}

/** The outcomes a commit is counted under (histogram.ts, CommitStats). */
const OUTCOMES = {
  committed: 'committed',
  failed: 'failed',
  foundAfterLoss: 'found_after_lost_answer',
  absentAfterLoss: 'absent_after_lost_answer',
  unknown: 'unknown'
} as const

/** Hosted mode: PostgreSQL's pool of this instance, and its appends to the worlds' logs and changes of the catalogue. */
export function storageMetrics (metrics: SandboxMetrics, storage: StorageFigures): void {
  metrics.gauge('sandbox_pg_pool_connections', 'Connections of this instance\'s PostgreSQL pool: all, and idle', () => [
    { labels: { state: 'total' }, value: storage.pool.totalCount },
    { labels: { state: 'idle' }, value: storage.pool.idleCount }
  ])
  metrics.gauge('sandbox_pg_pool_waiting', 'Requests waiting for a connection of the pool', () => [{ value: storage.pool.waitingCount }])
  const kinds = { world: storage.appends, catalogue: storage.catalogueChanges }
  metrics.counter('sandbox_pg_commits_total', 'Appends to a world\'s log (kind world) and changes of the catalogue, by outcome ' +
    '(found_after_lost_answer: applied, learnt after the COMMIT\'s answer was lost; unknown: answered 503 outcome unknown)', () =>
    Object.entries(kinds).flatMap(([kind, stats]) => Object.entries(OUTCOMES).map(([field, outcome]) =>
      ({ labels: { kind, outcome }, value: stats[field as keyof typeof OUTCOMES] }))))
  metrics.histogram('sandbox_pg_commit_duration_seconds', 'Time from an append\'s first statement to its commit (applied ones)',
    () => Object.entries(kinds).map(([kind, stats]) => ({ labels: { kind }, buckets: stats.seconds })))
}
