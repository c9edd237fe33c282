import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT } from '../src/config.js'
import type { Budget } from './protocol.js'
import { SCENARIO_IDS, type ScenarioId, type ScenarioSizes } from './scenarios.js'

/** The options of `npm run bench` (bench/run.ts). */

export const HELP = `Usage: node dist/bench/run.js [options]

  --duration S      whole seconds of each round per server (default 5), after a warm-up of each
  --rounds N        rounds per scenario (default 5), the order alternating: sandbox then ceiling,
                    ceiling then sandbox, ...; each figure is the median over the rounds
  --connections N   connections of every scenario's closed loop (default: 32 for reads, 10 for
                    writes); the full sync and the journal rounds use 10
  --quick           smoke run: 1 agency x 2,000 clients in a temp dir, a few hundred requests per scenario
  --out DIR         where RESULTS.md and results.json go (default bench/; a temp dir with --quick,
                    bench/data/partial with --only or --profile)
  --fresh           rebuild the fixture and the database
  --only IDS        comma-separated scenarios (${SCENARIO_IDS.join(', ')}); skips start-up and journal
  --startup         only the start-up phase; updates the start-up figures of the results in --out
                    (default bench/), which a full run wrote, and leaves the rest as it was
  --startup-runs N  rounds of start-ups, each the bundle, a bare Fastify server, then dist/src
                    (default 5; 1 with --quick)
  --profile         run the sandbox and the ceiling under node --cpu-prof and report where their time goes
  --help            this text`

export interface Settings {
  quick: boolean
  clients: number
  /** Connections of every scenario, instead of its own. */
  connections: number | null
  /** Connections of the full sync's second pass and of the journal rounds. */
  syncConnections: number
  rounds: number
  measure: Budget
  /** None in the quick smoke run. */
  warmup: Budget | null
  sizes: ScenarioSizes
  /** Load of the one-connection latency run on the sandbox. */
  serviceTime: Budget
  startupRuns: number
  /** Only the start-up phase, merged into the results already in `out`. */
  startupOnly: boolean
  journalRequests: number
  scenarios: ScenarioId[]
  partial: boolean
  profile: boolean
  fresh: boolean
  out: string
  dataDir: string
  tempDir: string
}

export class UsageError extends Error {}

function positive (name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number, got '${value}'`)
  return n
}

/** The settings of a command line; null for --help. */
export function settingsOf (argv: string[]): Settings | null {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        duration: { type: 'string' },
        connections: { type: 'string' },
        rounds: { type: 'string' },
        quick: { type: 'boolean' },
        out: { type: 'string' },
        fresh: { type: 'boolean' },
        only: { type: 'string' },
        startup: { type: 'boolean' },
        'startup-runs': { type: 'string' },
        profile: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' }
      },
      strict: true
    }).values
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
  if (parsed.help === true) return null
  const quick = parsed.quick === true
  const scenarios = parsed.only === undefined ? [...SCENARIO_IDS] : parsed.only.split(',').map((s) => s.trim())
  const unknown = scenarios.filter((s) => !(SCENARIO_IDS as readonly string[]).includes(s))
  if (unknown.length > 0) throw new UsageError(`unknown scenario ${unknown.join(', ')}; use ${SCENARIO_IDS.join(', ')}`)
  const startupOnly = parsed.startup === true
  if (startupOnly && (parsed.only !== undefined || parsed.profile === true)) throw new UsageError('--startup runs no scenario: leave out --only and --profile')
  const partial = parsed.only !== undefined
  const profile = parsed.profile === true
  const tempDir = mkdtempSync(join(tmpdir(), 'agency-bench-'))
  const duration = Math.max(1, Math.round(positive('duration', parsed.duration, 5)))
  const defaultOut = quick ? tempDir : partial || profile ? join(ROOT, 'bench', 'data', 'partial') : join(ROOT, 'bench')
  return {
    quick,
    clients: quick ? 2000 : 100_000,
    connections: parsed.connections === undefined ? null : Math.round(positive('connections', parsed.connections, 10)),
    syncConnections: 10,
    // five: a round the host's other work slowed (one scenario's rounds ranged from 0.4 to 1.3 in a run) moves a median of three
    rounds: Math.round(positive('rounds', parsed.rounds, quick ? 2 : 5)),
    measure: quick && parsed.duration === undefined ? { amount: 300 } : { seconds: duration },
    warmup: quick ? null : { seconds: 2 },
    serviceTime: quick ? { amount: 50 } : { seconds: Math.min(3, duration) },
    sizes: quick ? { rotate: 50, batches: 3, writeClients: 10, rateSeconds: 2 } : { rotate: 1000, batches: 20, writeClients: 100, rateSeconds: 5 },
    startupRuns: partial ? 0 : Math.round(positive('startup-runs', parsed['startup-runs'], quick ? 1 : 5)),
    startupOnly,
    journalRequests: partial ? 0 : quick ? 2000 : 100_000,
    scenarios: scenarios as ScenarioId[],
    partial,
    profile,
    fresh: parsed.fresh === true,
    out: resolve(parsed.out ?? defaultOut),
    dataDir: quick ? tempDir : join(ROOT, 'bench', 'data'),
    tempDir
  }
}
