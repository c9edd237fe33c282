import { execFileSync } from 'node:child_process'
import { runWrk } from './wrk.js'

/**
 * What the side-by-side benchmarks share (examiner.ts, worlds.ts, versus.ts): two servers loaded
 * at the same time, pinned to one CPU so that the ratio of their request counts is the ratio of
 * their costs, whatever else the machine does.
 */

/** Pins a process to one CPU with taskset (Linux); false when that is not possible here. */
export function pinTo (pid: number, cpu: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** GETs of `paths` in turn for `seconds` over `connections` (wrk); the requests answered 2xx/3xx, and the others. */
export async function loadGets (origin: string, authorization: string, paths: string[], seconds: number, connections: number): Promise<{ requests: number; errors: number }> {
  const job = { origin, authorization, variants: paths.map((path) => ({ method: 'GET' as const, path })), connections, expect: [200], warmup: null, measure: { seconds } }
  const { result } = await runWrk(job, job.measure)
  return { requests: result.requests, errors: result.errors }
}
