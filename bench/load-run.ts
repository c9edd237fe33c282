import { fork } from 'node:child_process'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { cpuSeconds, machineBusySeconds } from './processes.js'
import type { LoadJob, LoadMessage, LoadResult } from './protocol.js'
import type { Side } from './report.js'
import { merge, rateOf, summarize } from './stats.js'

/** Load jobs of the benchmark, each in a child process (bench/load.ts), and one server's figures from them. */

const LOAD_SCRIPT = join(fileURLToPath(new URL('.', import.meta.url)), 'load.js')

export interface LoadRun {
  result: LoadResult
  /** Cores used during the measurement by the server, the load generator, and every other process. */
  cpu: { server: number; load: number; other: number }
}

/** Runs one load job in a child process; CPU is measured over the measured part only. */
export function runLoad (job: LoadJob, serverPid: number): Promise<LoadRun> {
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

/** One server's figures from the slices of its measurement. */
export function sideOf (runs: LoadRun[]): Side {
  const result = merge(runs.map((r) => r.result))
  const seconds = runs.reduce((n, r) => n + r.result.seconds, 0)
  const cores = (pick: keyof LoadRun['cpu']) =>
    seconds > 0 ? runs.reduce((n, r) => n + r.cpu[pick] * r.result.seconds, 0) / seconds : 0
  return {
    rps: rateOf(result),
    ...summarize(result.latencies),
    requests: result.requests,
    errors: result.errors,
    statuses: result.statuses,
    seconds: result.seconds,
    cpu: { server: cores('server'), load: cores('load'), other: cores('other') }
  }
}
