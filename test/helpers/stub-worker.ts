import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from '../../src/config.js'
import type { Teardown } from './app.js'

/**
 * A worker process's module that runs `onJob` (JavaScript statements, with the message's `id` and
 * `job` and the function `send` in scope) for each message it is sent: a stand-in for the
 * sandbox's fixture and report workers, on the same channel as theirs (src/worker-process.ts,
 * compiled: `npm run build`).
 */
export function stubWorker (t: Teardown, onJob: string): URL {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-stub-worker-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'worker.mjs')
  const channel = pathToFileURL(join(ROOT, 'dist', 'src', 'worker-process.js')).href
  writeFileSync(file, `import { sandboxChannel } from ${JSON.stringify(channel)}
const send = sandboxChannel('a stub worker')
process.on('message', ({ id, job }) => { ${onJob} })
`)
  return pathToFileURL(file)
}
