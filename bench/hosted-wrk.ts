import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { UUID_PLACEHOLDER, type RequestVariant } from './protocol.js'

/**
 * Debian's wrk as the load generator of the hosted benchmark: a closed loop of `connections` over
 * two threads, its requests the scenario's variants in turn, each write's RefId made unique (a Lua
 * script), its figures printed by the script as one JSON line at the end.
 */

export interface WrkResult {
  requests: number
  seconds: number
  /** Answers other than 2xx and 3xx, and sockets that failed (connect, read, write, timeout). */
  non2xx: number
  errors: number
  p50Ms: number
  p99Ms: number
}

export interface WrkJob {
  origin: string
  authorization: string
  variants: readonly RequestVariant[]
  connections: number
  seconds: number
}

const lua = (text: string) => `[==[${text}]==]`

/** The script: the variants, each thread its own order and its own RefIds; the summary as JSON. */
function script (job: WrkJob): string {
  const requests = job.variants.map((v) => `{ ${lua(v.method)}, ${lua(v.path)}, ${v.body === undefined ? 'nil' : lua(v.body)} }`).join(',\n  ')
  return `
local requests = {
  ${requests}
}
local headers = { ["Authorization"] = ${lua(job.authorization)}, ["Content-Type"] = "application/json" }
local threads = {}
local counter = 0
local index = 1

function setup (thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

-- each thread's id is set by setup (a global of its own state)
function init (args)
  index = (id * 7919) % #requests + 1
end

function request ()
  local r = requests[index]
  index = index % #requests + 1
  local body = r[3]
  if body ~= nil then
    counter = counter + 1
    local uuid = string.format("%08x-%04x-4%03x-8%03x-%012x", id, math.random(0, 65535), math.random(0, 4095), math.random(0, 4095), counter)
    body = string.gsub(body, "${UUID_PLACEHOLDER}", uuid)
  end
  return wrk.format(r[1], r[2], headers, body)
end

function done (summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"micros":%d,"non2xx":%d,"errors":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`
}

/** Runs wrk once; resolves with its figures (rejects when it prints none). */
export async function runWrk (job: WrkJob): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-wrk-'))
  const file = join(dir, 'load.lua')
  writeFileSync(file, script(job))
  try {
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', ['-t2', `-c${job.connections}`, `-d${job.seconds}s`, '--timeout', '10s', '-s', file, job.origin], { stdio: ['ignore', 'pipe', 'pipe'] })
      let text = ''
      child.stdout.on('data', (d: Buffer) => { text += d.toString() })
      child.stderr.on('data', (d: Buffer) => { text += d.toString() })
      child.on('error', reject)
      child.on('exit', () => resolve(text))
    })
    const line = output.split('\n').find((l) => l.startsWith('{"requests"'))
    if (line === undefined) throw new Error(`wrk printed no summary:\n${output.slice(-2000)}`)
    const r = JSON.parse(line) as { requests: number, micros: number, non2xx: number, errors: number, p50: number, p99: number }
    return { requests: r.requests, seconds: r.micros / 1e6, non2xx: r.non2xx, errors: r.errors, p50Ms: r.p50 / 1000, p99Ms: r.p99 / 1000 }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const rate = (r: WrkResult): number => (r.seconds > 0 ? (r.requests - r.non2xx - r.errors) / r.seconds : 0)
