import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { ROOT } from '../../src/config.js'
import { statusKb } from '../processes.js'

/**
 * One command of the CLI as a child process, bounded in time and memory: killed once it runs
 * longer than `killAfterMs` or its RSS passes `killAboveKb`, so a command that fails the test
 * cannot take the machine down with it. Its peak RSS is the larger of the kernel's high-water
 * mark read every 20 ms and getrusage at its exit (bench/import-usage.ts, preloaded).
 */

/** Built (the tests run this file from its source). */
const USAGE_PRELOAD = pathToFileURL(join(ROOT, 'dist', 'bench', 'import-usage.js')).href

export interface ChildRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  peakKb: number
  ms: number
  /** Why the run was stopped from outside, if it was. */
  killed?: 'time' | 'memory'
}

export interface ChildLimits {
  killAfterMs: number
  killAboveKb: number
}

/** `scratch`: a folder of the caller's for the usage file (not the folder the command writes to). */
export async function runChild (cli: string, args: string[], scratch: string, limits: ChildLimits): Promise<ChildRun> {
  const usageFile = join(scratch, `usage-${process.hrtime.bigint()}.json`)
  const started = performance.now()
  const env: NodeJS.ProcessEnv = { ...process.env, IMPORT_USAGE_FILE: usageFile }
  // measured as a user runs it: without a test runner's preloads (tap's process tracking) or coverage
  delete env.NODE_V8_COVERAGE
  delete env.NODE_OPTIONS
  const child = spawn(process.execPath, ['--import', USAGE_PRELOAD, cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  // what a runaway command prints is kept to its start and end
  const keep = (text: string) => (text.length > 64_000 ? text.slice(0, 32_000) + '\n…\n' + text.slice(-32_000) : text)
  child.stdout.on('data', (d: Buffer) => (stdout = keep(stdout + d.toString())))
  child.stderr.on('data', (d: Buffer) => (stderr = keep(stderr + d.toString())))
  let peakKb = 0
  let killed: ChildRun['killed']
  const watch = setInterval(() => {
    const hwm = statusKb(child.pid ?? 0, 'VmHWM')
    if (hwm !== null && hwm > peakKb) peakKb = hwm
    const rss = statusKb(child.pid ?? 0, 'VmRSS')
    if (killed === undefined && rss !== null && rss > limits.killAboveKb) {
      killed = 'memory'
      child.kill('SIGKILL')
    }
    if (killed === undefined && performance.now() - started > limits.killAfterMs) {
      killed = 'time'
      child.kill('SIGKILL')
    }
  }, 20)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])))
  clearInterval(watch)
  if (existsSync(usageFile)) {
    const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { maxRssKb: number }
    peakKb = Math.max(peakKb, usage.maxRssKb)
    rmSync(usageFile)
  }
  return { code, signal, stdout, stderr, peakKb, ms: performance.now() - started, ...(killed === undefined ? {} : { killed }) }
}
