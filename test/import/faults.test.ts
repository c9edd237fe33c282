import t from 'tap'
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CLI, runCli } from '../helpers/process.js'
import { control, firstDifference, importArgs, importTo, sandbox, tempDir } from '../helpers/import-instances.js'

/**
 * Faults injected into the upstream through its control API (POST /_sandbox/faults): the
 * import retries and still writes the same bytes; an import that gives up or is killed
 * resumes from its checkpoint to the same bytes.
 */

interface Rule { matched: number; hits: number; exhausted: boolean }

const BATCHES = { method: 'POST', path: '/vendor/agency/*/clients' }

t.test('429 with Retry-After, 5xx and dropped connections: the same fixture', async (t) => {
  const dir = tempDir(t)
  const upstream = await sandbox(t)
  const clean = join(dir, 'clean.json')
  await importTo(upstream.url, clean)
  for (const rule of [
    { match: { method: 'GET', path: '/vendor/agencies' }, effect: { status: 500 }, times: 1 },
    { match: { method: 'GET', path: '/vendor/agencies' }, effect: { status: 429, headers: { 'retry-after': '2' } }, times: 1 },
    { match: BATCHES, effect: { status: 429, headers: { 'retry-after': '1' } }, times: 2 },
    { match: { method: 'GET', path: '/vendor/agency/*/offices' }, effect: { status: 503 }, times: 2 },
    { match: { method: 'GET', path: '/vendor/agency/*/clients' }, effect: { drop: true }, every: 5, times: 3 },
    { match: BATCHES, effect: { drop: true }, every: 2, times: 2 }
  ]) await control(upstream.url, 'POST', '/faults', rule)
  const faulty = join(dir, 'faulty.json')
  const run = await importTo(upstream.url, faulty)
  t.equal(firstDifference(faulty, clean), undefined, 'the same bytes as without faults')
  t.match(run.stderr, /GET \/vendor\/agencies\?version=4\.0 answered 500; retry 1\/6/)
  t.match(run.stderr, /answered 429; retry 1\/6 in 1\.0 s/, 'waits the Retry-After (a 429 counts against --retries)')
  t.match(run.stderr, /offices\?version=4\.0 answered 503; retry 2\/6/)
  t.match(run.stderr, /connection failed/)
  t.match(run.stdout, /, 11 retries\)/, 'one retry per fault met')
  // the listing answered 500, then 429 with Retry-After: 2: the next try came 2 s later
  const listings = (await control<Array<{ time: string; status: number }>>(upstream.url, 'GET', '/requests?path=/vendor/agencies&limit=3'))
  t.same(listings.map((e) => e.status), [500, 429, 200])
  const waited = Date.parse(listings[2].time) - Date.parse(listings[1].time)
  t.ok(waited >= 1950, `waited ${waited} ms after Retry-After: 2`)
  const rules = await control<Rule[]>(upstream.url, 'GET', '/faults')
  t.ok(rules.every((r) => r.exhausted), 'every fault was met')
})

/** Starts an import as a process; resolves once its checkpoint records `steps` written steps. */
function startImport (args: string[], checkpoint: string, steps: number) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const reached = new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      // after the plan line, one line per step written (the header is step 0)
      const marks = existsSync(checkpoint) ? readFileSync(checkpoint, 'utf8').split('\n').filter((l) => l.startsWith('{"step"')).length : 0
      if (marks >= steps + 1) {
        clearInterval(timer)
        resolve()
      }
    }, 20)
    exited.then(() => {
      clearInterval(timer)
      reject(new Error(`import exited before step ${steps}: ${stderr}`))
    })
  })
  return { child, exited, reached, stderr: () => stderr }
}

t.test('an import that gives up, or is killed, resumes to the same bytes', async (t) => {
  const dir = tempDir(t)
  const upstream = await sandbox(t)
  const clean = join(dir, 'clean.json')
  await importTo(upstream.url, clean)
  // batch reads slowed down, so the test can act between them
  await control(upstream.url, 'POST', '/faults', { match: BATCHES, effect: { delayMs: 400 } })

  const out = join(dir, 'gave-up.json')
  const args = importArgs(upstream.url, out, ['--concurrency', '1', '--retries', '1'])
  const run = startImport(args, `${out}.checkpoint`, 1)
  await run.reached
  // the first matching rule applies: the delay goes, every batch read now loses its connection
  await control(upstream.url, 'DELETE', '/faults')
  await control(upstream.url, 'POST', '/faults', { match: BATCHES, effect: { drop: true } })
  t.equal(await run.exited, 1, 'gives up')
  t.match(run.stderr(), /gave up after 2 attempts/)
  t.match(run.stderr(), /run the same command with --resume/)
  t.notOk(existsSync(out), 'no fixture yet')
  t.ok(existsSync(`${out}.partial`) && existsSync(`${out}.checkpoint`))

  const other = await runCli([...args, '--resume', '--agencies', '1001'])
  t.equal(other.code, 1)
  t.match(other.stderr, /belongs to an import with other options/)

  // as a crash between writing a batch and recording it would leave them: bytes past the last
  // mark, and a mark cut short; the resume cuts the first and ignores the second
  appendFileSync(`${out}.partial`, ',\n{"clientNumber":1200,"details":{"id":"torn' + ' '.repeat(2_000_000))
  appendFileSync(`${out}.checkpoint`, '{"step":9,"byt')
  await control(upstream.url, 'DELETE', '/faults')
  const resumed = await runCli([...args, '--resume'])
  t.equal(resumed.code, 0, resumed.stderr)
  t.match(resumed.stdout, /resumed after [1-9]\d* clients/)
  t.equal(firstDifference(out, clean), undefined, 'the same bytes as an import that never stopped')
  t.notOk(existsSync(`${out}.partial`) || existsSync(`${out}.checkpoint`), 'the checkpoint is gone')

  await control(upstream.url, 'POST', '/faults', { match: BATCHES, effect: { delayMs: 400 } })
  const killedOut = join(dir, 'killed.json')
  const killedArgs = importArgs(upstream.url, killedOut, ['--concurrency', '1'])
  const killed = startImport(killedArgs, `${killedOut}.checkpoint`, 2)
  await killed.reached
  killed.child.kill('SIGKILL')
  await killed.exited
  await control(upstream.url, 'DELETE', '/faults')
  const again = await runCli([...killedArgs, '--resume'])
  t.equal(again.code, 0, again.stderr)
  t.match(again.stdout, /resumed after [1-9]\d* clients/)
  t.equal(firstDifference(killedOut, clean), undefined, 'killed midway, resumed: the same bytes')
})
