import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'

/**
 * The benchmark is a script with a report, not a timed test; this smoke run (tiny data, a few
 * hundred requests per scenario) only keeps the script from rotting. `npm test` builds first.
 */

const RUN = join(ROOT, 'dist', 'bench', 'run.js')
const TIMEOUT_MS = 200_000 // the quick run takes about a minute alone; CI runs two test files at a time
const SCENARIOS = ['get-client', 'get-client-all', 'batch-200', 'changed-all', 'changed-recent', 'search-policy', 'log-note', 'create-client']

interface SideJson { rps: number }
interface ResultsJson {
  scenarios: { id: string; sandbox: SideJson; ceiling: SideJson }[]
  sync?: { clients: number; batches: number; passes: { connections: number; rps: number; errors: number }[] }
  targets: { target: string; pass: boolean | null }[]
  startup: { samplesMs: number[]; bareSamplesMs: number[]; unbundledSamplesMs: number[]; measured?: { date: string } } | null
  date: string
}

function runBench (args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    const keep = (chunk: Buffer) => (output += chunk.toString('utf8'))
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

t.test('npm run bench -- --quick runs every scenario against the sandbox and the ceiling', { timeout: TIMEOUT_MS + 5000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'bench-smoke-'))
  t.teardown(() => rmSync(out, { recursive: true, force: true }))

  const { code, output } = await runBench(['--quick', '--out', out])
  t.equal(code, 0, 'exits 0', { output })
  if (code !== 0) return

  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as ResultsJson
  t.same(results.scenarios.map((s) => s.id), SCENARIOS, 'every scenario, in order')
  for (const s of results.scenarios) {
    t.ok(s.sandbox.rps > 0, `${s.id}: the sandbox answered (${s.sandbox.rps.toFixed(0)} req/s)`)
    t.ok(s.ceiling.rps > 0, `${s.id}: the ceiling answered (${s.ceiling.rps.toFixed(0)} req/s)`)
  }
  t.ok(results.targets.length > 0, 'the targets of issue 7 are evaluated')
  const sync = results.sync
  t.ok(sync !== undefined && sync.batches === Math.ceil(sync.clients / 200), 'the full sync asks every live client once, in batches of 200')
  t.same(sync?.passes.map((p) => p.connections), [1, 10], 'on one connection, then on ten')
  t.ok(sync?.passes.every((p) => p.rps > 0 && p.errors === 0), 'every batch of the sync answered')
  const report = readFileSync(join(out, 'RESULTS.md'), 'utf8')
  t.match(report, /\| get client, default includes \|/, 'RESULTS.md has the table')
  t.match(report, /### A first full sync/, 'and the full sync')
  t.notOk(existsSync(join(ROOT, 'bench', 'data', 'fixture-2k.json')), 'the quick run writes nothing under bench/')
  t.same([results.startup?.samplesMs.length, results.startup?.bareSamplesMs.length, results.startup?.unbundledSamplesMs.length], [1, 1, 1],
    'start-up: the bundle, a bare Fastify server and dist/src')

  // --startup replaces only the start-up figures, saying when they were taken
  const again = await runBench(['--quick', '--startup', '--startup-runs', '2', '--out', out])
  t.equal(again.code, 0, '--startup exits 0', { output: again.output })
  const updated = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as ResultsJson
  t.equal(updated.startup?.samplesMs.length, 2, 'two rounds')
  t.ok(updated.startup?.measured !== undefined, 'dated apart from the rest')
  t.equal(updated.date, results.date, 'the rest kept as it was')
  t.same(updated.scenarios.map((s) => s.sandbox.rps), results.scenarios.map((s) => s.sandbox.rps))
  t.match(readFileSync(join(out, 'RESULTS.md'), 'utf8'), /Measured apart from the rest/)
})
