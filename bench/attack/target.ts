import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { ROOT } from '../../src/config.js'
import { freePort, RssSampler, spawnServer, statusKb, type ServerProcess } from '../processes.js'
import type { ProbeCommand, ProbeSample } from './probe-worker.js'

/**
 * The sandbox under attack: a real `agency-sandbox serve` process on 127.0.0.1 (a free port, a
 * fresh database file in a temporary folder, the demo fixture). An exit nobody asked for is a
 * crash: it is reported and the server is started again on the same file, so the attack goes on.
 * While it runs, its memory is sampled from /proc and a worker thread probes its health URL.
 */

export const CLI = join(ROOT, 'dist', 'src', 'cli.js')
/** Preloaded into the server: its own event-loop delay, written to a file. */
const LOOP_MONITOR = new URL('./loop-monitor.js', import.meta.url)

export interface Crash {
  /** Exit code, or the signal. */
  exit: string
  /** The last lines the server printed. */
  output: string
}

export class Target {
  origin = ''
  pid = 0
  readonly crashes: Crash[] = []
  /** Highest VmHWM (kB) of any server process of this run; sampled, and read at every stop. */
  peakHwmKb = 0
  /** VmRSS sampler of the current process (phase peaks). */
  sampler: RssSampler | undefined
  onCrash: (crash: Crash) => void = () => {}
  onProbe: (sample: ProbeSample) => void = () => {}

  private server: ServerProcess | undefined
  private carriedPhasePeakKb = 0
  private stopping = false
  private restarting: Promise<void> | undefined
  private readonly dir = mkdtempSync(join(tmpdir(), 'sandbox-attack-'))
  private readonly loopFile = join(this.dir, 'event-loop.log')
  /**
   * When each server process was launched and when it first answered health: its start (loading
   * modules, opening the database) blocks its loop before it listens, which holds no request up,
   * so the monitor's lines written then are not a phase's blocks.
   */
  private readonly startups: Array<[number, number]> = []
  private readonly probe: Worker
  private hwmTimer: NodeJS.Timeout | undefined

  private constructor () {
    this.probe = new Worker(new URL('./probe-worker.js', import.meta.url))
    this.probe.on('message', (m: ProbeSample) => this.onProbe(m))
    this.probe.unref()
  }

  static async start (): Promise<Target> {
    const target = new Target()
    await target.launch()
    target.hwmTimer = setInterval(() => target.readHwm(), 200)
    target.hwmTimer.unref()
    return target
  }

  private async launch (): Promise<void> {
    const port = await freePort()
    const launchedAt = Date.now()
    const server = await spawnServer({
      args: ['--import', LOOP_MONITOR.href, CLI, 'serve'],
      env: {
        PORT: String(port),
        HOST: '127.0.0.1',
        SANDBOX_DB: this.dbFile,
        LOG_LEVEL: 'warn',
        LOG_PRETTY: 'false',
        ATTACK_LOOP_FILE: this.loopFile
      },
      port,
      healthPath: '/_sandbox/health',
      pollMs: 50,
      timeoutMs: 30_000
    })
    this.startups.push([launchedAt, Date.now()])
    this.server = server
    this.origin = server.origin
    this.pid = server.pid
    if (this.sampler !== undefined) {
      // The crashed process's figures carry over: its VmHWM is gone with it, its samples are not.
      this.sampler.stop()
      this.peakHwmKb = Math.max(this.peakHwmKb, this.sampler.peakKb)
      this.carriedPhasePeakKb = Math.max(this.carriedPhasePeakKb, this.sampler.phasePeakKb)
    }
    this.sampler = new RssSampler(server.pid, 100).start()
    this.post({ type: 'origin', origin: server.origin })
    server.child.once('exit', (code, signal) => {
      if (this.stopping || this.server !== server) return
      const crash = { exit: signal ?? String(code), output: server.output().split('\n').slice(-12).join('\n') }
      this.crashes.push(crash)
      this.sampler?.stop()
      this.post({ type: 'origin', origin: null })
      this.onCrash(crash)
      const launching = this.launch()
      this.restarting = launching
      // A failed start stays in `restarting`: whoever waits in ensureUp() gets the error.
      launching.then(() => { this.restarting = undefined }, () => {})
    })
  }

  private post (command: ProbeCommand): void {
    this.probe.postMessage(command)
  }

  private readHwm (): void {
    if (this.pid === 0) return
    const kb = statusKb(this.pid, 'VmHWM')
    if (kb !== null && kb > this.peakHwmKb) this.peakHwmKb = kb
  }

  /** Waits for a restart in progress (after a crash). */
  async ensureUp (): Promise<void> {
    while (this.restarting !== undefined) await this.restarting
  }

  /** Starts a new phase of RSS sampling. */
  startPhase (): void {
    this.carriedPhasePeakKb = 0
    this.sampler?.startPhase()
  }

  /** Highest sampled VmRSS since startPhase(), kB, across restarts. */
  phasePeakKb (): number {
    this.sampler?.sample()
    return Math.max(this.carriedPhasePeakKb, this.sampler?.phasePeakKb ?? 0)
  }

  /** Highest memory of the run so far, kB: VmHWM read, or VmRSS sampled. */
  peakKb (): number {
    this.readHwm()
    return Math.max(this.peakHwmKb, this.sampler?.peakKb ?? 0)
  }

  /** Longest event-loop delay the server measured in itself between two epoch times, ms. */
  loopDelayMs (from: number, to: number): number {
    let text = ''
    try {
      text = readFileSync(this.loopFile, 'utf8')
    } catch {
      return 0
    }
    let max = 0
    for (const line of text.split('\n')) {
      const [at, ms] = line.split(' ').map(Number)
      if (this.startups.some(([launched, ready]) => at >= launched && at <= ready)) continue
      if (at >= from && at <= to && ms > max) max = ms
    }
    return max
  }

  /** The server's database file. */
  get dbFile (): string {
    return join(this.dir, 'sandbox.db')
  }

  /**
   * A fresh server on the same database file (planned, not a crash): the next phase's memory and
   * event-loop figures are then its own, not what the last phase left behind. `between` runs while
   * no server holds the file (a phase preparing data the API cannot make quickly).
   */
  async restart (between?: (dbFile: string) => Promise<void>): Promise<void> {
    await this.ensureUp()
    const old = this.server
    this.readHwm()
    this.server = undefined // its exit is expected
    this.post({ type: 'origin', origin: null })
    await old?.stop(5_000)
    if (between !== undefined) await between(this.dbFile)
    await this.launch()
  }

  /** The VmRSS of the server right now, kB (null while it is down). */
  rssKb (): number | null {
    return statusKb(this.pid, 'VmRSS')
  }

  /** Stops the server (SIGTERM) and the probe, reads the final VmHWM, removes the database folder. */
  async stop (): Promise<number | null> {
    await this.ensureUp()
    this.readHwm()
    this.stopping = true
    if (this.hwmTimer !== undefined) clearInterval(this.hwmTimer)
    this.sampler?.stop()
    this.post({ type: 'stop' })
    const code = (await this.server?.stop()) ?? null
    await this.probe.terminate()
    rmSync(this.dir, { recursive: true, force: true })
    return code
  }
}
