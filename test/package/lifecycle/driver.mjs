// Starts a sandbox through examples/node/sandbox-process.mjs, prints `started <pid> <url>`, then,
// on a line from stdin, by the mode in argv[2]: `stop` stops it and prints `stopped`; `exit`
// exits without stopping it (the fixture's exit hook must); `wait` ignores the line and waits
// for a signal to end the process.
import { createInterface } from 'node:readline'
import { SandboxProcess } from '../../../examples/node/sandbox-process.mjs'

const sandbox = await SandboxProcess.start()
process.stdout.write(`started ${sandbox.child.pid} ${sandbox.url}\n`)
const mode = process.argv[2]
const nextLine = () => new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve))
if (mode === 'stop') {
  await nextLine()
  await sandbox.stop()
  process.stdout.write('stopped\n')
  process.exit(0)
} else if (mode === 'exit') {
  await nextLine()
  process.exit(0)
} else {
  await new Promise(() => setInterval(() => {}, 60_000))
}
