// A sandbox for Node test suites that needs only HTTP: start one as a process (or attach to a
// running one) and drive its control API. With the package installed you can also start it in
// your own process: `import { startSandbox } from 'agency-sandbox'`.
//
// Where the sandbox comes from, first match wins:
//   AGENCY_SANDBOX_URL    attach to a running sandbox (a container, a CI service)
//   AGENCY_SANDBOX_CMD    the command line that starts one, e.g. "node ../agency-sandbox/dist/bundle/cli.js"
//   agency-sandbox        installed in the project (node_modules/.bin, searched from the current
//                         directory upwards) or on PATH
// and AGENCY_SANDBOX_TOKEN is the control token, when the sandbox has one.
//
// A started sandbox runs in its own process group; stop() ends the whole group (SIGTERM, then
// SIGKILL after a grace period), so a launcher in between (npx, a shell) leaves nothing behind.
// Sandboxes still running when this process exits or is stopped by SIGINT, SIGTERM or SIGHUP
// are stopped too, and one whose starting process was killed (SIGKILL) stops itself: it is
// started with --exit-on-stdin-close and a pipe on its stdin that only this process holds.
// It is started on port 0 and says where it listens on stdout (a line {"url":...,"pid":...}).
//
// Tests that run in parallel against one sandbox each take a world of their own (createWorld):
// its own data, clock, faults, journal and sessions, reached by its own credentials. To share one
// sandbox between the test files `node --test` runs as separate processes, start it once around
// the run: `node run-with-sandbox.mjs node --test --test-concurrency=4` (see that file).
import { spawn, spawnSync } from 'node:child_process'
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { delimiter, dirname, join, resolve } from 'node:path'

export const DEMO_AUTH = 'Basic ' + Buffer.from('abc:123').toString('base64')
const BIN = 'agency-sandbox'
const STOP_GRACE_MS = 10_000
const WINDOWS = process.platform === 'win32'

const query = (q = {}) => {
  const entries = Object.entries(q).filter(([, v]) => v !== undefined && v !== null)
  return entries.length === 0 ? '' : '?' + new URLSearchParams(entries.map(([k, v]) => [k, String(v)]))
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const executable = (file) => {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}

/** Words of a command line: spaces separate them, single or double quotes keep spaces inside one. */
export function splitCommand (line) {
  const words = []
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3])
  return words
}

/** node_modules/.bin/agency-sandbox in `from` or the nearest folder above it that has one. */
export function installedBin (from = process.cwd()) {
  const names = WINDOWS ? [`${BIN}.cmd`, BIN] : [BIN]
  for (let folder = resolve(from); ; folder = dirname(folder)) {
    for (const name of names) {
      const candidate = join(folder, 'node_modules', '.bin', name)
      if (executable(candidate)) return candidate
    }
    if (dirname(folder) === folder) return undefined
  }
}

const onPath = () => (process.env.PATH ?? '').split(delimiter).filter(Boolean)
  .flatMap((dir) => (WINDOWS ? [`${BIN}.cmd`, BIN] : [BIN]).map((name) => join(dir, name))).find(executable)

/** The command that starts a sandbox: AGENCY_SANDBOX_CMD, else the installed bin, else the one on PATH. */
export function sandboxCommand () {
  const configured = (process.env.AGENCY_SANDBOX_CMD ?? '').trim()
  if (configured !== '') return splitCommand(configured)
  const found = installedBin() ?? onPath()
  if (found !== undefined) return [found]
  throw new Error([
    'no agency sandbox to use. Any one of these three ways works:',
    '  1. AGENCY_SANDBOX_URL=http://127.0.0.1:8080  attach to a sandbox that already runs (a container, a CI service)',
    "  2. AGENCY_SANDBOX_CMD='node /path/to/agency-sandbox/dist/bundle/cli.js'  the command that starts one",
    '  3. install the package in this project (npm install --save-dev ./agency-sandbox-<version>.tgz, or a git dependency):',
    `     its node_modules/.bin/${BIN} is found from ${process.cwd()} upwards, or \`${BIN}\` on PATH`,
    '(the package is not on the npm registry yet, so `npx agency-sandbox` cannot fetch it)'
  ].join('\n'))
}

// -- process groups: nothing outlives the test run ---------------------------------------------

/** Whether a process of the group still runs; on Linux an unreaped zombie (an orphan under an init that does not reap) counts as gone. */
function groupAlive (pgid) {
  if (process.platform === 'linux') {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue
      let stat
      try {
        stat = readFileSync(`/proc/${name}/stat`, 'latin1')
      } catch {
        continue
      }
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true
    }
    return false
  }
  try {
    process.kill(-pgid, 0)
    return true
  } catch (e) {
    return e.code === 'EPERM'
  }
}

function signalGroup (pgid, signal) {
  try {
    process.kill(-pgid, signal)
  } catch {}
}

const running = new Set()
let exitHooks = false

/**
 * Once per process: stop what still runs on exit and on SIGINT, SIGTERM, SIGHUP. After a signal
 * the sandboxes are stopped first, then the signal is raised again: with no other listener it
 * ends the process as it would have; a listener that left the exit to others (signal-exit, which
 * test runners load) acts on it now. A listener that exits at once (node --test's) ends the
 * process before the stop is done: the exit hook then signals the sandboxes.
 */
function stopAtExit () {
  if (exitHooks) return
  exitHooks = true
  // 'exit' allows no waiting: SIGTERM, and the sandbox closes itself (within 10 s, or exits at once).
  process.once('exit', () => {
    for (const sandbox of running) sandbox.signal('SIGTERM')
  })
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, async () => {
      await Promise.all([...running].map((sandbox) => sandbox.stop()))
      process.kill(process.pid, signal)
    })
  }
}

/**
 * The URL a started sandbox says it listens on: the stdout line that begins {"url":. Its stdout is
 * read to the end (the warnings it logs there are dropped), so that a full pipe never stalls it.
 */
function readyUrl (child, command, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the sandbox (${command}) did not say where it listens within ${timeoutMs} ms`)), timeoutMs)
    child.stdin.on('error', () => {}) // the sandbox may end first: nothing is ever written to it
    child.once('error', (e) => {
      clearTimeout(timer)
      reject(new Error(`could not run ${command}: ${e.message}`))
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the sandbox (${command}) exited with ${code ?? signal} before it was listening`))
    })
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{"url":')) return
      clearTimeout(timer)
      resolve(JSON.parse(line).url)
    })
  })
}

/** The control calls a test suite uses most, for the default world (SandboxProcess) or one world (SandboxWorld). */
class Controls {
  /** Back to the start: data, pending writes, journal, faults, clock, simulator, rate windows. */
  reset (keep) { return this.control('POST', '/reset', keep === undefined ? undefined : { keep }) }
  addFault (rule) { return this.control('POST', '/faults', rule) }
  faults () { return this.control('GET', '/faults') }
  setClock (now, frozen = true) { return this.control('PUT', '/clock', { now, frozen }) }
  advanceClock (seconds) { return this.control('POST', '/clock/advance', { seconds }) }
  clock () { return this.control('GET', '/clock') }
  requests (filter) { return this.control('GET', '/requests', undefined, filter) }
  writes (agencyId, filter) { return this.control('GET', `/agencies/${agencyId}/writes`, undefined, filter) }
}

export class SandboxProcess extends Controls {
  constructor (url, child, token) {
    super()
    this.url = url
    this.child = child
    this.token = token
  }

  /** Attaches to AGENCY_SANDBOX_URL, or starts a sandbox process and waits until it is healthy. */
  static async start ({ timeoutMs = 30_000 } = {}) {
    const token = process.env.AGENCY_SANDBOX_TOKEN
    if (process.env.AGENCY_SANDBOX_URL) {
      const attached = new SandboxProcess(process.env.AGENCY_SANDBOX_URL.replace(/\/$/, ''), undefined, token)
      await attached.waitHealthy(timeoutMs)
      return attached
    }
    const [command, ...args] = sandboxCommand()
    stopAtExit()
    // detached: a process group (a session) of its own on POSIX, so stop() reaches every process in it.
    // Port 0: the sandbox picks a free port and says which on stdout ({"url":...,"pid":...}). Its stdin
    // is a pipe this process holds: when this process ends, even killed, the pipe closes and the
    // sandbox stops itself (--exit-on-stdin-close), through any launcher in between.
    const child = spawn(command, [...args, 'serve', '--port', '0', '--db', ':memory:', '--log-level', 'warn', '--exit-on-stdin-close'], {
      stdio: ['pipe', 'pipe', 'inherit'], detached: !WINDOWS, shell: WINDOWS && /\.cmd$/i.test(command)
    })
    const sandbox = new SandboxProcess(undefined, child, token)
    running.add(sandbox)
    try {
      sandbox.url = await readyUrl(child, command, timeoutMs)
    } catch (e) {
      await sandbox.stop()
      throw e
    }
    return sandbox
  }

  async waitHealthy (timeoutMs) {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (this.child !== undefined && this.child.exitCode !== null) throw new Error(`the sandbox exited with ${this.child.exitCode}`)
      try {
        if ((await this.control('GET', '/health')).status === 'ok') return
      } catch {}
      if (Date.now() > deadline) throw new Error(`${this.url}/_sandbox/health did not answer within ${timeoutMs} ms`)
      await sleep(100)
    }
  }

  /** Sends a signal to every process the sandbox started (its process group); on Windows ends the tree. */
  signal (signal) {
    const pid = this.child?.pid
    if (pid === undefined) return
    if (WINDOWS) spawnSync('taskkill', ['/T', '/F', '/PID', String(pid)], { stdio: 'ignore' })
    else signalGroup(pid, signal)
  }

  /** Ends the sandbox's whole process group: SIGTERM, then SIGKILL after `graceMs`. */
  async stop ({ graceMs = STOP_GRACE_MS } = {}) {
    running.delete(this)
    const pid = this.child?.pid
    if (pid === undefined) return
    if (WINDOWS) {
      this.signal('SIGKILL')
      this.child = undefined
      return
    }
    // the group's id is the started process's pid, whether or not that process still runs
    for (const [signal, waitMs] of [['SIGTERM', graceMs], ['SIGKILL', 5_000]]) {
      signalGroup(pid, signal)
      const deadline = Date.now() + waitMs
      while (groupAlive(pid) && Date.now() < deadline) await sleep(50)
      if (!groupAlive(pid)) break
    }
    this.child = undefined
  }

  /** One control call of the default world (/_sandbox + path); throws with the status and problem body on an error. */
  control (method, path, body, q) { return controlCall(this.url, '/_sandbox', this.token, method, path, body, q) }

  /** A partner request (/vendor + path) with the demo credentials; the fetch Response. */
  vendor (method, path, body, q = {}) { return vendorCall(this.url, DEMO_AUTH, method, path, body, q) }

  /**
   * A new world of this sandbox (POST /_sandbox/worlds): of the start-up fixture, of `fixture`, or a
   * copy of the world `from` as it stands. Idle for `ttlSeconds`, the sandbox deletes it.
   */
  async createWorld ({ name, ttlSeconds = 600, fixture, from } = {}) {
    const created = await controlCall(this.url, '/_sandbox', this.token, 'POST', '/worlds', { name: name?.slice(0, 100), ttlSeconds, fixture, from })
    return new SandboxWorld(this, created)
  }
}

/**
 * One world of a sandbox: its credentials, and control calls that reach this world only. The vendor
 * API's base URL is the sandbox's; the Basic-auth Client Id picks the world, so `vendor()` reads and
 * writes this world as the world's copy of abc (`abc@<world id>`), or of the integration named.
 */
export class SandboxWorld extends Controls {
  constructor (sandbox, created) {
    super()
    this.sandbox = sandbox
    this.url = sandbox.url
    this.id = created.id
    this.name = created.name
    this.token = created.token
    this.expiresAt = created.expiresAt
    this.integrations = created.integrations
  }

  /** The Client Id and Client Secret of the world's copy of `clientId`. */
  credentials (clientId = 'abc') {
    const found = this.integrations.find((i) => i.clientId === clientId || i.clientId === `${clientId}@${this.id}`)
    if (found === undefined) throw new Error(`world ${this.id} has no integration ${clientId}; it has ${this.integrations.map((i) => i.clientId).join(', ')}`)
    return found
  }

  /** The Authorization header your integration sends to reach this world as `clientId`. */
  authorization (clientId = 'abc') {
    const { clientId: id, clientSecret } = this.credentials(clientId)
    return 'Basic ' + Buffer.from(`${id}:${clientSecret}`).toString('base64')
  }

  /** A partner request to this world (/vendor + path); the fetch Response. */
  vendor (method, path, body, q = {}, clientId = 'abc') { return vendorCall(this.url, this.authorization(clientId), method, path, body, q) }

  /** One control call of this world (/_sandbox/worlds/<id> + path); the sandbox's token opens every world, the world's own token this one. */
  control (method, path, body, q) {
    return controlCall(this.url, `/_sandbox/worlds/${encodeURIComponent(this.id)}`, this.sandbox.token || this.token, method, path, body, q)
  }

  /** Deletes the world: its credentials answer 401 from then on. A world already gone is fine. */
  async delete () {
    try {
      await controlCall(this.url, '/_sandbox', this.sandbox.token, 'DELETE', `/worlds/${encodeURIComponent(this.id)}`)
    } catch (e) {
      if (e.status !== 404) throw e
    }
  }
}

async function controlCall (base, prefix, token, method, path, body, q) {
  const headers = { accept: 'application/json' }
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${base}${prefix}${path}${query(q)}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  const parsed = text !== '' && /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text
  if (!res.ok) throw Object.assign(new Error(`${method} ${prefix}${path} answered ${res.status}: ${text}`), { status: res.status, body: parsed })
  return parsed
}

function vendorCall (base, authorization, method, path, body, q) {
  const headers = { authorization }
  if (body !== undefined) headers['content-type'] = 'application/json'
  return fetch(`${base}/vendor${path}${query(q)}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
}
