import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { ROOT } from '../../src/config.js'
import { buildGoTest, goEnv, goMissing } from '../helpers/go.js'
import { compileJava, javaExample, javaMissing, JUNIT_CONSOLE } from '../helpers/java.js'
import { commandLine, countingLauncher, processTree, runs, stillRunning } from '../helpers/process-tree.js'

/**
 * No sandbox outlives its test run. Each language's fixture starts a sandbox through a launcher
 * that neither execs nor forwards signals (as `npm exec` behaves: the sandbox is its grandchild),
 * then the sandbox is stopped by the fixture's stop, by the host process exiting without stopping
 * it, by SIGTERM or SIGINT to the host, or by the host's death (SIGKILL: the sandbox's stdin pipe
 * closes); every process of the tree, the node grandchild included, must be gone (a zombie
 * waiting for its reaper counts as gone).
 */

const work = mkdtempSync(join(tmpdir(), 'sandbox-lifecycle-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))

const launcher = join(work, 'launch-sandbox')
/** What the package's bin runs. */
const BUNDLED_CLI = join(ROOT, 'dist', 'bundle', 'cli.js')
// the sandbox runs as the launcher's child (the launcher outlives it by one more command), without tap's hooks
writeFileSync(launcher, `#!/bin/sh\nunset NODE_OPTIONS NODE_V8_COVERAGE\n'${process.execPath}' '${BUNDLED_CLI}' "$@"\nstatus=$?\nexit $status\n`)
chmodSync(launcher, 0o755)
const env: NodeJS.ProcessEnv = { ...process.env, AGENCY_SANDBOX_CMD: launcher }
delete env.AGENCY_SANDBOX_URL

const DRIVERS = join(import.meta.dirname, 'lifecycle')
const python = spawnSync('python3', ['--version']).status === 0
const javaWhyNot = javaMissing()
const javaClasses = join(work, 'classes')
if (javaWhyNot === false) compileJava(javaClasses, [javaExample('AgencySandbox.java'), javaExample('SandboxWorld.java'), join(DRIVERS, 'LifecycleDriver.java')])
// a go test binary (TestMain with agencysandbox.Run), as `go test` builds and runs it
const goWhyNot = goMissing()
const goDriver = join(work, 'lifecycle.test')
if (goWhyNot === false) buildGoTest(join(DRIVERS, 'go'), goDriver, goEnv(work))

interface Fixture { name: string, skip: string | false, command: (mode: string) => [string, string[]] }

const FIXTURES: Fixture[] = [
  { name: 'Node (examples/node/sandbox-process.mjs)', skip: false, command: (mode) => [process.execPath, [join(DRIVERS, 'driver.mjs'), mode]] },
  { name: 'Python (examples/python/agency_sandbox.py)', skip: python ? false : 'python3 is not installed', command: (mode) => ['python3', [join(DRIVERS, 'driver.py'), mode]] },
  { name: 'Java (examples/java AgencySandbox)', skip: javaWhyNot, command: (mode) => ['java', ['-cp', `${javaClasses}:${JUNIT_CONSOLE}`, 'example.LifecycleDriver', mode]] },
  { name: 'Go (examples/go, a go test binary)', skip: goWhyNot, command: (mode) => [goDriver, ['-test.run', '^TestDriver$', mode]] }
]

interface Started { host: ChildProcess, lines: AsyncIterator<string>, tree: number[], exited: Promise<unknown> }

/** Runs a driver until its sandbox answers; the sandbox's process tree (launcher and node grandchild). */
async function startThrough (t: Test, fixture: Fixture, mode: string): Promise<Started> {
  const [command, args] = fixture.command(mode)
  const host = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => host.once('exit', resolve))
  t.teardown(() => { host.kill('SIGKILL') })
  const lines = createInterface({ input: host.stdout! })[Symbol.asyncIterator]()
  const first = await lines.next()
  const m = /^started (\d+) (http:\S+)$/.exec(String(first.value))
  if (m === null) throw new Error(`the driver said ${JSON.stringify(first.value)}`)
  const health = await fetch(`${m[2]}/_sandbox/health`)
  t.equal(health.status, 200, 'the sandbox answers')
  const tree = processTree(Number(m[1]))
  // a failing fixture must not leave its orphans behind on the machine
  t.teardown(() => { for (const pid of tree.filter(runs)) process.kill(pid, 'SIGKILL') })
  t.ok(tree.length >= 2 && tree.slice(1).some((pid) => commandLine(pid).includes(`${BUNDLED_CLI} serve`)),
    `the sandbox runs as the launcher's child (${tree.map((pid) => `${pid}: ${commandLine(pid).slice(0, 60)}`).join('; ')})`)
  return { host, lines, tree, exited }
}

async function nothingLeft (t: Test, tree: number[], within: number): Promise<void> {
  const left = await stillRunning(tree, within)
  t.same(left.map((pid) => `${pid} ${commandLine(pid)}`), [], 'no process of the sandbox is left, the node grandchild included')
}

for (const fixture of FIXTURES) {
  t.test(fixture.name, { skip: fixture.skip }, async (t) => {
    t.test('stop() ends the whole process group, launcher and grandchild', async (t) => {
      const { host, lines, tree } = await startThrough(t, fixture, 'stop')
      host.stdin!.write('stop\n')
      t.equal((await lines.next()).value, 'stopped')
      // stop() returns once the group is gone: nothing may be left at this moment
      t.same(tree.filter(runs), [], 'nothing runs once stop() has returned')
      host.stdin!.end()
    })

    t.test('the host exiting without stop() ends it too', async (t) => {
      const { host, tree, exited } = await startThrough(t, fixture, 'exit')
      host.stdin!.write('exit\n')
      await exited
      // Node's exit hook can only signal (no waiting at exit); the sandbox then closes itself
      await nothingLeft(t, tree, 15_000)
    })

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      t.test(`${signal} to the host (an interrupted test run) ends it too`, async (t) => {
        const { host, tree, exited } = await startThrough(t, fixture, 'wait')
        host.kill(signal)
        await exited
        await nothingLeft(t, tree, 15_000)
      })
    }

    t.test('SIGKILL to the host (no hook runs): the sandbox stops itself as the pipe on its stdin closes', async (t) => {
      const { host, tree, exited } = await startThrough(t, fixture, 'wait')
      host.kill('SIGKILL')
      await exited
      await nothingLeft(t, tree, 15_000)
    })
  })
}

/**
 * One sandbox around a parallel run, interrupted: SIGTERM or SIGINT to the process that started it
 * (Node's run-with-sandbox.mjs, the controlling process of pytest -n 2) while tests run ends the
 * sandbox, the command or the xdist workers, and leaves no process behind.
 */
const debianXdist = spawnSync('/usr/bin/python3', ['-c', 'import pytest, xdist']).status === 0

/** Waits until `ready()` holds (a file written, a line read), or fails after 60 s. */
async function until (ready: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`run-with-sandbox.mjs: ${signal} during the run ends the command and the sandbox`, async (t) => {
    const folder = mkdtempSync(join(work, 'kit-'))
    const launcher = countingLauncher(folder, BUNDLED_CLI)
    const marker = join(folder, 'command-ran')
    const command = `require('fs').writeFileSync(${JSON.stringify(marker)}, process.env.AGENCY_SANDBOX_URL); setInterval(() => {}, 60000)`
    const host = spawn(process.execPath, [join(ROOT, 'examples', 'node', 'run-with-sandbox.mjs'), process.execPath, '-e', command],
      { env: { ...env, AGENCY_SANDBOX_CMD: launcher.command }, stdio: ['ignore', 'inherit', 'inherit'] })
    const exited = new Promise((resolve) => host.once('exit', resolve))
    t.teardown(() => { host.kill('SIGKILL') })
    await until(() => existsSync(marker), 'the command running with AGENCY_SANDBOX_URL')
    t.equal((await fetch(`${readFileSync(marker, 'utf8')}/_sandbox/health`)).status, 200, 'the command got the sandbox\'s URL')
    const tree = [...processTree(host.pid!), ...launcher.started()]
    t.teardown(() => { for (const pid of tree.filter(runs)) process.kill(pid, 'SIGKILL') })
    host.kill(signal)
    await exited
    t.equal(launcher.started().length, 1, 'one sandbox was started')
    await nothingLeft(t, tree, 15_000)
  })
}

t.test('pytest -n 2: SIGINT or SIGTERM to the controlling process during the run ends the sandbox and the workers', { skip: debianXdist ? false : '/usr/bin/python3 has no pytest-xdist (apt-get install python3-pytest-xdist; .ci/run does)' }, async (t) => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const folder = mkdtempSync(join(work, 'kit-'))
    const launcher = countingLauncher(folder, BUNDLED_CLI)
    for (const file of ['agency_sandbox.py', 'conftest.py']) writeFileSync(join(folder, file), readFileSync(join(ROOT, 'examples', 'python', file)))
    // two tests that each take a world and then wait: the run is interrupted in the middle
    writeFileSync(join(folder, 'test_waits.py'), [
      'import os, time',
      'import pytest',
      '@pytest.mark.parametrize("n", [1, 2])',
      'def test_waits(world, n):',
      `    open(os.path.join(${JSON.stringify(folder)}, f"ready-{n}"), "w").close()`,
      '    time.sleep(120)',
      ''
    ].join('\n'))
    // TMPDIR: the controller's lock folder, which a SIGTERM leaves behind, goes with this test's files
    const host = spawn('/usr/bin/python3', ['-m', 'pytest', '-n', '2', '-q', '-p', 'no:cacheprovider'],
      { cwd: folder, env: { ...env, AGENCY_SANDBOX_CMD: launcher.command, TMPDIR: folder }, stdio: ['ignore', 'ignore', 'inherit'] })
    const exited = new Promise((resolve) => host.once('exit', resolve))
    t.teardown(() => { host.kill('SIGKILL') })
    await until(() => existsSync(join(folder, 'ready-1')) && existsSync(join(folder, 'ready-2')), 'both tests running in their worlds')
    const tree = [...processTree(host.pid!), ...launcher.started()]
    t.teardown(() => { for (const pid of tree.filter(runs)) process.kill(pid, 'SIGKILL') })
    t.ok(tree.length >= 4, `the controller, two workers and the sandbox run (${tree.length} processes)`)
    host.kill(signal)
    await exited
    t.equal(launcher.started().length, 1, `${signal}: one sandbox was started for both workers`)
    await nothingLeft(t, tree, 15_000)
  }
})
