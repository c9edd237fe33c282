/**
 * A reader of `serve`'s standard output that stops reading (a stalled log shipper, a parent that
 * never reads the pipe) costs at most LOG_BUFFER_BYTES of memory: lines past it are dropped and
 * counted, and a line says how many once the pipe is read again. SIGTERM still ends the process:
 * the last lines get a second to go out, not forever. Before, pino's destination kept every line
 * in memory and, at exit, retried the full pipe every 100 ms without end; readable lines
 * (LOG_PRETTY) waited in pino-pretty's worker, unbounded, and held the exit 10 s.
 */
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface, type Interface } from 'node:readline'
import { CLI } from '../helpers/process.js'

const BUFFER_BYTES = 16 * 1024
/** Far above the second the exit gives the last lines and the close's grace, far below never. */
const EXIT_BOUND_MS = 8_000
/** Each request logs a line of some 300 bytes: the pipe (64 KiB) and the buffer fill long before. */
const MAX_REQUESTS = 20_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Stalled { child: ChildProcess, url: string, lines: string[], reader: Interface, exited: Promise<number | null> }

function withoutForcedColour (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { FORCE_COLOR: _forced, ...rest } = env
  return rest
}

/** `serve` whose standard output is read up to its listening line, then no more. */
async function serveUnread (pretty = false): Promise<Stalled> {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    // readable lines without colours, whatever the environment forces, so that the listening line is found
    env: { ...withoutForcedColour(process.env), NO_COLOR: '1', PORT: '0', SANDBOX_DB: ':memory:', LOG_PRETTY: String(pretty), LOG_LEVEL: 'info', SANDBOX_DRAIN_SECONDS: '0', LOG_BUFFER_BYTES: String(BUFFER_BYTES) },
    stdio: ['ignore', 'pipe', 'ignore']
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const lines: string[] = []
  const reader = createInterface({ input: child.stdout! })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no listening line in 15 s')), 15_000)
    reader.on('line', (line) => {
      lines.push(line)
      const m = /"url":"(http:[^"]+)".*listening|listening.*"url":"(http:[^"]+)"|INFO: agency-sandbox \S+ listening on (http:\S+)/.exec(line)
      if (m !== null) {
        clearTimeout(timer)
        reader.pause()
        resolve(m[1] ?? m[2] ?? m[3])
      }
    })
  })
  return { child, url, lines, reader, exited }
}

async function droppedSoFar (url: string): Promise<number> {
  const text = await (await fetch(`${url}/_sandbox/metrics`)).text()
  const m = /^sandbox_log_lines_dropped_total (\d+)$/m.exec(text)
  return m === null ? -1 : Number(m[1])
}

/** Requests, each of which logs a line, until the metrics count dropped lines. */
async function fillTheBuffer (url: string): Promise<{ requests: number, dropped: number }> {
  let requests = 0
  while (requests < MAX_REQUESTS) {
    await Promise.all(Array.from({ length: 20 }, async () => { await (await fetch(`${url}/_sandbox/health`)).arrayBuffer() }))
    requests += 20
    if (requests % 500 === 0) {
      const dropped = await droppedSoFar(url)
      if (dropped > 0) return { requests, dropped }
    }
  }
  return { requests, dropped: await droppedSoFar(url) }
}

async function stop (served: Stalled): Promise<{ code: number | null | 'still running', ms: number }> {
  const started = Date.now()
  served.child.kill('SIGTERM')
  const code = await Promise.race([served.exited, sleep(30_000).then(() => 'still running' as const)])
  if (code === 'still running') served.child.kill('SIGKILL')
  return { code, ms: Date.now() - started }
}

t.test('while nobody reads the logs, lines past LOG_BUFFER_BYTES are dropped and counted, and SIGTERM ends the process', async (t) => {
  const served = await serveUnread()
  t.teardown(() => served.child.kill('SIGKILL'))
  const { requests, dropped } = await fillTheBuffer(served.url)
  t.ok(dropped > 0, `lines dropped after ${requests} requests: ${dropped}`)
  t.ok(dropped < requests, 'the lines the buffer held were kept')
  const { code, ms } = await stop(served)
  t.equal(code, 0, 'a clean exit although the pipe stays full')
  t.ok(ms < EXIT_BOUND_MS, `ended ${ms} ms after the signal`)
})

t.test('once the logs are read again, a line says how many were dropped, and the last lines go out at exit', async (t) => {
  const served = await serveUnread()
  t.teardown(() => served.child.kill('SIGKILL'))
  const { dropped } = await fillTheBuffer(served.url)
  t.ok(dropped > 0, `lines dropped: ${dropped}`)
  served.reader.resume()
  await (await fetch(`${served.url}/_sandbox/health`)).arrayBuffer()
  const notice = async (): Promise<{ droppedLines: number, msg: string, level: number } | undefined> => {
    for (let i = 0; i < 100; i++) {
      const line = served.lines.find((l) => l.includes('"droppedLines"'))
      if (line !== undefined) return JSON.parse(line) as { droppedLines: number, msg: string, level: number }
      await sleep(50)
    }
    return undefined
  }
  const said = await notice()
  if (said === undefined) return t.fail('no line about the dropped lines')
  t.equal(said.level, 40, 'a warning')
  t.match(said.msg, /^\d+ log lines dropped: standard output was not read while 16384 bytes of lines waited for it \(LOG_BUFFER_BYTES\)$/)
  t.equal(said.droppedLines, await droppedSoFar(served.url), 'the line and the metrics count the same lines')
  const { code, ms } = await stop(served)
  t.equal(code, 0)
  t.ok(ms < EXIT_BOUND_MS, `ended ${ms} ms after the signal`)
  await sleep(100)
  t.ok(served.lines.some((l) => l.includes('shutting down')), 'the line of the shutdown was written')
})

t.test('LOG_PRETTY=true: readable lines are bounded alike, and SIGTERM ends the process', async (t) => {
  const served = await serveUnread(true)
  t.teardown(() => served.child.kill('SIGKILL'))
  t.ok(served.lines.some((l) => /^\[[\d:.]+\] INFO: /.test(l)), 'readable lines, not JSON')
  const { requests, dropped } = await fillTheBuffer(served.url)
  t.ok(dropped > 0, `lines dropped after ${requests} requests: ${dropped}`)
  const { code, ms } = await stop(served)
  t.equal(code, 0)
  t.ok(ms < EXIT_BOUND_MS, `ended ${ms} ms after the signal`)
})

t.test('LOG_BUFFER_BYTES outside its range stops the start with a message naming it', async (t) => {
  for (const value of ['100', '2000000000', 'lots']) {
    const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...process.env, PORT: '0', SANDBOX_DB: ':memory:', LOG_BUFFER_BYTES: value }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const code = await new Promise((resolve) => child.once('exit', resolve))
    t.not(code, 0, `${value}: the start stops`)
    t.match(stderr, `LOG_BUFFER_BYTES=${value} is not a whole number of bytes from 16384 to 1073741824 (1 GiB)`)
  }
})
