import { fork } from 'node:child_process'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { cpuSeconds, machineBusySeconds } from './processes.js'
import type { LoadJob, LoadMessage, LoadResult } from './protocol.js'
import type { Side } from './report.js'
import { median, rateOf } from './stats.js'
import { runWrk } from './wrk.js'

/**
 * Load jobs of the benchmark: a closed loop on wrk (wrk.ts), a fixed rate in a child process
 * (load.ts); and one server's figures from several rounds of them.
 */

const LOAD_SCRIPT = join(fileURLToPath(new URL('.', import.meta.url)), 'load.js')

export interface LoadRun {
  result: LoadResult
  /** Cores used during the measurement by the server, the load generator, and every other process. */
  cpu: { server: number; load: number; other: number }
}

/** Runs one load job; CPU is measured over the measured part only (wrk's own from its /proc/self/stat). */
export async function runLoad (job: LoadJob, serverPid: number): Promise<LoadRun> {
  if (job.rate !== undefined) return runPaced(job, serverPid)
  if (job.warmup !== null) await runWrk(job, job.warmup)
  const mark = { at: performance.now(), server: cpuSeconds(serverPid) ?? 0, machine: machineBusySeconds() }
  const { result, loadCpuSeconds } = await runWrk(job, job.measure)
  const seconds = (performance.now() - mark.at) / 1000
  const per = (used: number) => (seconds > 0 ? used / seconds : 0)
  const server = per((cpuSeconds(serverPid) ?? 0) - mark.server)
  const load = per(loadCpuSeconds)
  const other = Math.max(0, per(machineBusySeconds() - mark.machine) - server - load)
  return { result, cpu: { server, load, other } }
}

/** A fixed-rate job in a child process (load.ts). */
function runPaced (job: LoadJob, serverPid: number): Promise<LoadRun> {
  return new Promise((resolve, reject) => {
    const child = fork(LOAD_SCRIPT, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' })
    const childPid = child.pid ?? 0
    const snapshot = () => ({ at: performance.now(), server: cpuSeconds(serverPid) ?? 0, load: cpuSeconds(childPid) ?? 0, machine: machineBusySeconds() })
    let mark: ReturnType<typeof snapshot> | undefined
    let settled = false
    child.on('message', (message: LoadMessage) => {
      if (message.type === 'measuring') {
        mark = snapshot()
      } else if (message.type === 'result') {
        settled = true
        const end = snapshot()
        const seconds = mark === undefined ? 0 : (end.at - mark.at) / 1000
        const per = (used: number) => (mark === undefined || seconds <= 0 ? 0 : used / seconds)
        const server = per(end.server - (mark?.server ?? 0))
        const load = per(end.load - (mark?.load ?? 0))
        const other = Math.max(0, per(end.machine - (mark?.machine ?? 0)) - server - load)
        resolve({ result: message.result, cpu: { server, load, other } })
      } else {
        settled = true
        reject(new Error(`load generator failed: ${message.message}`))
      }
    })
    child.on('exit', (code) => {
      if (!settled) reject(new Error(`load generator exited with ${code} without a result`))
    })
    child.send(job)
  })
}

/** One server's figures from its rounds: the median of each figure over the rounds, and the totals. */
export function sideOf (runs: LoadRun[]): Side {
  const of = (pick: (r: LoadRun) => number) => median(runs.map(pick))
  const statuses: Record<string, number> = {}
  for (const r of runs) for (const [status, n] of Object.entries(r.result.statuses)) statuses[status] = (statuses[status] ?? 0) + n
  return {
    rps: of((r) => rateOf(r.result)),
    p50Ms: of((r) => r.result.latency.p50Ms),
    p99Ms: of((r) => r.result.latency.p99Ms),
    meanMs: of((r) => r.result.latency.meanMs),
    rounds: runs.map((r) => rateOf(r.result)),
    requests: runs.reduce((n, r) => n + r.result.requests, 0),
    errors: runs.reduce((n, r) => n + r.result.errors, 0),
    statuses,
    seconds: runs.reduce((n, r) => n + r.result.seconds, 0),
    cpu: { server: of((r) => r.cpu.server), load: of((r) => r.cpu.load), other: of((r) => r.cpu.other) }
  }
}
