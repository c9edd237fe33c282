import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { freePort } from '../../scripts/free-port.js'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'

/**
 * The parallel target of worlds: 8 worker processes x 50 tests against ONE sandbox process
 * (`serve`, the bundled bin), each test in a world of its own: writes (log notes, a new client), a
 * fault rule, a clock change and a reset, each checked exactly (write counts and kinds, the new
 * client's number, the fault's own answer, the Date and write times of its own clock, the journal's
 * entries one by one). Anything another worker did reaching a test's world fails it.
 */

const WORKERS = 8
const TESTS = 50
const WORKER = join(import.meta.dirname, 'parallel-worker.mjs')
const BUNDLED_CLI = join(ROOT, 'dist', 'bundle', 'cli.js')

interface WorkerResult { worker: number, tests: number, failures: Array<{ test: number, message: string }>, createMs: number[], ms: number }

/** `agency-sandbox serve` as a process of its own, once healthy. */
async function serve (t: Test): Promise<string> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.NODE_OPTIONS // the sandbox runs as partners run it, without the test runner's hooks
  delete env.NODE_V8_COVERAGE
  const child = spawn(process.execPath, [BUNDLED_CLI, 'serve', '--port', String(port), '--db', ':memory:', '--log-level', 'warn'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  t.teardown(async () => {
    child.kill('SIGTERM')
    await exited
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`${url}/_sandbox/health`)).ok) return url
    } catch {}
    if (attempt > 300) throw new Error('the sandbox did not answer its health check')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Runs one worker process to its end; its results. */
function worker (url: string, index: number, tests: number, sharedWorld?: unknown): Promise<WorkerResult> {
  const args = [WORKER, url, String(index), String(tests), ...(sharedWorld === undefined ? [] : [JSON.stringify(sharedWorld)])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  return new Promise((resolve, reject) => child.once('exit', (code) => {
    if (code !== 0) reject(new Error(`worker ${index} exited with ${code}: ${out}`))
    else resolve(JSON.parse(out) as WorkerResult)
  }))
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

t.test(`${WORKERS} worker processes x ${TESTS} tests against one sandbox process, each test in its own world`, async (t) => {
  const url = await serve(t)
  const started = performance.now()
  const results = await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(url, i, TESTS)))
  const seconds = (performance.now() - started) / 1000

  const failures = results.flatMap((r) => r.failures.map((f) => `worker ${r.worker} test ${f.test}: ${f.message}`))
  t.equal(results.reduce((n, r) => n + r.tests, 0), WORKERS * TESTS, 'every test ran')
  t.same(failures, [], 'no test saw another worker\'s writes, faults, clock or journal')
  const worlds = await (await fetch(`${url}/_sandbox/worlds`)).json() as { worlds: Array<{ id: string }> }
  t.same(worlds.worlds.map((w) => w.id), ['default'], 'every world was deleted after its test')
  const create = results.flatMap((r) => r.createMs)
  t.comment(`${WORKERS * TESTS} tests (${WORKERS} processes x ${TESTS}) against one sandbox in ${seconds.toFixed(1)} s, ` +
    `${failures.length} failures; creating a world under this load: median ${percentile(create, 0.5).toFixed(1)} ms, p95 ${percentile(create, 0.95).toFixed(1)} ms`)
})

t.test('the checks notice another worker in the same world', async (t) => {
  const url = await serve(t)
  const res = await fetch(`${url}/_sandbox/worlds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"shared"}' })
  const shared = await res.json()
  // one after the other, so the outcome does not hang on timing: the second finds the first's traces
  const first = await worker(url, 0, 1, shared)
  t.same(first.failures, [], 'alone in the world, the first worker passes')
  const second = await worker(url, 1, 1, shared)
  t.equal(second.failures.length, 1, 'the second worker fails')
  t.match(second.failures[0]?.message, /a fresh world has no writes: expected \[\], got \[\{.*"kind":"client"/, "on the first worker's write")
})
