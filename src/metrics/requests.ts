import { Buckets } from './histogram.js'

/**
 * Requests answered, counted as they complete (a hook each route carries, holding its own counts:
 * src/plugins/operations.ts) in plain maps: by route, method, status, world and tenant, and their
 * latency by route and method. prom-client reads them when /_sandbox/metrics is scraped
 * (registry.ts). A request's count is two map lookups by keys that are already there (the status,
 * the world's id): no string is made on the way.
 */

/** One series of the request counter. */
export interface RequestCell {
  readonly route: string
  readonly method: string
  readonly status: number
  readonly world: string
  readonly tenant: string
  count: number
}

/** One series of the latency histogram, with the counts of its route and method by status and world. */
export interface RouteStats {
  readonly route: string
  readonly method: string
  readonly buckets: Buckets
  /** By status, then by world id or, for a tenant's call about a world not its own, by `<world> <tenant>`. */
  readonly byStatus: Map<number, Map<string, RequestCell>>
}

/** What a request is counted under: its world (its id, and its tenant). */
export interface CountedWorld {
  readonly id: string
  readonly tenantId: string | undefined
}

/** Series kept at most: past this, new worlds' requests are counted under the world `(other)`. */
export const MAX_REQUEST_SERIES = 20_000
/** The route of a request no route matched (a 404, or refused before routing). */
export const UNMATCHED_ROUTE = '(unmatched)'
const OTHER_WORLD = '(other)'

export class RequestCounts {
  /** By route URL, then method. */
  private readonly routes = new Map<string, Map<string, RouteStats>>()
  private series = 0

  /**
   * One request answered (`seconds` after it arrived) by the route of `stats` (routeStats: each
   * route's config holds its own, made as it is registered), about `world`, by `tenant` ('' none;
   * usually the world's).
   */
  count (stats: RouteStats, status: number, world: CountedWorld, tenant: string, seconds: number): void {
    stats.buckets.observe(seconds)
    let byWorld = stats.byStatus.get(status)
    if (byWorld === undefined) {
      byWorld = new Map()
      stats.byStatus.set(status, byWorld)
    }
    const key = tenant === (world.tenantId ?? '') ? world.id : `${world.id} ${tenant}`
    const cell = byWorld.get(key)
    // a world of the same id made again by another tenant starts its series again
    if (cell !== undefined && cell.tenant === tenant) cell.count++
    else this.add(stats, byWorld, key, status, world.id, tenant).count++
  }

  /** Every series of the counter. */
  * cells (): Iterable<RequestCell> {
    for (const methods of this.routes.values()) {
      for (const stats of methods.values()) for (const byWorld of stats.byStatus.values()) yield * byWorld.values()
    }
  }

  /** Every series of the latency histogram. */
  * latency (): Iterable<RouteStats> {
    for (const methods of this.routes.values()) yield * methods.values()
  }

  /** Forgets the series of worlds that are gone (deleted or expired): asked at scrape time. */
  forgetWorldsBut (alive: (worldId: string) => boolean): void {
    for (const stats of this.latency()) {
      for (const byWorld of stats.byStatus.values()) {
        for (const [key, cell] of byWorld) {
          if (cell.world === OTHER_WORLD || alive(cell.world)) continue
          byWorld.delete(key)
          this.series--
        }
      }
    }
  }

  /** The counts of a route and method, made on first use. */
  routeStats (route: string, method: string): RouteStats {
    let methods = this.routes.get(route)
    if (methods === undefined) {
      methods = new Map()
      this.routes.set(route, methods)
    }
    let stats = methods.get(method)
    if (stats === undefined) {
      stats = { route, method, buckets: new Buckets(), byStatus: new Map() }
      methods.set(method, stats)
    }
    return stats
  }

  private add (stats: RouteStats, byWorld: Map<string, RequestCell>, key: string, status: number, world: string, tenant: string): RequestCell {
    if (this.series >= MAX_REQUEST_SERIES) {
      let other = byWorld.get(OTHER_WORLD)
      if (other === undefined) {
        other = { route: stats.route, method: stats.method, status, world: OTHER_WORLD, tenant: '', count: 0 }
        byWorld.set(OTHER_WORLD, other)
      }
      return other
    }
    const cell: RequestCell = { route: stats.route, method: stats.method, status, world, tenant, count: 0 }
    if (!byWorld.has(key)) this.series++
    byWorld.set(key, cell)
    return cell
  }
}
