/**
 * Hosted mode answers each request about a world at the world's owner: every route the app
 * registers is classified, a partner route by its credentials, a control route of one world by
 * its path, and every other route is the process's (any instance answers it). A route added later
 * that is in none of these lists fails here until it is classified.
 */
import t from 'tap'
import { mayWrite, worldOfRequest, worldRouteUrls } from '../../src/plugins/world-of-request.js'
import { build } from '../helpers/app.js'
import type { FastifyRequest } from 'fastify'

/** The process's own routes: answered by whichever instance a request reaches. */
const PROCESS_ROUTES = [
  'GET /',
  'GET /_sandbox',
  'GET /_sandbox/health',
  'GET /_sandbox/signing-key',
  'GET /_sandbox/worlds',
  'POST /_sandbox/worlds',
  'DELETE /_sandbox/worlds/:worldId',
  'GET /_sandbox/tenants',
  'POST /_sandbox/tenants',
  'GET /_sandbox/tenants/:tenantId',
  'DELETE /_sandbox/tenants/:tenantId',
  'GET /_sandbox/meta',
  'GET /_sandbox/ui',
  'GET /_sandbox/ui/',
  'GET /_sandbox/ui/:file'
]

const requestTo = (method: string, url: string, path: string, authorization?: string) => ({
  method, url: path, routeOptions: { url }, params: url.includes(':worldId') ? { worldId: 'w1' } : {}, headers: { authorization }
}) as unknown as FastifyRequest

t.test('every route is a world\'s or the process\'s', async (t) => {
  const app = await build(t)
  const routes = app.routeTable.filter((r) => r.method !== 'HEAD')
  const world = worldRouteUrls(routes.map((r) => r.url))
  const processRoutes: string[] = []
  for (const { method, url } of routes) {
    if (url.startsWith('/vendor/')) {
      t.equal(worldOfRequest(requestTo(method, url, url, 'Basic ' + Buffer.from('abc@w0123456789:123').toString('base64')), world), 'w0123456789', `${method} ${url}: the world of the credentials`, { diagnostic: false })
      continue
    }
    const of = worldOfRequest(requestTo(method, url, url.replace(':worldId', 'w1')), world)
    if (of === undefined) processRoutes.push(`${method} ${url}`)
    else if (url.startsWith('/_sandbox/worlds/:worldId')) t.equal(of, 'w1', `${method} ${url}: the path's world`, { diagnostic: false })
    else {
      t.equal(of, 'default', `${method} ${url}: the default world's`, { diagnostic: false })
      t.ok(routes.some((r) => r.method === method && r.url === url.replace('/_sandbox', '/_sandbox/worlds/:worldId')), `${method} ${url} is the twin of a route of any world`, { diagnostic: false })
    }
  }
  t.same(processRoutes.filter((r) => !r.startsWith('GET /docs') && !r.startsWith('GET /openapi')).sort(), [...PROCESS_ROUTES].sort(), 'the process\'s routes, and no other')
  t.ok(routes.filter((r) => r.url.startsWith('/_sandbox/worlds/:worldId/')).length > 30, 'the routes of any world are many')
  t.equal(worldOfRequest(requestTo('GET', '/vendor/agencies', '/vendor/agencies', 'Basic ' + Buffer.from('abc:123').toString('base64')), world), 'default', 'a Client Id of no world: the default world')
  t.equal(worldOfRequest(requestTo('GET', '/vendor/agencies', '/vendor/agencies'), world), 'default', 'no credentials: the default world')
})

t.test('what may write: an operation by the table, a control call by its method', async (t) => {
  t.equal(mayWrite('POST', 'batchClients'), false, 'a batch read is a POST that reads')
  t.equal(mayWrite('POST', 'createClient'), true)
  t.equal(mayWrite('GET', undefined), false)
  t.equal(mayWrite('PATCH', undefined), true)
})
