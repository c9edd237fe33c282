/**
 * The attack: replays every class of hostile traffic the sandbox must survive against a real
 * server process on 127.0.0.1, phase by phase, and writes bench/ATTACK.md.
 *
 *   node dist/bench/attack.js [--short] [--seed 1] [--out bench/ATTACK.md] [--only phase,phase]
 *
 * Phases: oversized control bodies, deep nesting, overflowing numbers, the smaller parser cases,
 * journal memory, glob CPU, docs traversal, attachment file names, the create-client budget,
 * web pages against the control plane (cross-site calls, rebound host names), numbers and times
 * past their range, the console's header sent by a partner, hostile attachment metadata in
 * fixtures, work at its caps (a simulator catch-up at the largest advance, reports over a session
 * at its cap, mirrors at their caps, fixture bodies at their cap, the state of a world of 100,000
 * clients) and requests whose answers never
 * arrive, then the classes that held before (cross-access matrix, timing, gzip bombs, slow headers,
 * identical writes at once, resets under traffic, SIGKILL during writes), then worlds that must
 * keep to their bounds and to themselves (growth past a world's maxBytes until 507, the fixture's
 * Client Secret on a created world, idle readers of a large world's state document beside another
 * world's work, requests in flight across a delete, NUL and lone surrogates in names and fault
 * rules; full run only), and last the importer against a hostile upstream (its own fake instance;
 * full run only). Every loop is capped in count, every phase in time, and the whole run by a deadline (10 minutes; 40 s with --short): a phase gets its share of the time left.
 *
 * Prints one summary line (`attack: N requests, C crashes, F 5xx, L leaks, W lost writes, peak RSS
 * X MB, longest block Y ms, K failed checks`) and exits 1 when a target is missed: a crash, a 5xx,
 * a leak, a lost write, peak RSS >= 200 MB, an event-loop block >= 100 ms, or a failed check.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { ROOT } from '../src/config.js'
import { Phase, Run, sleep, type Options, type PhaseSpec } from './attack/context.js'
import { BOUNDED_PHASES } from './attack/bounded.js'
import { CONTROL_PHASES } from './attack/control-plane.js'
import { EDGE_PHASES } from './attack/edges.js'
import { HELD_PHASES } from './attack/held.js'
import { hostileUpstream } from './attack/hostile-upstream.js'
import { JOURNAL_PHASES } from './attack/journal.js'
import { LIMIT_PHASES } from './attack/limits.js'
import { loadAverage } from './processes.js'
import { report, RSS_TARGET_MB, summarize, summaryLine, targets } from './attack/report.js'
import { CLI, Target } from './attack/target.js'
import { rng } from './attack/world.js'
import { WORLD_BOUND_PHASES } from './attack/world-bounds.js'
import { WRITE_PHASES } from './attack/writes.js'

const PHASES: PhaseSpec[] = [...LIMIT_PHASES, ...JOURNAL_PHASES, ...EDGE_PHASES, ...CONTROL_PHASES, ...BOUNDED_PHASES, ...HELD_PHASES, ...WRITE_PHASES, ...WORLD_BOUND_PHASES, hostileUpstream]

/** The whole run's deadline, milliseconds. */
const DEADLINE_MS = { short: 40_000, full: 10 * 60_000 }

function usage (message: string): never {
  console.error(`${message}\nUsage: node dist/bench/attack.js [--short] [--seed N] [--out FILE] [--only ${PHASES.map((p) => p.name).join(',')}]`)
  process.exit(2)
}

function parseOptions (argv: string[]): Options {
  const options: Options = { short: false, seed: 1, out: join(ROOT, 'bench', 'ATTACK.md'), only: undefined }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => argv[++i] ?? usage(`${arg} needs a value`)
    if (arg === '--short') options.short = true
    else if (arg === '--seed') {
      options.seed = Number(value())
      if (!Number.isInteger(options.seed)) usage('--seed needs a whole number')
    } else if (arg === '--out') options.out = resolve(value())
    else if (arg === '--only') {
      options.only = value().split(',')
      const unknown = options.only.filter((name) => !PHASES.some((p) => p.name === name))
      if (unknown.length > 0) usage(`unknown phase ${unknown.join(', ')}`)
    } else usage(`unknown option ${arg}`)
  }
  return options
}

async function main (): Promise<void> {
  const options = parseOptions(process.argv.slice(2))
  if (!existsSync(CLI)) usage(`${CLI} is missing: run npm run build first`)
  const started = performance.now()
  const loadAtStart = loadAverage()
  const target = await Target.start()
  const run = new Run(target, options, rng(options.seed), (options.short ? DEADLINE_MS.short : DEADLINE_MS.full) - (performance.now() - started))
  const restarts: string[] = []
  const chosen = PHASES.filter((p) => options.only === undefined || options.only.includes(p.name))
  const budgetOf = (spec: PhaseSpec) => (options.short ? spec.budgetMs.short : spec.budgetMs.full)
  try {
    for (const [i, spec] of chosen.entries()) {
      await target.ensureUp()
      // Memory a phase left behind would be counted again by the next: over the target, start afresh.
      const rssAtStart = target.rssKb() ?? 0
      if (rssAtStart >= RSS_TARGET_MB * 1024 && budgetOf(spec) > 0) {
        run.phase = new Phase('restart', 'Planned restart', 60_000) // its probe samples belong to no phase
        await target.restart()
        restarts.push(`before ${spec.name} (RSS ${(rssAtStart / 1024).toFixed(0)} MB)`)
      }
      // Its own budget, or its share of the time left when the phases before it ran long: every phase runs.
      const rest = chosen.slice(i).reduce((n, p) => n + budgetOf(p), 0)
      const budget = budgetOf(spec) === 0 ? 0 : Math.min(budgetOf(spec), Math.floor((run.timeLeft() * budgetOf(spec)) / rest))
      const phase = new Phase(spec.name, spec.title, budget)
      phase.ownServers = spec.ownServers === true
      run.phase = phase
      run.phases.push(phase)
      if (budgetOf(spec) === 0) {
        phase.status = 'full run only'
        console.log(`${spec.name}: left out of the short run`)
        continue
      }
      if (budget < 500) {
        phase.status = 'skipped'
        console.log(`${spec.name}: skipped (the run's deadline has passed)`)
        continue
      }
      target.startPhase()
      const t0 = performance.now()
      const from = Date.now()
      try {
        await spec.run(run)
      } catch (e) {
        phase.check('the phase ran to its end', false, (e as Error).stack?.split('\n').slice(0, 3).join(' ') ?? String(e))
      }
      // Requests the phase gave up on may still keep the server busy: that time is the phase's, not the next one's.
      await run.settle()
      await sleep(300) // the probe's and the loop monitor's last samples of this phase
      phase.seconds = (performance.now() - t0) / 1000
      phase.longestLoopDelayMs = target.loopDelayMs(from, Date.now())
      phase.peakRssKb = target.phasePeakKb()
      phase.endRssKb = target.rssKb() ?? 0
      console.log(`${spec.name}: ${phase.tried} requests, ${phase.fiveXX} 5xx, ${phase.crashes} crashes, ${phase.leaks} leaks, ${phase.lostWrites} lost, ` +
        `longest probe ${phase.longestProbeMs.toFixed(0)} ms (loop delay ${phase.longestLoopDelayMs.toFixed(0)} ms), RSS ${(phase.peakRssKb / 1024).toFixed(0)} MB, ${phase.failedChecks} failed checks, ${phase.seconds.toFixed(1)} s${phase.status === 'ran' ? '' : ` (${phase.status})`}`)
    }
  } catch (e) {
    // No server to attack any more (it cannot be started again): the report says so, and the run fails.
    if (!run.phases.includes(run.phase)) run.phases.push(run.phase)
    run.phase.status = 'cut short'
    run.phase.check('a server to attack (started again after a crash or a planned restart)', false, String((e as Error).message).slice(0, 300))
    console.error(e)
  }
  const peakKb = target.peakKb()
  await target.stop().catch((e: unknown) => console.error('stopping the server:', e))
  const summary = summarize(run.phases, target.crashes.length, peakKb, run.timingDifferenceMs, (performance.now() - started) / 1000)
  const args = [...(options.short ? ['--short'] : []), ...(options.seed === 1 ? [] : ['--seed', String(options.seed)]), ...(options.only === undefined ? [] : ['--only', options.only.join(',')])]
  const command = `npm run attack${args.length === 0 ? '' : ` -- ${args.join(' ')}`}`
  writeFileSync(options.out, report(run.phases, summary, options, command, { start: loadAtStart, end: loadAverage() }, restarts) + '\n')
  console.log(summaryLine(summary))
  const missed = targets(summary).filter((t) => !t.held)
  for (const t of missed) console.log(`  missed: ${t.figure}: ${t.measured} (target ${t.target})`)
  console.log(`report: ${options.out}`)
  process.exit(missed.length > 0 ? 1 : 0)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
