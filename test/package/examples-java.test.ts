import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.js'
import { startServer } from '../../src/server.js'
import { compileJava, javaExample, javaMissing, JUNIT_CONSOLE } from '../helpers/java.js'
import { CLI } from '../helpers/process.js'

/**
 * The Java example without containers: the HTTP-only JUnit 5 fixture (AgencySandbox and
 * AgencySandboxExtension, standard library only) and a partner's test class, compiled with javac
 * and run with the JUnit Platform console launcher (Debian's default-jdk and junit5), once
 * starting the sandbox itself and once attached to a running one.
 */

const missing = javaMissing()

t.test('the HTTP-only JUnit 5 fixture compiles and a partner test class passes with it', { skip: missing }, async (t) => {
  const classes = mkdtempSync(join(tmpdir(), 'sandbox-java-'))
  t.teardown(() => rmSync(classes, { recursive: true, force: true }))
  compileJava(classes, ['AgencySandbox.java', 'AgencySandboxExtension.java', 'PartnerSyncHttpTest.java'].map(javaExample))

  // asynchronous: in the attached case the sandbox answers from this very process
  const runJUnit = (env: NodeJS.ProcessEnv, cwd?: string) => new Promise<{ status: number | null, stdout: string, stderr: string }>((resolve) => {
    execFile('java', ['-jar', JUNIT_CONSOLE, '--disable-banner', '--details=tree', '--disable-ansi-colors', '-cp', classes, '--select-class', 'example.PartnerSyncHttpTest'],
      { env, cwd, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => resolve({ status: error === null ? 0 : (typeof error.code === 'number' ? error.code : null), stdout, stderr }))
  })
  const base: NodeJS.ProcessEnv = { ...process.env }
  delete base.AGENCY_SANDBOX_URL
  delete base.AGENCY_SANDBOX_CMD

  t.test('starting the sandbox from AGENCY_SANDBOX_CMD', async (t) => {
    const run = await runJUnit({ ...base, AGENCY_SANDBOX_CMD: `${process.execPath} ${CLI}` })
    t.equal(run.status, 0, run.status === 0 ? 'the console launcher exits 0' : run.stdout + run.stderr)
    t.match(run.stdout, /5 tests successful/)
    t.match(run.stdout, /0 tests failed/)
  })

  t.test('attached to AGENCY_SANDBOX_URL', async (t) => {
    const server = await startServer(loadConfig({ SANDBOX_DB: ':memory:', LOG_LEVEL: 'silent', PORT: '0' }))
    t.teardown(() => server.close())
    // an examiner session outlives the tests' resets: it shows their requests came here
    const session = await (await fetch(`${server.url}/_sandbox/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json() as { id: number }
    const run = await runJUnit({ ...base, AGENCY_SANDBOX_URL: server.url })
    t.equal(run.status, 0, run.status === 0 ? 'the console launcher exits 0' : run.stdout + run.stderr)
    t.match(run.stdout, /5 tests successful/)
    const recorded = await (await fetch(`${server.url}/_sandbox/sessions/${session.id}`)).json() as { recorded: number }
    t.ok(recorded.recorded > 5, `the tests ran against this sandbox (${recorded.recorded} vendor requests)`)
  })

  t.test('with neither, and no agency-sandbox installed, the fixture names the three ways', async (t) => {
    const bare = mkdtempSync(join(tmpdir(), 'sandbox-java-bare-'))
    t.teardown(() => rmSync(bare, { recursive: true, force: true }))
    const run = await runJUnit({ ...base, PATH: '/usr/bin:/bin' }, bare)
    t.not(run.status, 0)
    t.match(run.stdout + run.stderr, /AGENCY_SANDBOX_URL/)
    t.match(run.stdout + run.stderr, /AGENCY_SANDBOX_CMD/)
    t.match(run.stdout + run.stderr, /node_modules\/\.bin\/agency-sandbox/)
  })
})
