import t from 'tap'
import { connect } from 'node:net'
import controlPlane from '../../routes/control/index.js'
import { buildDocsInstance } from '../../src/plugins/openapi-docs.js'
import { docsPath } from '../../src/plugins/openapi.js'
import { build, testConfig } from '../helpers/app.js'

/**
 * /docs serves Swagger UI and nothing else: no URL under /docs reaches the control plane or the
 * vendor API, however its dots and slashes are spelled.
 */

/** Paths that, resolved as URLs, land outside /docs (most of them on the state with every secret). */
const ESCAPES = [
  '/docs/%2e%2e/_sandbox/state',
  '/docs/%2E%2E/_sandbox/state',
  '/docs/../_sandbox/state',
  '/docs/./../_sandbox/state',
  '/docs/%2E%2E%2F_sandbox%2Fstate',
  '/docs/..%2f_sandbox/state',
  '/docs/..%2F_sandbox%2Fstate',
  '/docs/.%2e/_sandbox/state',
  '/docs/%2e./_sandbox/state',
  '/docs/%252e%252e/_sandbox/state',
  '/docs/%252e%252e%252f_sandbox%252fstate',
  '/docs/..%252f_sandbox/state',
  '/docs/..\\_sandbox/state',
  '/docs/..%5c_sandbox/state',
  '/docs/%5c..%5c_sandbox/state',
  '/docs/static/../../_sandbox/state',
  '/docs/static/%2e%2e/%2e%2e/_sandbox/state',
  '/docs/json/../../_sandbox/integrations',
  '/docs/%2e%2e/_sandbox/agencies/1001/clients',
  '/docs/%2e%2e/vendor/agency/1001/clients?version=4.0',
  '/docs/%2e%2e/openapi/control.json',
  '/docs//_sandbox/state',
  '/docs/%2f_sandbox/state',
  '/docs/static/%2e%2e%2f%2e%2e%2f_sandbox%2fstate'
]

/** Swagger UI's own pages and assets: these keep working. */
const SERVED: [string, number, RegExp][] = [
  ['/docs', 200, /text\/html/],
  ['/docs/', 200, /text\/html/],
  ['/docs/json', 200, /application\/json/],
  ['/docs/yaml', 200, /yaml/],
  ['/docs/static/swagger-ui.css', 200, /text\/css/],
  ['/docs/static/swagger-ui-bundle.js', 200, /javascript/],
  ['/docs/static/swagger-initializer.js', 200, /javascript/],
  ['/docs/static/favicon-32x32.png', 200, /image\/png/],
  ['/docs/static/index.html', 302, /./],
  ['/docs/json?anything=1', 200, /application\/json/]
]

const leaks = (body: string) => /clientSecret|"integrations"|"clientNumber"|nw-sandbox-secret/.test(body)

t.test('docsPath lets through only what Swagger UI serves', async (t) => {
  for (const [url] of SERVED) t.ok(docsPath(url), url)
  t.equal(docsPath('/docs/json?x=/../../_sandbox/state'), '/docs/json', 'the query string is not forwarded')
  for (const url of [...ESCAPES, '/docs/static/', '/docs/static/.hidden', '/docs/static/a/b.js', '/docs/static/a..b', '/docsx', '/docs/json/', '/docs/initOAuth%00']) {
    t.equal(docsPath(url), undefined, url)
  }
})

/** app.inject resolves dot segments itself (WHATWG URL); these reach the docs route through it. */
const stillUnderDocs = (url: string) => new URL(url, 'http://localhost').pathname.startsWith('/docs/')

t.test('no /docs path reaches the control plane or the vendor API (app.inject)', async (t) => {
  const app = await build(t)
  const injectable = ESCAPES.filter(stillUnderDocs)
  t.ok(injectable.length >= 8, `${injectable.length} escapes arrive at /docs through inject`)
  for (const url of injectable) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url })
      t.equal(res.statusCode, 404, `${method} ${url}`)
      if (method === 'GET') t.match(res.headers['content-type'], /application\/problem\+json/, `${url}: the sandbox's own not-found`)
      t.notOk(leaks(res.body), `${method} ${url} answers no state`)
    }
  }
  for (const [url, status, type] of SERVED) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, status, url)
    t.match(res.headers['content-type'] ?? res.headers.location, type, url)
  }
})

/** Sends `GET <target>` exactly as written (no client-side normalisation) and returns the raw answer. */
function rawGet (port: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.setTimeout(10_000, () => socket.destroy(new Error(`timeout on ${target}`)))
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')))
    socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
  })
}

t.test('no /docs path reaches the control plane over a real socket (paths sent as written)', async (t) => {
  const app = await build(t)
  const port = new URL(await app.listen({ host: '127.0.0.1', port: 0 })).port
  for (const url of ESCAPES) {
    const answer = await rawGet(Number(port), url)
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1])
    t.ok(status === 404 || status === 400, `${url}: ${status}`)
    t.notOk(leaks(answer), `${url} answers no state`)
  }
  // a dot segment that resolves back into /docs is refused too, though the docs instance would serve it
  for (const url of ['/docs/static/../json', '/docs/%2e%2e/docs/json', '/docs/static/%2e%2e/static/swagger-ui.css']) {
    t.match(await rawGet(Number(port), url), /^HTTP\/1\.1 404/, url)
  }
  const page = await rawGet(Number(port), '/docs/')
  t.match(page, /^HTTP\/1\.1 200/)
  t.match(page, /swagger/i)
  const css = await rawGet(Number(port), '/docs/static/swagger-ui.css')
  t.match(css, /^HTTP\/1\.1 200/)
})

t.test('the documents instance answers Swagger UI routes only, whatever URL reaches it', async (t) => {
  const app = await build(t)
  const config = testConfig()
  const { app: docs } = await buildDocsInstance('test', async (docsApp, describe) => {
    await docsApp.register(async (scope) => {
      await describe(scope, 'control')
      await scope.register(controlPlane, { prefix: '/_sandbox', worlds: app.worlds, config })
    })
  })
  t.teardown(() => docs.close())
  for (const url of ['/_sandbox/state', '/_sandbox/integrations', '/_sandbox/health', '/docs/../_sandbox/state', '/docs/%2e%2e/_sandbox/state']) {
    const res = await docs.inject({ url })
    t.equal(res.statusCode, 404, url)
    t.notOk(leaks(res.body), `${url} answers no state`)
  }
  t.equal((await docs.inject({ method: 'POST', url: '/_sandbox/reset' })).statusCode, 404, 'nor changes anything')
  t.equal((await docs.inject({ url: '/docs/json' })).statusCode, 200)
  t.equal((await docs.inject({ url: '/docs/static/swagger-ui.css' })).statusCode, 200)
})
