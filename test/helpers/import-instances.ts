import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { CLI, runCli } from './process.js'
import { tempDir as tempDirNamed } from './temp-dir.js'

/** Sandbox processes and temporary files for the import and compare tests. */

export const DEMO_AUTH = { clientId: 'abc', clientSecret: '123' }

export const tempDir = (t: { teardown(fn: () => void): void }): string => tempDirNamed(t, 'agency-import-')

export interface Sandbox { url: string }

/**
 * A sandbox process on a free port, in memory, seeded from `fixture` (the demo data when
 * undefined); stopped at teardown, and killed if it does not listen within `timeoutMs` (a
 * large fixture takes a while to load on a busy machine).
 */
export async function sandbox (t: { teardown(fn: () => Promise<void> | void): void }, fixture?: string, timeoutMs = 180_000): Promise<Sandbox> {
  const child = spawn(process.execPath, [CLI, 'serve', ...(fixture === undefined ? [] : ['--fixtures', fixture])], {
    env: { ...process.env, PORT: '0', SANDBOX_DB: ':memory:', LOG_PRETTY: 'false', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  t.teardown(async () => {
    child.kill('SIGKILL')
    await exited
  })
  const lines: string[] = []
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line in ${timeoutMs / 1000} s:\n${lines.join('\n')}`)), timeoutMs)
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line)
        const m = /"url":"(http:[^"]+)"/.exec(line)
        if (m !== null && /listening/.test(line)) {
          clearTimeout(timer)
          resolve({ url: m[1] })
        }
      })
    }
    exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`exited before listening:\n${lines.join('\n')}`))
    })
  })
}

export const importArgs = (from: string, out: string, extra: string[] = []) =>
  ['import', '--from', from, '--client-id', DEMO_AUTH.clientId, '--client-secret', DEMO_AUTH.clientSecret, '--out', out, ...extra]

/** Runs an import to completion; throws with its output when it does not exit 0. */
export async function importTo (from: string, out: string, extra: string[] = []): Promise<{ stdout: string; stderr: string; secret: string }> {
  const run = await runCli(importArgs(from, out, extra))
  if (run.code !== 0) throw new Error(`import exited ${run.code}\n${run.stdout}\n${run.stderr.slice(-2000)}`)
  const secret = /client secret in the fixture: (\S+)/.exec(run.stdout)?.[1] ?? DEMO_AUTH.clientSecret
  return { stdout: run.stdout, stderr: run.stderr, secret }
}

export async function control<T> (base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}/_sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return (text === '' ? undefined : JSON.parse(text)) as T
}

/** Where two files first differ (undefined when equal), with the text around it, for a failing assertion's message. */
export function firstDifference (a: string, b: string): string | undefined {
  const x = readFileSync(a)
  const y = readFileSync(b)
  if (x.equals(y)) return undefined
  let i = 0
  while (i < x.length && i < y.length && x[i] === y[i]) i++
  const around = (buf: Buffer) => buf.subarray(Math.max(0, i - 200), i + 200).toString()
  return `sizes ${x.length} and ${y.length}, first difference at byte ${i}:\n${around(x)}\n---\n${around(y)}`
}
