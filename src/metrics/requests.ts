import { Buckets } from './histogram.js'

/**
 * Requests answered, counted as they complete (the request log's hook: src/plugins/request-log.ts)
 * in plain maps: by route, method, status, world and tenant, and their latency by route and
 * method. prom-client reads them when /_sandbox/metrics is scraped (registry.ts).
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

/** One series of the latency histogram. */
export interface LatencyCell {
  readonly route: string
  readonly method: string
  readonly buckets: Buckets
}

/** Series kept at most: past this, new worlds' requests are counted under the world `(other)`. */
export const MAX_REQUEST_SERIES = 20_000
/** The route of a request no route matched (a 404, or refused before routing). */
export const UNMATCHED_ROUTE = '(unmatched)'

export class RequestCounts {
  readonly cells = new Map<string, RequestCell>()
  readonly latency = new Map<string, LatencyCell>()

  /** One request answered (`seconds` after it arrived). */
  count (route: string | undefined, method: string, status: number, world: string, tenant: string, seconds: number): void {
    const path = route ?? UNMATCHED_ROUTE
    const key = `${method} ${path} ${status} ${world} ${tenant}`
    let cell = this.cells.get(key)
    if (cell === undefined) cell = this.add(key, path, method, status, world, tenant)
    cell.count++
    const routeKey = `${method} ${path}`
    let timing = this.latency.get(routeKey)
    if (timing === undefined) {
      timing = { route: path, method, buckets: new Buckets() }
      this.latency.set(routeKey, timing)
    }
    timing.buckets.observe(seconds)
  }

  /** Forgets the series of worlds that are gone (deleted or expired): asked at scrape time. */
  forgetWorldsBut (alive: (worldId: string) => boolean): void {
    for (const [key, cell] of this.cells) if (cell.world !== OTHER_WORLD && !alive(cell.world)) this.cells.delete(key)
  }

  private add (key: string, route: string, method: string, status: number, world: string, tenant: string): RequestCell {
    if (this.cells.size >= MAX_REQUEST_SERIES) {
      const other = `${method} ${route} ${status} ${OTHER_WORLD} `
      let cell = this.cells.get(other)
      if (cell === undefined) {
        cell = { route, method, status, world: OTHER_WORLD, tenant: '', count: 0 }
        this.cells.set(other, cell)
      }
      return cell
    }
    const cell: RequestCell = { route, method, status, world, tenant, count: 0 }
    this.cells.set(key, cell)
    return cell
  }
}

const OTHER_WORLD = '(other)'
