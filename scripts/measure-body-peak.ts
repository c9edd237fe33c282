/**
 * Measures the peak memory of the sandbox while it takes the largest fixture document a control
 * call accepts: for each document, a fresh `agency-sandbox serve` (in-memory database) gets one
 * POST, and its VmHWM (peak resident set) is read from /proc before and after.
 *
 * Run after a build (Linux): node dist/scripts/measure-body-peak.js [FIXTURE_FILE]
 * FIXTURE_FILE: a generated fixture just under the limit (agency-sandbox generate); without it,
 * only the synthetic shapes are measured.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, statSync, createReadStream } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { createInterface } from 'node:readline'
import { ROOT } from '../src/config.js'
import { BYTES_PER_VALUE, FIXTURE_BODY_LIMIT } from '../src/http/json-body.js'

const CLI = join(ROOT, 'dist', 'src', 'cli.js')
const MiB = 1024 * 1024

interface Server { child: ChildProcess; url: string }

function serve (): Promise<Server> {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, PORT: '0', SANDBOX_DB: ':memory:', LOG_PRETTY: 'false', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /"url":"(http:[^"]+)"/.exec(line)
      if (m !== null && /listening/.test(line)) resolve({ child, url: m[1] })
    })
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}`)))
  })
}

/** Peak resident set of a process, in MiB (Linux). */
function peakMiB (pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (m === null) throw new Error('no VmHWM in /proc status')
  return Number(m[1]) / 1024
}

/**
 * A document of at most `size` bytes: `head`, `unit` repeated `count` times, then a long string
 * member filling the rest, then `}`; streamed, never held whole.
 */
function shaped (size: number, head: string, unit: string, count: number): { bytes: number; stream: () => Readable } {
  const padHead = '],"pad":"'
  const tail = '"}'
  const listBytes = count * unit.length + (count - 1)
  const padBytes = Math.max(0, size - head.length - listBytes - padHead.length - tail.length)
  const bytes = head.length + listBytes + padHead.length + padBytes + tail.length
  const chunkUnits = 8192
  const pad = Buffer.alloc(64 * 1024, 'a')
  return {
    bytes,
    stream: () => Readable.from((function * () {
      yield Buffer.from(head)
      for (let done = 0; done < count; done += chunkUnits) {
        const n = Math.min(chunkUnits, count - done)
        yield Buffer.from((done === 0 ? '' : ',') + Array.from({ length: n }, () => unit).join(','))
      }
      yield Buffer.from(padHead)
      for (let done = 0; done < padBytes; done += pad.length) yield pad.subarray(0, Math.min(pad.length, padBytes - done))
      yield Buffer.from(tail)
    })())
  }
}

function post (url: string, bytes: number, body: Readable): Promise<{ status: number; ms: number; detail: string }> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bytes) } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started, detail: text.slice(0, 160) }))
    })
    req.on('error', reject)
    body.pipe(req)
  })
}

async function measure (name: string, path: string, bytes: number, body: () => Readable): Promise<void> {
  const server = await serve()
  try {
    const before = peakMiB(server.child.pid!)
    const answer = await post(server.url + path, bytes, body())
    const after = peakMiB(server.child.pid!)
    console.log(`${name}: ${(bytes / MiB).toFixed(1)} MiB to ${path} -> ${answer.status} in ${answer.ms} ms; ` +
      `peak RSS ${before.toFixed(0)} MiB at start, ${after.toFixed(0)} MiB after  ${answer.status >= 300 ? answer.detail : ''}`)
  } finally {
    server.child.kill('SIGTERM')
  }
}

const limit = FIXTURE_BODY_LIMIT
const under = limit - 1024
/** Values the scan lets through (a few kept for the head and the padding member). */
const maxUnits = Math.floor(limit / BYTES_PER_VALUE) - 16
const file = process.argv[2]
console.log(`fixture body limit: ${limit / MiB} MiB, at most ${maxUnits + 16} values`)
if (file !== undefined) {
  const size = statSync(file).size
  await measure(`generated fixture ${file}`, '/_sandbox/reset', size, () => createReadStream(file))
}
/** The costliest values per byte: each as many times as the value budget allows, the rest of the bytes one long string. */
const UNITS = [
  { name: 'one long string', unit: '1', count: 1 },
  // An object or array counts once and its comma once.
  { name: 'empty objects', unit: '{}', count: Math.floor(maxUnits / 2) },
  { name: 'empty arrays', unit: '[]', count: Math.floor(maxUnits / 2) },
  { name: 'one-letter strings', unit: '"a"', count: maxUnits },
  { name: 'decimal numbers', unit: '1.5', count: maxUnits }
]
const TARGETS = [
  { path: '/_sandbox/reset', head: '{"agencies":[' },
  { path: '/_sandbox/agencies', head: '{"agencyId":9,"name":"x","clients":[' }
]
for (const target of TARGETS) {
  for (const { name, unit, count } of UNITS) {
    const doc = shaped(under, target.head, unit, count)
    await measure(name, target.path, doc.bytes, doc.stream)
  }
}
