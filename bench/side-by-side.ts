import autocannon from 'autocannon'
import { execFileSync } from 'node:child_process'

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

/** GETs of the paths `nextPath` gives, in turn, for `seconds` over `connections` (autocannon in this process). */
export function loadGets (origin: string, authorization: string, nextPath: () => string, seconds: number, connections: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({
      url: origin,
      connections,
      duration: seconds,
      headers: { authorization },
      requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: nextPath() }) }]
    }, (error, result) => (error === null ? resolve(result) : reject(error)))
  })
}
