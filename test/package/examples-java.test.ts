import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, ROOT } from '../../src/config.js'
import { startServer } from '../../src/server.js'
import { compileJava, javaExample, javaMissing, JUNIT_CONSOLE } from '../helpers/java.js'
import { CLI } from '../helpers/process.js'
import { countingLauncher, runs } from '../helpers/process-tree.js'

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
  compileJava(classes, ['AgencySandbox.java', 'SandboxWorld.java', 'AgencySandboxExtension.java', 'PartnerSyncHttpTest.java', 'ParallelWorldsHttpTest.java'].map(javaExample))

  // asynchronous: in the attached case the sandbox answers from this very process
  const runJUnit = (env: NodeJS.ProcessEnv, cwd?: string, { classpath = classes, select = ['example.PartnerSyncHttpTest'] } = {}) =>
    new Promise<{ status: number | null, stdout: string, stderr: string }>((resolve) => {
      execFile('java', ['-jar', JUNIT_CONSOLE, '--disable-banner', '--details=tree', '--disable-ansi-colors', '-cp', classpath, ...select.flatMap((c) => ['--select-class', c])],
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
    // the tests' resets empty the journal and end examiner sessions: count the vendor requests at the socket
    let vendorRequests = 0
    server.app.server.on('request', (request: { url?: string }) => { if (request.url?.startsWith('/vendor/') === true) vendorRequests++ })
    const run = await runJUnit({ ...base, AGENCY_SANDBOX_URL: server.url })
    t.equal(run.status, 0, run.status === 0 ? 'the console launcher exits 0' : run.stdout + run.stderr)
    t.match(run.stdout, /5 tests successful/)
    t.ok(vendorRequests > 5, `the tests ran against this sandbox (${vendorRequests} vendor requests)`)
  })

  t.test('in parallel (junit-platform.properties), each world test in its own world, beside the default world\'s tests, against one sandbox', async (t) => {
    const folder = mkdtempSync(join(tmpdir(), 'sandbox-java-kit-'))
    t.teardown(() => rmSync(folder, { recursive: true, force: true }))
    const launcher = countingLauncher(folder, join(ROOT, 'dist', 'bundle', 'cli.js'))
    // the properties file turns JUnit's parallel execution on, as Maven would find it in src/test/resources
    const classpath = `${classes}:${join(ROOT, 'examples', 'java', 'src', 'test', 'resources')}`
    const run = await runJUnit({ ...base, AGENCY_SANDBOX_CMD: launcher.command }, undefined, { classpath, select: ['example.PartnerSyncHttpTest', 'example.ParallelWorldsHttpTest'] })
    t.equal(run.status, 0, run.status === 0 ? 'the console launcher exits 0' : run.stdout + run.stderr)
    t.match(run.stdout, /13 tests successful/, "the default world's 5 tests and the 8 world tests")
    const threads = new Set([...run.stdout.matchAll(/^ran in world w[0-9a-z]{10} .* on (\S+)$/gm)].map((m) => m[1]))
    // run one at a time, every test would report the launcher's main thread
    t.ok(threads.size >= 2 && [...threads].every((name) => /^ForkJoinPool-\d+-worker-\d+$/.test(name)),
      `the world tests ran on JUnit's parallel worker threads (${[...threads].join(', ')})`)
    const started = launcher.started()
    t.equal(started.length, 1, 'one sandbox for the whole run')
    t.same(started.filter(runs), [], 'stopped by the time the run ended: no process left')
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
