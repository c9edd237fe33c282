import { setFlagsFromString } from 'node:v8'

/**
 * How far V8 lets the JavaScript heap grow past what a full collection found alive.
 *
 * After each full collection V8 sets the next one's threshold at the live size times a factor it
 * picks itself: up to 4 for a process allowed a large heap, as Node's default is. The sandbox
 * keeps about 25 MB alive, so under steady traffic its old generation grew to 70-110 MB of
 * mostly dead objects before a full collection, and a 60 s soak peaked anywhere from 146 to
 * 203 MiB of RSS. A fixed factor of 1.3 keeps the old generation near 32 MB: full collections
 * come about every second and pause the loop for 3-8 ms (their marking runs on V8's helper
 * thread). Reads lose about 3-8% of their throughput to them.
 *
 * The flag is read at every full collection, so it takes effect when set from inside a running
 * process. It is process-wide: the `serve` command sets it for the process it owns, and an app
 * built inside the partner's own process (startSandbox, startServer, buildApp) leaves it alone.
 */

/** The default SANDBOX_HEAP_GROWTH_PERCENT: the heap grows to 1.3 times the live size. */
export const DEFAULT_HEAP_GROWTH_PERCENT = 30

/** Largest setting accepted: a factor of 4, V8's own largest. */
export const MAX_HEAP_GROWTH_PERCENT = 300

/** Sets V8's heap growth to 1 + percent/100 for this process; 0 leaves V8's own choice. */
export function limitHeapGrowth (percent: number): void {
  if (percent === 0) return
  setFlagsFromString(`--heap-growing-percent=${percent}`)
}
