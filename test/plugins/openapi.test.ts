import SwaggerParser from '@apidevtools/swagger-parser'
import t from 'tap'
import { build } from '../helpers/app.js'

/** `/vendor/agency/:agencyId/client/:clientId` → `/vendor/agency/{agencyId}/client/{clientId}` */
const openapiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}')

t.test('one valid OpenAPI 3 document per version and one for the control API, listing every route', async (t) => {
  const app = await build(t)
  const docs: Record<string, { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters?: { name: string; in: string }[] }>> }> = {}
  for (const name of ['4.0', '3.0', '1', 'control']) {
    const res = await app.inject({ url: `/openapi/${name}.json` })
    t.equal(res.statusCode, 200, name)
    docs[name] = res.json()
    t.equal(docs[name].openapi, '3.1.0')
    await t.resolves(SwaggerParser.validate(structuredClone(res.json())), `${name} validates as OpenAPI 3`)
  }
  const routes = app.routeTable.filter((r) => r.method !== 'HEAD')
  let vendorRoutes = 0
  for (const r of routes) {
    const doc = r.url.startsWith('/vendor/') ? docs[r.version ?? ''] : r.url.startsWith('/_sandbox/') ? docs.control : undefined
    if (doc === undefined) continue
    if (r.url.startsWith('/vendor/')) vendorRoutes++
    if (r.url.startsWith('/_sandbox/ui')) continue
    const op = doc.paths[openapiPath(r.url)]?.[r.method.toLowerCase()]
    t.ok(op !== undefined, `${r.method} ${r.url} (${r.version ?? 'control'}) is documented`)
  }
  t.equal(vendorRoutes, 11 + 9 + 7, 'every (version, operation) pair was registered')

  const create = docs['4.0'].paths['/vendor/agency/{agencyId}/client'].post
  t.ok(['200', '400', '401', '403', '429'].every((s) => s in create.responses), 'errors are documented')
  const attachment = docs['4.0'].paths['/vendor/agency/{agencyId}/client/{clientId}/attachment'].post
  t.ok(attachment.parameters!.some((p) => p.in === 'header' && p.name === 'refid'), 'attachment headers are documented')
  t.ok(docs['1'].paths['/vendor/agency/{agencyId}/client/{clientId}'].post, 'version 1 log note path')
  t.notOk(docs['3.0'].paths['/vendor/agency/{agencyId}/users'], 'users are not in 3.0')
  const ui = await app.inject({ url: '/docs' })
  t.equal(ui.statusCode, 200)
  t.match(ui.body, /swagger/i)
})

t.test('Swagger UI is answered from the documents instance: pages, assets, redirects, unknown paths', async (t) => {
  const app = await build(t)
  const css = await app.inject({ url: '/docs/static/swagger-ui.css' })
  t.equal(css.statusCode, 200)
  t.match(css.headers['content-type'], /text\/css/)
  t.ok(css.rawPayload.length > 10_000, 'the stylesheet arrives whole')
  const head = await app.inject({ method: 'HEAD', url: '/docs/static/swagger-ui.css' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  const moved = await app.inject({ url: '/docs/static/index.html' })
  t.equal(moved.statusCode, 302)
  t.equal(moved.headers.location, '/docs/')
  const initializer = await app.inject({ url: '/docs/static/swagger-initializer.js' })
  t.equal(initializer.statusCode, 200)
  t.match(initializer.body, /\/openapi\/control\.json/, 'the UI lists the control document too')
  const unknown = await app.inject({ url: '/docs/no-such-page' })
  t.equal(unknown.statusCode, 404)
  t.match(unknown.headers['content-type'], /application\/problem\+json/, 'the sandbox\'s own not-found answer')
  // the documents come from the same instance, built once
  t.equal((await app.inject({ url: '/openapi/4.0.json' })).statusCode, 200)
})

t.test('each version\'s document pins its version parameter and groups operations by tag', async (t) => {
  const app = await build(t)
  type Op = { tags?: string[]; parameters?: { name: string; in: string; required?: boolean; schema?: { enum?: string[] } }[] }
  const doc = async (name: string) => (await app.inject({ url: `/openapi/${name}.json` })).json() as { paths: Record<string, Record<string, Op>> }
  for (const name of ['4.0', '3.0']) {
    const { paths } = await doc(name)
    for (const [path, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const version = op.parameters?.find((p) => p.in === 'query' && p.name === 'version')
        t.ok(version?.required === true, `${name} ${method} ${path}: version is required`)
        t.same(version?.schema?.enum, [name], `${name} ${method} ${path}: version allows ${name} only`)
        t.ok(op.tags?.length === 1 && ['agencies', 'clients', 'writes', 'users'].includes(op.tags[0]), `${name} ${method} ${path}: tagged (${op.tags})`)
      }
    }
  }
  const v1 = await doc('1')
  for (const [path, ops] of Object.entries(v1.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      t.notOk(op.parameters?.some((p) => p.in === 'query' && p.name === 'version'), `1 ${method} ${path}: no version parameter`)
    }
  }
  const tags = (await doc('4.0')).paths
  t.same(tags['/vendor/agencies'].get.tags, ['agencies'])
  t.same(tags['/vendor/agency/{agencyId}/users'].get.tags, ['users'])
  t.same(tags['/vendor/agency/{agencyId}/client'].post.tags, ['writes'])
  t.same(tags['/vendor/agency/{agencyId}/clients'].post.tags, ['clients'])
  t.same(v1.paths['/vendor/agency/{agencyId}/client/{clientId}'].post.tags, ['writes'], 'the version 1 log note is a write')
})
