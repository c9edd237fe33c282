import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { get as httpGet } from 'node:http'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

/** Server processes of the benchmark: start, wait until healthy, watch through /proc, stop. */

export { freePort } from '../scripts/free-port.js'

/** Status of one GET, or 0 when the connection fails. */
function statusOf (url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpGet(url, { agent: false, timeout: 2000 }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(0))
  })
}

export interface ServerProcess {
  child: ChildProcess
  pid: number
  origin: string
  /** From spawn to the first 200 on the health URL, milliseconds. */
  startupMs: number
  /** CPU time (user + system, every thread) it used until then: less swayed by other load than startupMs. */
  startupCpuMs: number
  /** The last lines it printed (stdout and stderr). */
  output(): string
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>
}

export interface SpawnOptions {
  /** Arguments after the node executable (node flags, script, script arguments). */
  args: string[]
  env: Record<string, string>
  port: number
  healthPath: string
  /** Poll interval of the health URL. */
  pollMs: number
  timeoutMs: number
}

const KEEP_OUTPUT = 64 * 1024

/** Spawns a node process and polls its health URL until it answers 200. */
export async function spawnServer (opts: SpawnOptions): Promise<ServerProcess> {
  const origin = `http://127.0.0.1:${opts.port}`
  let output = ''
  const started = performance.now()
  const child = spawn(process.execPath, opts.args, { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-KEEP_OUTPUT)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  let exitCode: number | null | undefined
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    exitCode = code
    resolve(code)
  }))

  const stop = async (graceMs = 15_000): Promise<number | null> => {
    if (exitCode !== undefined) return exitCode
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    const code = await exited
    clearTimeout(timer)
    return code
  }

  const deadline = started + opts.timeoutMs
  for (;;) {
    if (exitCode !== undefined) throw new Error(`${opts.args.join(' ')} exited with ${exitCode} before it was healthy:\n${output}`)
    if ((await statusOf(origin + opts.healthPath)) === 200) break
    if (performance.now() > deadline) {
      await stop()
      throw new Error(`${opts.args.join(' ')} was not healthy within ${opts.timeoutMs} ms:\n${output}`)
    }
    await sleep(opts.pollMs)
  }
  const startupMs = performance.now() - started
  if (child.pid === undefined) throw new Error('spawned process has no pid')
  const startupCpuMs = (cpuSeconds(child.pid) ?? 0) * 1000
  return { child, pid: child.pid, origin, startupMs, startupCpuMs, output: () => output, stop }
}

// ---------------------------------------------------------------------------------------------
// /proc readings (Linux)

/** A field of /proc/<pid>/status in kB (VmRSS, VmHWM), or null once the process is gone. */
export function statusKb (pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m === null ? null : Number(m[1])
  } catch {
    return null
  }
}

/** Clock ticks of a Linux process. */
const TICKS_PER_SECOND = 100

/** CPU time (user + system) the process has used, in seconds, or null once it is gone. */
export function cpuSeconds (pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // fields after the command name, which is in parentheses and may contain spaces
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(rest[11]) + Number(rest[12])) / TICKS_PER_SECOND
  } catch {
    return null
  }
}

/** CPU time all processes of the machine used so far (everything but idle and iowait), in seconds. */
export function machineBusySeconds (): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const total = fields.reduce((a, b) => a + b, 0)
  return (total - fields[3] - (fields[4] ?? 0)) / TICKS_PER_SECOND
}

/** Load averages over 1, 5 and 15 minutes. */
export function loadAverage (): number[] {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number)
}

/** Samples a process's resident set size at a fixed interval and keeps the peak. */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined
  peakKb = 0
  /** Peak since the last startPhase(). */
  phasePeakKb = 0
  samples = 0

  constructor (private readonly pid: number, private readonly everyMs = 100) {}

  start (): this {
    this.sample()
    this.timer = setInterval(() => this.sample(), this.everyMs)
    this.timer.unref()
    return this
  }

  sample (): number | null {
    const kb = statusKb(this.pid, 'VmRSS')
    if (kb !== null) {
      this.samples++
      if (kb > this.peakKb) this.peakKb = kb
      if (kb > this.phasePeakKb) this.phasePeakKb = kb
    }
    return kb
  }

  /** Starts a new phase: phasePeakKb counts from now. */
  startPhase (): void {
    this.phasePeakKb = 0
    this.sample()
  }

  stop (): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }
}
