import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { CLI, runCli } from '../helpers/process.js'

/**
 * `serve` tells a program that started it where it listens: one line {"url":…,"pid":…} on stdout
 * (the only one that begins {"url":), and with --ready-file the same line in a file written
 * atomically; with --exit-on-stdin-close it stops when the pipe on its stdin closes. Real
 * processes, as a test kit starts them.
 */

const dir = mkdtempSync(join(tmpdir(), 'serve-ready-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

interface Started { child: ChildProcess, lines: string[], ready: Promise<string>, exited: Promise<number | null> }

/** `serve` with stdout on a pipe: every stdout line, and the first that begins {"url":. */
function serve (t: Test, args: string[], env: Record<string, string> = {}, stdin: 'pipe' | 'ignore' = 'ignore'): Started {
  const child = spawn(process.execPath, [CLI, 'serve', '--db', ':memory:', ...args], {
    env: { ...process.env, LOG_PRETTY: 'false', LOG_LEVEL: 'info', ...env }, stdio: [stdin, 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const lines: string[] = []
  const ready = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line)
      if (line.startsWith('{"url":')) resolve(line)
    })
    void exited.then((code) => reject(new Error(`exited with ${code} before its ready line: ${lines.join('\n')}`)))
  })
  ready.catch(() => {}) // a test that does not wait for it reads the lines instead
  return { child, lines, ready, exited }
}

const health = async (url: string) => (await fetch(`${url}/_sandbox/health`)).status

t.test('--port 0: one JSON line {url, pid} on stdout once listening, the only one beginning {"url":', async (t) => {
  const { child, lines, ready, exited } = serve(t, ['--port', '0'])
  const line = await ready
  const parsed = JSON.parse(line) as Record<string, unknown>
  t.same(Object.keys(parsed), ['url', 'pid'], 'exactly url and pid')
  t.match(parsed.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.not(parsed.url, 'http://127.0.0.1:0', 'the port it listens on, not 0')
  t.equal(parsed.pid, child.pid, 'the pid of the sandbox process')
  t.equal(await health(parsed.url as string), 200, 'it listens there as soon as it says so')
  child.kill('SIGTERM')
  t.equal(await exited, 0)
  t.equal(lines.filter((l) => l.startsWith('{"url":')).length, 1, 'said once')
  t.ok(lines.length > 1, 'beside the JSON log lines')
  t.same(lines.filter((l) => !l.startsWith('{"url":') && !l.startsWith('{"level":')), [], 'every other stdout line is a log line beginning {"level":')
})

t.test('said even with the logs silent, and on a fixed port when stdout is not a terminal', async (t) => {
  const silent = serve(t, ['--port', '0', '--log-level', 'silent'])
  const { url } = JSON.parse(await silent.ready) as { url: string }
  t.equal(await health(url), 200)
  const port = url.split(':').at(-1)!
  silent.child.kill('SIGTERM')
  t.equal(await silent.exited, 0)
  t.same(silent.lines, [JSON.stringify({ url, pid: silent.child.pid })], 'the ready line alone')

  const fixed = serve(t, ['--port', port])
  while (await health(url).catch(() => 0) !== 200) await new Promise((resolve) => setTimeout(resolve, 100))
  fixed.child.kill('SIGTERM')
  t.equal(await fixed.exited, 0)
  t.same(fixed.lines.filter((l) => l.startsWith('{"url":')), [JSON.stringify({ url, pid: fixed.child.pid })], 'the ready line, once')
})

const script = spawnSync('script', ['--version']).status === 0

t.test('a terminal gets the banner; the JSON line only when it asked for port 0', { skip: script ? false : 'script (util-linux) is not installed' }, async (t) => {
  /** What serve prints on a pseudo-terminal (util-linux's script), stopped by SIGTERM once its banner is out. */
  const onTerminal = (port: string) => new Promise<string>((resolve) => {
    const out = join(dir, `terminal-${port}.txt`)
    const command = `'${process.execPath}' '${CLI}' serve --db :memory: --port ${port} & pid=$!; ` +
      `while ! grep -q 'is ready' '${out}'; do sleep 0.1; done; kill -TERM $pid; wait $pid`
    const env = { ...process.env }
    delete env.LOG_PRETTY
    const child = spawn('script', ['-qfec', command, out], { env, stdio: ['ignore', 'ignore', 'inherit'] })
    t.teardown(() => { child.kill('SIGKILL') })
    child.once('exit', () => resolve(readFileSync(out, 'utf8')))
  })
  const zero = await onTerminal('0')
  t.match(zero, /agency-sandbox \S+ is ready/, 'the banner')
  t.match(zero, /^\{"url":"http:\/\/127\.0\.0\.1:\d+","pid":\d+\}\r?$/m, 'and the ready line, asked for by port 0')
  const free = spawnSync(process.execPath, ['-e', 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })'], { encoding: 'utf8' }).stdout.trim()
  const fixed = await onTerminal(free)
  t.match(fixed, `API        http://127.0.0.1:${free}/vendor`)
  t.notMatch(fixed, /\{"url":/, 'no JSON line for a person at a terminal who chose the port')
})

t.test('--ready-file: the same line in the file, written whole (no partial file left), removed when the sandbox stops', async (t) => {
  const folder = mkdtempSync(join(dir, 'ready-'))
  const file = join(folder, 'sandbox.json')
  const { child, ready, exited } = serve(t, ['--port', '0', '--ready-file', file])
  const line = await ready
  t.equal(readFileSync(file, 'utf8'), line + '\n', 'the file holds the stdout line')
  t.same(readdirSync(folder), ['sandbox.json'], 'nothing else in the folder: the partial file was renamed')
  const { url, pid } = JSON.parse(readFileSync(file, 'utf8')) as { url: string, pid: number }
  t.equal(pid, child.pid)
  t.equal(await health(url), 200)
  child.kill('SIGTERM')
  t.equal(await exited, 0)
  t.notOk(existsSync(file), 'removed on a graceful stop: it says the sandbox listens')
})

t.test('--ready-file in a folder that does not exist: exit 1 naming the path, nothing left listening', async (t) => {
  const file = join(dir, 'no-such-folder', 'ready.json')
  const res = await runCli(['serve', '--port', '0', '--db', ':memory:', '--ready-file', file], { LOG_LEVEL: 'silent', LOG_PRETTY: 'false' })
  t.equal(res.code, 1)
  t.match(res.stderr, `agency-sandbox: cannot write the ready file ${file}`)
  t.match(res.stderr, /give --ready-file a path in a folder that exists and is writable/)
  t.notMatch(res.stderr, /at .*\(.*\.js:\d+/, 'no stack trace')
  const empty = await runCli(['serve', '--ready-file='])
  t.equal(empty.code, 2, 'an empty path is a usage error')
  t.match(empty.stderr, /--ready-file needs a path/)
})

t.test('--exit-on-stdin-close: the sandbox stops when the pipe on its stdin closes; without it, it keeps serving', async (t) => {
  const watched = serve(t, ['--port', '0', '--exit-on-stdin-close'], {}, 'pipe')
  const { url } = JSON.parse(await watched.ready) as { url: string }
  t.equal(await health(url), 200)
  watched.child.stdin!.end()
  t.equal(await watched.exited, 0, 'a clean exit, as on SIGTERM')
  t.match(watched.lines.join('\n'), /"signal":"stdin closed".*shutting down/)

  const plain = serve(t, ['--port', '0'], {}, 'pipe')
  const second = JSON.parse(await plain.ready) as { url: string }
  plain.child.stdin!.end()
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.equal(await health(second.url), 200, 'still serving a second after its stdin closed')
  t.equal(plain.child.exitCode, null)
  plain.child.kill('SIGTERM')
  await plain.exited
})
