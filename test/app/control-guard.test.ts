import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { ConfigError, loadConfig } from '../../src/config.js'
import { DEMO, build } from '../helpers/app.js'
import { runCli, serveProcess } from '../helpers/process.js'

/**
 * The control plane is for loopback and the names it is given: a web page of another site cannot
 * drive it, and a page that rebinds its own DNS name to this machine cannot read it. Programs
 * (tests, the SDK, curl) send no browser headers and pass as before.
 */

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'
const MARKER = '2031-05-06T07:08:09.000Z'

/** The clock frozen at a marker: a reset that went through puts it back to real time. */
async function mark (app: FastifyInstance): Promise<void> {
  const res = await app.inject({ method: 'PUT', url: '/_sandbox/clock', payload: { now: MARKER, frozen: true } })
  if (res.statusCode !== 200) throw new Error(`marking the clock: ${res.statusCode}`)
}
const marked = async (app: FastifyInstance) => (await app.inject({ url: '/_sandbox/clock' })).json().now === MARKER
const sessions = async (app: FastifyInstance) => (await app.inject({ url: '/_sandbox/sessions' })).json().length as number

t.test('finding 2, DNS rebinding: a Host that is no loopback name, IP address or allowed name is 421, naming the setting', async (t) => {
  const app = await build(t)
  for (const host of ['rebind.example:8080', 'rebind.example.', 'localhost.rebind.example', '127.0.0.1.nip.io:8080', 'sandbox:8080']) {
    for (const url of ['/_sandbox/state', '/_sandbox/integrations', '/_sandbox/ui/', '/_sandbox', '/%5Fsandbox/state', '/_sandbox/worlds/2/state']) {
      const res = await app.inject({ url, headers: { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'user-agent': BROWSER } })
      t.equal(res.statusCode, 421, `${host} ${url}`)
      t.match(res.headers['content-type'], /^application\/problem\+json/)
      t.notMatch(res.body, /clientSecret/, 'no secret')
      t.match(res.json(), { type: /misdirected-host$/, status: 421, detail: /SANDBOX_ALLOWED_HOSTS \(serve --allowed-hosts\)/, errors: [{ field: 'Host' }] })
    }
  }
  await mark(app)
  const reset = await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { host: 'rebind.example:8080', 'content-type': 'application/json' } })
  t.equal(reset.statusCode, 421, 'a rebound page cannot reset either')
  t.ok(await marked(app), 'the sandbox was not reset')

  // Loopback names, IP addresses (no page can rebind one) and a missing Host pass.
  for (const host of ['localhost:8080', 'LOCALHOST.', 'app.localhost:8080', '127.0.0.1:8080', '127.1.2.3', '[::1]:8080', '10.1.2.3:8080', '[fd00::5]:80']) {
    t.equal((await app.inject({ url: '/_sandbox/info', headers: { host } })).statusCode, 200, host)
  }
  // Container and load-balancer health checks ask under any name.
  t.equal((await app.inject({ url: '/_sandbox/health', headers: { host: 'lb.internal.example' } })).statusCode, 200, 'health answers any Host')
  // The vendor API answers under any name a partner configures (it needs credentials).
  t.equal((await app.inject({ url: '/vendor/agencies?version=4.0', headers: { host: 'sandbox.ci.example', authorization: DEMO } })).statusCode, 200, 'the vendor API under any name')
})

t.test('SANDBOX_ALLOWED_HOSTS: exact names, .domain for subdomains, * for any; the configured HOST; bad entries refused', async (t) => {
  const app = await build(t, { config: loadConfig({ SANDBOX_DB: ':memory:', LOG_LEVEL: 'silent', LOG_PRETTY: 'false', HOST: 'sandbox.lan', SANDBOX_ALLOWED_HOSTS: 'agency-sandbox, .team.example ,CI-Box' }) })
  const status = async (host: string) => (await app.inject({ url: '/_sandbox/info', headers: { host } })).statusCode
  for (const host of ['agency-sandbox:8080', 'sandbox.lan:8080', 'team.example', 'a.b.team.example:80', 'ci-box']) t.equal(await status(host), 200, host)
  for (const host of ['agency-sandbox.evil.example', 'evilteam.example', 'sandbox.lan.evil', 'ci-box2']) t.equal(await status(host), 421, host)
  t.same((await app.inject({ url: '/_sandbox/info' })).json().settings.allowedHosts, ['agency-sandbox', '.team.example', 'ci-box'], 'info lists them')

  const any = await build(t, { config: { allowedHosts: ['*'] } })
  t.equal((await any.inject({ url: '/_sandbox/info', headers: { host: 'whatever.example' } })).statusCode, 200, '* answers any name')

  t.throws(() => loadConfig({ SANDBOX_ALLOWED_HOSTS: 'http://sandbox:8080' }), ConfigError)
  t.throws(() => loadConfig({ SANDBOX_ALLOWED_HOSTS: 'sandbox:8080' }), /not a host name; list names without scheme or port/)
  t.same(loadConfig({}).allowedHosts, [], 'none by default')
})

t.test('finding 2, cross-site: requests a page of another origin makes are 403; a link to a page still opens it', async (t) => {
  const app = await build(t)
  await mark(app)
  const before = await sessions(app)
  const pages: [string, Record<string, string>][] = [
    ['no-cors fetch', { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'user-agent': BROWSER }],
    ['sendBeacon', { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER }],
    ['a form', { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'content-type': 'application/x-www-form-urlencoded' }],
    ['Origin only', { origin: 'https://evil.example' }],
    ['Sec-Fetch-Site only', { 'sec-fetch-site': 'cross-site' }],
    ['another port of the same host', { origin: 'http://localhost:3000', 'sec-fetch-site': 'same-site' }],
    ['an opaque origin', { origin: 'null' }]
  ]
  const calls: ['POST' | 'DELETE' | 'PUT' | 'GET', string][] = [
    ['POST', '/_sandbox/reset'], ['POST', '/_sandbox/sessions'], ['DELETE', '/_sandbox/clock'], ['PUT', '/_sandbox/clock'], ['GET', '/_sandbox/state']
  ]
  for (const [page, headers] of pages) {
    for (const [method, url] of calls) {
      if (method === 'GET' && headers['sec-fetch-mode'] === 'navigate') continue // a link: below
      const res = await app.inject({ method, url, headers })
      t.equal(res.statusCode, 403, `${page}: ${method} ${url}`)
      t.match(res.json(), { type: /cross-site-request$/, detail: /came from/ })
    }
  }
  t.ok(await marked(app), 'no reset went through')
  t.equal(await sessions(app), before, 'no session was started')

  // A link followed to the console (or a report page) opens it; the same page in a frame does not.
  const nav = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'user-agent': BROWSER }
  t.equal((await app.inject({ url: '/_sandbox/ui/', headers: nav })).statusCode, 200, 'a cross-site link opens the console')
  t.equal((await app.inject({ url: '/_sandbox/ui/', headers: { ...nav, 'sec-fetch-dest': 'iframe' } })).statusCode, 403, 'not in a frame')
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: nav })).statusCode, 403, 'a cross-site form is no link')
  // The sandbox's own pages (the console, /docs) and a typed address pass.
  const host = 'localhost:8080'
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/sessions', headers: { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'user-agent': BROWSER }, payload: {} })).statusCode, 201, 'same origin')
  t.equal((await app.inject({ url: '/_sandbox/info', headers: { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'user-agent': BROWSER } })).statusCode, 200, 'a typed address')
})

t.test('finding 2, bodyless POSTs: a browser without Origin or Sec-Fetch needs a JSON type or the console header; programs pass', async (t) => {
  const app = await build(t)
  await mark(app)
  const oldBrowser = { 'user-agent': 'Mozilla/5.0 (Windows NT 6.1; Trident/7.0; rv:11.0) like Gecko' }
  for (const [method, url] of [['POST', '/_sandbox/reset'], ['POST', '/_sandbox/sessions'], ['DELETE', '/_sandbox/requests'], ['PATCH', '/_sandbox/agencies/1001']] as const) {
    const res = await app.inject({ method, url, headers: oldBrowser })
    t.equal(res.statusCode, 415, `${method} ${url}`)
    t.match(res.json().detail, /Content-Type: application\/json \(an empty body is fine\) or with an X-Sandbox-Console header/)
  }
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { referer: 'http://evil.example/' } })).statusCode, 415, 'a Referer marks a browser too')
  t.ok(await marked(app), 'no reset went through')
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { ...oldBrowser, 'content-type': 'application/json' } })).statusCode, 200, 'a JSON type passes')
  await mark(app)
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { ...oldBrowser, 'x-sandbox-console': '1' } })).statusCode, 200, 'the console header passes')
  await mark(app)
  // What the SDK, the language fixtures in examples/ and curl send: no content type, no browser marks.
  for (const agent of [undefined, 'node', 'Python-urllib/3.11', 'Java-http-client/17.0.12', 'curl/8.5.0']) {
    const res = await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: agent === undefined ? {} : { 'user-agent': agent } })
    t.equal(res.statusCode, 200, `a bodyless reset from ${agent ?? 'a client without User-Agent'}`)
  }
})

t.test('framing and sniffing: the console cannot be framed by another origin; nosniff on every answer', async (t) => {
  const app = await build(t, { config: { controlToken: 'secret' } })
  for (const url of ['/_sandbox/ui/', '/_sandbox/ui/app.js', '/_sandbox/health', '/_sandbox/info', '/_sandbox/nowhere']) {
    const res = await app.inject({ url })
    t.equal(res.headers['content-security-policy'], "frame-ancestors 'self'", `${url} (${res.statusCode})`)
    t.equal(res.headers['x-frame-options'], 'SAMEORIGIN', url)
    t.equal(res.headers['x-content-type-options'], 'nosniff', url)
  }
  const answers = [
    await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } }),
    await app.inject({ url: '/vendor/agencies?version=4.0' }),
    await app.inject({ url: '/vendor/agency/1001/client/1000?version=9' }),
    await app.inject({ url: '/vendor/agency/%zz/offices' }),
    await app.inject({ url: '/nowhere' }),
    await app.inject({ url: '/docs/json' })
  ]
  for (const res of answers) t.equal(res.headers['x-content-type-options'], 'nosniff', `${res.statusCode} ${res.body.slice(0, 60)}`)

  // A fault answer, and a request the HTTP parser refuses (a raw socket answer).
  const open = await build(t)
  await open.inject({ method: 'POST', url: '/_sandbox/faults', payload: { match: { path: '/vendor/agencies' }, effect: { status: 418 } } })
  t.equal((await open.inject({ url: '/vendor/agencies?version=4.0' })).headers['x-content-type-options'], 'nosniff', 'a fault answer')
  const url = new URL(await open.listen({ host: '127.0.0.1', port: 0 }))
  const raw = await new Promise<string>((resolve) => {
    let data = ''
    const socket = connect(Number(url.port), '127.0.0.1', () => socket.write(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')))
    socket.on('close', () => resolve(data))
    socket.on('error', () => resolve(data))
  })
  t.match(raw, /^HTTP\/1\.1 431 [^]*X-Content-Type-Options: nosniff/i, 'the 431 of the HTTP parser')
})

/** GET through a real socket with any Host header (fetch cannot set Host). */
function getWithHost (origin: string, path: string, host: string): Promise<number> {
  const url = new URL(origin)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('a container: HOST=0.0.0.0 with the image\'s allowed name, as a partner\'s container reaches it; serve --allowed-hosts', { timeout: 60_000 }, async (t) => {
  const served = await serveProcess({ HOST: '0.0.0.0', SANDBOX_DB: ':memory:', SANDBOX_ALLOWED_HOSTS: 'agency-sandbox' })
  t.teardown(() => served.child.kill('SIGKILL'))
  const port = new URL(served.url).port
  t.equal(await getWithHost(served.url, '/_sandbox/info', `agency-sandbox:${port}`), 200, 'http://agency-sandbox:PORT')
  t.equal(await getWithHost(served.url, '/_sandbox/info', `127.0.0.1:${port}`), 200, 'the published port on loopback')
  t.equal(await getWithHost(served.url, '/_sandbox/info', `rebind.example:${port}`), 421, 'a rebound name')
  t.equal(await getWithHost(served.url, '/_sandbox/health', `rebind.example:${port}`), 200, 'the health check under any name')
  served.child.kill('SIGTERM')
  await served.exited

  const flagged = await serveProcess({ SANDBOX_DB: ':memory:' }, ['--allowed-hosts', 'sandbox.team.example'])
  t.teardown(() => flagged.child.kill('SIGKILL'))
  const flaggedPort = new URL(flagged.url).port
  t.equal(await getWithHost(flagged.url, '/_sandbox/info', `sandbox.team.example:${flaggedPort}`), 200, '--allowed-hosts')
  flagged.child.kill('SIGTERM')
  await flagged.exited

  const bad = await runCli(['serve', '--allowed-hosts', 'http://x', '--db', ':memory:'])
  t.equal(bad.code, 1)
  t.match(bad.stderr, /SANDBOX_ALLOWED_HOSTS: 'http:\/\/x' is not a host name/)
})
