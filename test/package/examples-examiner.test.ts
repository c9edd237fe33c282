import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { RULE_IDS, type Report } from '../../src/schemas/examiner.js'
import { serveProcess } from '../helpers/process.js'

/**
 * The examiner's two reference clients (examples/node/good-citizen.mjs and careless.mjs), each
 * run as a process against a real sandbox process while the simulator changes agency 1001 and
 * fault rules answer a 429 with Retry-After, a 503 and a 403. The good citizen passes with no
 * finding at all; the careless client fails with the rules its habits break.
 */

async function control (url: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}/_sandbox${path}`, {
    method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  })
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`)
  return res.json()
}

/** The hostile day: data changing under the client, and the answers a live service gives now and then. */
const FAULTS = [
  { match: { method: 'GET', path: '/vendor/agency/1001/clients' }, effect: { status: 429, headers: { 'retry-after': '1' } }, times: 1 },
  { match: { method: 'POST', path: '/vendor/agency/1001/client/*/log' }, effect: { status: 503 }, times: 1 },
  { match: { method: 'GET', path: '/vendor/agency/1002/offices' }, effect: { status: 403 }, times: 1 }
]

interface Run { code: number | null, report: Report, stderr: string, faults: { id: string, hits: number }[], changes: number }

async function runExample (t: Test, script: string): Promise<Run> {
  const served = await serveProcess({ SANDBOX_DB: ':memory:' })
  t.teardown(() => { served.child.kill('SIGTERM') })
  // 10 changes a second to agency 1001: people, contacts, policies, statuses, new clients, deletions
  await control(served.url, 'POST', '/simulator', { ratePerMinute: 600, seed: 3, agencies: [1001] })
  for (const rule of FAULTS) await control(served.url, 'POST', '/faults', rule)

  const child = spawn(process.execPath, [join(ROOT, 'examples', 'node', script), '--json'], {
    env: { ...process.env, AGENCY_SANDBOX_URL: served.url }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000)
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  clearTimeout(timer)
  let report: Report
  try {
    report = JSON.parse(stdout) as Report
  } catch {
    throw new Error(`${script} printed no report (exit ${code}):\n${stderr}\n${stdout.slice(0, 2000)}`)
  }
  const faults = await control(served.url, 'GET', '/faults') as { id: string, hits: number }[]
  const { changes } = await control(served.url, 'GET', '/simulator') as { changes: number }
  return { code, report, stderr, faults, changes }
}

const summary = (report: Report) => report.findings.map((f) => `${f.severity} ${f.rule} ×${f.count}: ${f.message}`).join('\n')

t.test('the good citizen passes with no finding, through faults and changing data', async (t) => {
  const { code, report, stderr, faults, changes } = await runExample(t, 'good-citizen.mjs')
  t.ok(changes > 0, `the simulator made ${changes} changes during the run`)
  t.same(faults.map((f) => f.hits), [1, 1, 1], 'the 429, the 503 and the 403 were each answered once')
  t.equal(report.verdict, 'pass', summary(report) || stderr)
  t.same(report.findings, [], 'no finding, not even an info one')
  t.equal(code, 0, 'the run exits 0')
  t.same(report.coverage.checklist.map((c) => [c.item, c.exercised]), [['202-handled', true], ['429-handled', true], ['403-handled', true]],
    'every go-live checklist item exercised')
  const declared = report.sync.filter((s) => s.source === 'declared').map((s) => s.agencyId).sort()
  t.same(declared, [1001, 1002, 1004], 'it declared its mirror of each agency')
  for (const check of report.sync) {
    t.same([check.missing.count, check.stale.count, check.deletedKept.count, check.unknown.count], [0, 0, 0, 0],
      `${check.source} sync of ${check.agencyId} is complete and current`)
  }
  t.match(stderr, /429, waiting 1000 ms as Retry-After asks/)
  t.match(stderr, /saved for when the agency connects/)
})

/** Rules the careless client breaks whatever the timing (its habits, not luck, break them). */
const CARELESS_RULES = [
  'retry-after-ignored', 'write-resent-after-202', 'write-retried-new-refid', 'n-plus-one-reads', 'batch-over-limit',
  'full-sync-repeated', 'deleted-never-synced', 'agency-not-listed', 'unknown-fields', 'mirror-missing', 'sync-missed'
]

t.test('the careless client fails with the rules it breaks', async (t) => {
  t.same(CARELESS_RULES.filter((r) => !RULE_IDS.includes(r)), [], 'the expected rules are catalogued')
  const { code, report, stderr, faults } = await runExample(t, 'careless.mjs')
  t.equal(report.verdict, 'fail', summary(report) || stderr)
  t.equal(code, 1, 'the run exits 1 on a fail verdict')
  t.same(faults.map((f) => f.hits), [1, 1, 0], 'it met the 429 and the 503 (it never reads offices)')
  const found = report.findings.map((f) => f.rule)
  t.same(CARELESS_RULES.filter((r) => !found.includes(r)), [], `every expected rule is found:\n${summary(report)}`)
  const finding = (rule: string) => report.findings.find((f) => f.rule === rule)!
  t.match(finding('unknown-fields').message, 'pageSize', 'the ignored parameter is named')
  t.match(finding('retry-after-ignored').examples[0], { method: 'GET', path: '/vendor/agency/1001/clients', status: 200 })
  t.match(finding('write-resent-after-202').examples[0], { method: 'POST', path: /^\/vendor\/agency\/1004\/client\/\d+\/log$/, status: 202 })
  t.match(finding('batch-over-limit').examples[0], { method: 'POST', path: '/vendor/agency/1001/clients', status: 400 })
  t.equal(finding('full-sync-repeated').count, 6, 'two repeated full listings of each of three agencies')
  t.same(report.coverage.checklist.map((c) => c.exercised), [false, false, false], 'it handled none of the checklist answers')
})
