/**
 * The vendor API's tests, the control plane's, and those of created worlds and tenants, again,
 * each app in hosted mode over a PostgreSQL database of its own (test/helpers/app.ts reads
 * SANDBOX_TEST_DATABASE_URL): the same assertions hold over either store. The tests of the SQLite
 * file itself skip themselves.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import pg from 'pg'
import { ROOT } from '../../src/config.js'
import { postgresBinaries, startScratchPostgres } from '../../scripts/scratch-postgres.js'

const FILES = [
  'test/app/auth.test.ts',
  'test/app/console-header.test.ts',
  'test/app/control-guard.test.ts',
  'test/domain/examiner/coverage.test.ts',
  'test/domain/examiner/evidence.test.ts',
  'test/domain/examiner/kept-reports.test.ts',
  'test/domain/examiner/rules.test.ts',
  'test/domain/examiner/sessions.test.ts',
  'test/domain/examiner/signed-reports.test.ts',
  'test/domain/examiner/sync.test.ts',
  'test/app/errors.test.ts',
  'test/app/limits.test.ts',
  'test/fixture/attachment-writes.test.ts',
  'test/http/content-disposition.test.ts',
  'test/http/date-header.test.ts',
  'test/read-model/batch-answers.test.ts',
  'test/read-model/invalidation.test.ts',
  'test/fidelity/created-clients.test.ts',
  'test/fidelity/dotnet-binding.test.ts',
  'test/fidelity/observed-live.test.ts',
  'test/fidelity/our-choice.test.ts',
  'test/fidelity/real-clients.test.ts',
  'test/fidelity/round-trip.test.ts',
  'test/fidelity/spec.test.ts',
  'test/fidelity/typed-answers.test.ts',
  'test/plugins/openapi-answers.test.ts',
  'test/public/cross-site.test.ts',
  'test/reliability/isolation.test.ts',
  'test/reliability/world-isolation.test.ts',
  'test/routes/agencies.test.ts',
  'test/routes/clients.test.ts',
  'test/routes/control.test.ts',
  'test/routes/control-inputs.test.ts',
  'test/routes/control-ranges.test.ts',
  'test/routes/lost-answers.test.ts',
  'test/routes/unstorable-text.test.ts',
  'test/routes/writes.test.ts',
  'test/versions/versions.test.ts',
  'test/worlds/bounds.test.ts',
  'test/worlds/deleted-in-flight.test.ts',
  'test/worlds/reset-swap.test.ts',
  'test/worlds/secrets.test.ts',
  'test/worlds/state-document.test.ts',
  'test/worlds/tenants.test.ts',
  'test/worlds/worlds.test.ts'
]

// A run of its own beside the rest of the suite: about 6 minutes on a 2-core machine, and twice
// that or more on a slower or busier one. Each of its files may take longer than the default
// file timeout (.taprc) too: the fast-check properties over PostgreSQL write a snapshot per reset.
const RUN_TIMEOUT_MS = 1_800_000
const FILE_TIMEOUT_SECONDS = 900
t.setTimeout(RUN_TIMEOUT_MS)

const skip = postgresBinaries() === undefined ? 'PostgreSQL is not installed (.ci/run installs Debian\'s postgresql)' : false

t.test('the vendor API\'s tests pass over PostgreSQL', { timeout: RUN_TIMEOUT_MS, skip }, async (t) => {
  const postgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  // the inner run is a tap run of its own, not a child of this one
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TAP') && !name.startsWith('_TAPJS')))
  const { code, output } = await new Promise<{ code: number | null, output: string }>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs'), '--reporter=terse', '--disable-coverage', `--timeout=${FILE_TIMEOUT_SECONDS}`, ...FILES], {
      cwd: ROOT,
      env: { ...env, SANDBOX_TEST_DATABASE_URL: postgres.url },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    // a run cut short by the timeout above does not go on loading the machine
    t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM') })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-20_000) })
    child.stderr.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-20_000) })
    child.on('exit', (exitCode) => resolve({ code: exitCode, output }))
  })
  const summary = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(output)
  t.ok(summary, `the inner run printed its summary${summary === null ? `:\n${output.slice(-3000)}` : ''}`)
  if (summary !== null) {
    t.comment(`over PostgreSQL: ${summary[2]} of ${summary[1]} assertions passed`)
    t.ok(Number(summary[1]) > 1000, `${summary[1]} assertions ran`)
    t.equal(Number(summary[3] ?? 0), 0, `none failed${summary[3] === undefined ? '' : `:\n${output.slice(-6000)}`}`)
  }
  t.equal(code, 0, 'the inner run exited 0')
  const admin = new pg.Client({ connectionString: postgres.url })
  await admin.connect()
  const apps = await admin.query<{ n: string }>('SELECT count(*) AS n FROM hosted_test_apps').catch(() => ({ rows: [{ n: '0' }] }))
  await admin.end()
  t.ok(Number(apps.rows[0].n) > 50, `${apps.rows[0].n} apps ran over a PostgreSQL database of their own`)
})
