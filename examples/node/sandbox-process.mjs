// A sandbox for Node test suites that needs only HTTP: start one as a process (or attach to a
// running one) and drive its control API. With the package installed you can also start it in
// your own process: `import { startSandbox } from 'agency-sandbox'`.
//
//   AGENCY_SANDBOX_URL    attach to a running sandbox (a container, a CI service) instead
//   AGENCY_SANDBOX_CMD    the command that starts one (default: "npx agency-sandbox")
//   AGENCY_SANDBOX_TOKEN  the control token, when the sandbox has one
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'

export const DEMO_AUTH = 'Basic ' + Buffer.from('abc:123').toString('base64')

const freePort = () => new Promise((resolve, reject) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address()
    server.close(() => resolve(port))
  }).on('error', reject)
})

const query = (q = {}) => {
  const entries = Object.entries(q).filter(([, v]) => v !== undefined && v !== null)
  return entries.length === 0 ? '' : '?' + new URLSearchParams(entries.map(([k, v]) => [k, String(v)]))
}

export class SandboxProcess {
  constructor (url, child, token) {
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
    const port = await freePort()
    const [command, ...args] = (process.env.AGENCY_SANDBOX_CMD ?? 'npx agency-sandbox').split(' ')
    const child = spawn(command, [...args, 'serve', '--port', String(port), '--db', ':memory:', '--log-level', 'warn'], {
      stdio: ['ignore', 'ignore', 'inherit']
    })
    const sandbox = new SandboxProcess(`http://127.0.0.1:${port}`, child, token)
    try {
      await sandbox.waitHealthy(timeoutMs)
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
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  async stop () {
    if (this.child === undefined || this.child.exitCode !== null) return
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    this.child.kill('SIGTERM')
    await exited
  }

  /** One control call (/_sandbox + path); throws with the status and problem body on an error. */
  async control (method, path, body, q) {
    const headers = { accept: 'application/json' }
    if (this.token) headers.authorization = `Bearer ${this.token}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${this.url}/_sandbox${path}${query(q)}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    const parsed = text !== '' && /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text
    if (!res.ok) throw Object.assign(new Error(`${method} ${path} answered ${res.status}: ${text}`), { status: res.status, body: parsed })
    return parsed
  }

  /** A partner request (/vendor + path) with the demo credentials; the fetch Response. */
  vendor (method, path, body, q = {}) {
    const headers = { authorization: DEMO_AUTH }
    if (body !== undefined) headers['content-type'] = 'application/json'
    return fetch(`${this.url}/vendor${path}${query(q)}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  }

  /** Back to the start: data, pending writes, journal, faults, clock, simulator, rate windows. */
  reset (keep) { return this.control('POST', '/reset', keep === undefined ? undefined : { keep }) }
  addFault (rule) { return this.control('POST', '/faults', rule) }
  setClock (now, frozen = true) { return this.control('PUT', '/clock', { now, frozen }) }
  requests (filter) { return this.control('GET', '/requests', undefined, filter) }
}
