import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../src/config.js'
import type { Budget, LoadJob, LoadResult, RequestVariant } from './protocol.js'

/**
 * Closed-loop load with wrk (a C load generator: one thread, an event loop, no garbage
 * collector), so that the generator is never what bounds a fast server. The Lua script
 * (bench/wrk/load.lua) sends the job's requests in turn, with Basic credentials and a new RefId
 * where a body asks for one, and writes its summary and its own CPU time to a file.
 */

const WRK = process.env.WRK ?? 'wrk'
const SCRIPT = join(ROOT, 'bench', 'wrk', 'load.lua')
/** Clock ticks of a Linux process. */
const TICKS_PER_SECOND = 100
/** Longest run of a budget counted in requests; the script stops wrk once they are answered. */
const AMOUNT_CAP_SECONDS = 600

interface WrkSummary {
  requests: number
  durationUs: number
  errors: { connect: number; read: number; write: number; status: number; timeout: number }
  latencyUs: { p50: number; p90: number; p99: number; max: number; mean: number }
  cpuTicks: number
}

/** wrk's name and version as it prints them (`wrk debian/4.1.0-3+b2`). */
export function wrkVersion (): string {
  let text: string
  try {
    text = execFileSync(WRK, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (e) {
    // wrk --version exits 1 after printing its version and usage
    text = String((e as { stdout?: string }).stdout ?? '')
  }
  return /^wrk \S+/.exec(text)?.[0] ?? 'wrk'
}

/** One line a request: method, path and body separated by tabs (JSON bodies have no raw tab or newline). */
export function requestLines (variants: RequestVariant[]): string {
  return variants.map((v) => [v.method, v.path, ...(v.body === undefined ? [] : [v.body])].join('\t')).join('\n') + '\n'
}

/** wrk's -d takes whole seconds. */
const wholeSeconds = (seconds: number) => Math.max(1, Math.round(seconds))

/** Runs wrk once over `budget`; resolves with what it answered and its own CPU time (seconds). */
export async function runWrk (job: LoadJob, budget: Budget): Promise<{ result: LoadResult; loadCpuSeconds: number }> {
  if (job.variants.some((v) => /[\t\n]/.test(v.path + (v.body ?? '')))) throw new Error('wrk requests cannot hold a tab or a newline')
  if (!job.expect.every((s) => s >= 200 && s < 400)) throw new Error(`wrk counts 2xx and 3xx answers only; expected ${job.expect.join(', ')}`)
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'))
  try {
    const requestsFile = join(dir, 'requests.tsv')
    const resultFile = join(dir, 'result.json')
    writeFileSync(requestsFile, requestLines(job.variants))
    const args = [
      '--threads', '1', '--connections', String(job.connections), '--timeout', '30s', '--script', SCRIPT,
      '--duration', `${'amount' in budget ? AMOUNT_CAP_SECONDS : wholeSeconds(budget.seconds)}s`, job.origin
    ]
    const env = {
      ...process.env,
      WRK_REQUESTS: requestsFile,
      WRK_AUTH: job.authorization,
      WRK_RESULT: resultFile,
      WRK_STOP_AFTER: 'amount' in budget ? String(budget.amount) : '0'
    }
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(WRK, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
      let text = ''
      child.stdout.on('data', (c: Buffer) => { text += c.toString('utf8') })
      child.stderr.on('data', (c: Buffer) => { text += c.toString('utf8') })
      child.on('error', (e) => reject(new Error(`${WRK} could not start (${e.message}): install wrk (Debian: apt-get install wrk) or set WRK`)))
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`${WRK} exited with ${code}:\n${text}`))))
    })
    let summary: WrkSummary
    try {
      summary = JSON.parse(readFileSync(resultFile, 'utf8')) as WrkSummary
    } catch {
      throw new Error(`${WRK} wrote no summary:\n${output}`)
    }
    const e = summary.errors
    const ms = (us: number) => us / 1000
    return {
      result: {
        tool: 'wrk',
        requests: summary.requests - e.status,
        errors: e.status + e.connect + e.read + e.write + e.timeout,
        seconds: summary.durationUs / 1e6,
        statuses: { '2xx/3xx': summary.requests - e.status, other: e.status },
        latency: { p50Ms: ms(summary.latencyUs.p50), p99Ms: ms(summary.latencyUs.p99), meanMs: ms(summary.latencyUs.mean) }
      },
      loadCpuSeconds: summary.cpuTicks / TICKS_PER_SECOND
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
