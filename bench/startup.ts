import type { ServerProcess } from './processes.js'
import { median } from './stats.js'

/**
 * Start-up to healthy: the bundled bin (what `agency-sandbox`, `npm start` and the image run), a
 * bare Fastify server (the machine's floor: the ceiling with nothing to load but one answer), and
 * the unbundled dist/src/cli.js for reference, in turns, so that a change in the machine's load
 * weighs on the three alike.
 */

export type StartupSide = 'bundle' | 'bare' | 'unbundled'

/** Spawn to healthy over the benchmark's database, milliseconds. */
export interface StartupResult {
  /** The bundled bin, dist/bundle/cli.js: what `agency-sandbox`, `npm start` and the image run. */
  samplesMs: number[]
  medianMs: number
  /** A bare Fastify server (the ceiling with one answer): the floor of the machine. */
  bareSamplesMs?: number[]
  bareMedianMs?: number
  /** The unbundled dist/src/cli.js, for reference. */
  unbundledSamplesMs?: number[]
  unbundledMedianMs?: number
  /** CPU time (user + system) each side used until healthy, by round: less swayed by other load than the wall time. */
  cpuSamplesMs?: Record<StartupSide, number[]>
  /** Set when `--startup` measured it apart from the rest of the results. */
  measured?: { date: string; command: string; loadAverage: { before: number[]; after: number[] } }
}

/** Start-up may take this much longer than a bare Fastify server's. */
export const STARTUP_OVER_FLOOR_MS = 250

/** Starts one side's server and resolves once it answers its health URL. */
export type Starter = () => Promise<ServerProcess>

/** The order of each round. */
const ORDER: readonly StartupSide[] = ['bundle', 'bare', 'unbundled']

export async function measureStartups (
  runs: number, start: Record<StartupSide, Starter>, log: (line: string) => void
): Promise<StartupResult | null> {
  if (runs === 0) return null
  const samples: Record<StartupSide, number[]> = { bundle: [], bare: [], unbundled: [] }
  const cpu: Record<StartupSide, number[]> = { bundle: [], bare: [], unbundled: [] }
  for (let i = 0; i < runs; i++) {
    for (const side of ORDER) {
      const server = await start[side]()
      samples[side].push(server.startupMs)
      cpu[side].push(server.startupCpuMs)
      const code = await server.stop()
      // the bare server's exit code says nothing about the sandbox; a sandbox that fails to stop cleanly does
      if (side !== 'bare' && code !== 0) throw new Error(`the ${side} sandbox exited with ${code} on SIGTERM:\n${server.output()}`)
    }
    const each = (side: StartupSide) => `${samples[side][i].toFixed(0)} ms (CPU ${cpu[side][i].toFixed(0)} ms)`
    log(`start-up ${i + 1}/${runs}: bundle ${each('bundle')}, bare Fastify ${each('bare')}, dist/src ${each('unbundled')}`)
  }
  return {
    samplesMs: samples.bundle,
    medianMs: median(samples.bundle),
    bareSamplesMs: samples.bare,
    bareMedianMs: median(samples.bare),
    unbundledSamplesMs: samples.unbundled,
    unbundledMedianMs: median(samples.unbundled),
    cpuSamplesMs: cpu
  }
}

/** The start-up rows of the targets table: target, measured (null: not measured), met. */
export function startupTargets (up: StartupResult | null, clients: number): [string, string | null, boolean | null][] {
  const floor = up?.bareMedianMs
  return [
    [
      `start-up to healthy with ${clients.toLocaleString('en-US')} clients: under 500 ms`,
      up === null ? null : `${up.medianMs.toFixed(0)} ms (median of ${up.samplesMs.length})`,
      up === null ? null : up.medianMs < 500
    ],
    [
      `start-up within ${STARTUP_OVER_FLOOR_MS} ms of a bare Fastify server started the same way`,
      up === null || floor === undefined
        ? null
        : `${(up.medianMs - floor).toFixed(0)} ms over it: bundle ${up.medianMs.toFixed(0)} ms, bare Fastify ${floor.toFixed(0)} ms` +
          (up.unbundledMedianMs === undefined ? '' : ` (unbundled dist/src: ${up.unbundledMedianMs.toFixed(0)} ms, ${(up.unbundledMedianMs - floor).toFixed(0)} ms over it)`),
      up === null || floor === undefined ? null : up.medianMs - floor <= STARTUP_OVER_FLOOR_MS
    ]
  ]
}

const samples = (values: number[]) => values.map((v) => v.toFixed(0)).join(', ')

/** The start-up bullet of RESULTS.md: each side's median and samples, and when it was measured apart. */
export function startupLine (up: StartupResult): string {
  const when = up.measured === undefined
    ? ''
    : ` Measured apart from the rest on ${up.measured.date} (\`${up.measured.command}\`), load average (1, 5, 15 min) ` +
      `${up.measured.loadAverage.before.join(', ')} at the start, ${up.measured.loadAverage.after.join(', ')} at the end.`
  return '- Start-up, spawn to the first 200 on `/_sandbox/health` (polled every 5 ms), in rounds of three: the bundled bin ' +
    `(\`node dist/bundle/cli.js serve\`, what \`agency-sandbox\` and the image run): median **${up.medianMs.toFixed(0)} ms** of ${samples(up.samplesMs)} ms.` +
    (up.bareSamplesMs === undefined || up.bareMedianMs === undefined
      ? ''
      : ` A bare Fastify server (\`bench/ceiling.ts\` with one answer to load), the floor of this machine: median ${up.bareMedianMs.toFixed(0)} ms of ${samples(up.bareSamplesMs)} ms.`) +
    (up.unbundledSamplesMs === undefined || up.unbundledMedianMs === undefined
      ? ''
      : ` The unbundled \`node dist/src/cli.js serve\`: median ${up.unbundledMedianMs.toFixed(0)} ms of ${samples(up.unbundledSamplesMs)} ms.`) +
    (up.cpuSamplesMs === undefined
      ? ''
      : ` CPU time to healthy (user and system, less swayed by other work on the machine), medians: bundle ${median(up.cpuSamplesMs.bundle).toFixed(0)} ms, ` +
        `bare Fastify ${median(up.cpuSamplesMs.bare).toFixed(0)} ms, dist/src ${median(up.cpuSamplesMs.unbundled).toFixed(0)} ms.`) +
    when
}
