import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { ROOT } from '../../src/config.js'

/** The built CLI (npm test builds first). */
export const CLI = join(ROOT, 'dist', 'src', 'cli.js')

export interface Served {
  child: ChildProcess
  url: string
  /** Every stdout/stderr line so far. */
  lines: string[]
  exited: Promise<number | null>
  startedMs: number
}

/** Starts `agency-sandbox serve` as a process and waits until it logs its URL. */
export function serveProcess (env: Record<string, string>, args: string[] = []): Promise<Served> {
  const started = Date.now()
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    env: { ...process.env, PORT: '0', LOG_PRETTY: 'false', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: string[] = []
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no listening line in 15 s:\n' + lines.join('\n'))), 15_000)
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line)
        const m = /"url":"(http:[^"]+)"/.exec(line)
        if (m !== null && /listening/.test(line)) {
          clearTimeout(timer)
          resolve({ child, url: m[1], lines, exited, startedMs: started })
        }
      })
    }
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${code} before listening:\n${lines.join('\n')}`))
    })
  })
}

/** Runs the CLI to completion. */
export function runCli (args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}
