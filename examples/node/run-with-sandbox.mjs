#!/usr/bin/env node
// Runs a command with one sandbox for all of it: starts the sandbox (or attaches to
// AGENCY_SANDBOX_URL), runs the command with AGENCY_SANDBOX_URL set to it, then stops the sandbox,
// with every process it started, and exits with the command's status.
//
//   node run-with-sandbox.mjs node --test --test-concurrency=4 test/
//
// `node --test` runs each test file in a process of its own; every file's SandboxProcess.start()
// then attaches to this one sandbox instead of starting its own, and tests that each take a world
// (createWorld) run side by side in it. Any other command works too (pytest -n 4, mvn test, ...).
// Ctrl-C or SIGTERM reaches the command, and the sandbox is stopped all the same.
import { spawn } from 'node:child_process'
import { SandboxProcess } from './sandbox-process.mjs'

const [command, ...args] = process.argv.slice(2)
if (command === undefined) {
  process.stderr.write('usage: node run-with-sandbox.mjs <command> [args...]   e.g. node run-with-sandbox.mjs node --test --test-concurrency=4\n')
  process.exit(2)
}

const sandbox = await SandboxProcess.start()
const env = { ...process.env, AGENCY_SANDBOX_URL: sandbox.url }
const child = spawn(command, args, { stdio: 'inherit', env, shell: process.platform === 'win32' })
// The sandbox's own handlers stop it on these signals and end this process; the command hears them too.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal))
const [code, signal] = await new Promise((resolve) => {
  child.once('error', (e) => {
    process.stderr.write(`could not run ${command}: ${e.message}\n`)
    resolve([127, null])
  })
  child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]))
})
await sandbox.stop()
process.exit(code ?? (signal === null ? 1 : 128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 }[signal] ?? 1)))
