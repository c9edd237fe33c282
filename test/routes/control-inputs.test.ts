import t from 'tap'
import { randomUUID } from 'node:crypto'
import { AGENCY, build } from '../helpers/app.js'

/**
 * Integers in control paths and queries are plain digits within range: anything Ajv would
 * coerce (exponents, Infinity, hex, signs, fractions, spaces) or that overflows is a 400 naming
 * the field and the accepted form, never a 500 or a lookup of `Infinity`.
 */

const BAD = ['1e999', 'Infinity', '-Infinity', 'NaN', '-1', '0', '0x10', '1.5', '1e3', '%2012', '12%20', '+12', '99999999999', '2147483648', '9'.repeat(90), '%EF%BC%91%EF%BC%92']
/**
 * Query values only: an empty path segment is another route, and a path parameter over 100
 * characters is the router's 414 (Fastify's maxParamLength).
 */
const BAD_QUERY_ONLY = ['', '9'.repeat(400)]

const REF = randomUUID()
const MAIN = String(AGENCY.main)
const CLIENT = '1000'

interface Case {
  method: 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE'
  /** the route as registered, for the completeness check */
  route: string
  /** builds the URL with one value in place of `field` (the others valid) */
  url: (v: Record<string, string>) => string
  fields: Record<string, string>
  query?: boolean
  body?: object
  /** accepted range, as the 400 names it */
  range: [number, number]
}

const ids = (...names: string[]) => Object.fromEntries(names.map((n) => [n, n === 'agencyId' ? MAIN : n === 'clientNumber' ? CLIENT : '1']))

const CASES: Case[] = [
  { method: 'PATCH', route: '/_sandbox/integrations/:clientId/agencies/:agencyId', url: (v) => `/_sandbox/integrations/abc/agencies/${v.agencyId}`, fields: ids('agencyId'), body: { optedOut: false }, range: [1, 2147483647] },
  { method: 'DELETE', route: '/_sandbox/integrations/:clientId/agencies/:agencyId', url: (v) => `/_sandbox/integrations/abc/agencies/${v.agencyId}`, fields: ids('agencyId'), range: [1, 2147483647] },
  { method: 'PATCH', route: '/_sandbox/agencies/:agencyId', url: (v) => `/_sandbox/agencies/${v.agencyId}`, fields: ids('agencyId'), body: { supportsIncludes: true }, range: [1, 2147483647] },
  { method: 'DELETE', route: '/_sandbox/agencies/:agencyId', url: (v) => `/_sandbox/agencies/${v.agencyId}`, fields: ids('agencyId'), range: [1, 2147483647] },
  { method: 'POST', route: '/_sandbox/agencies/:agencyId/offices', url: (v) => `/_sandbox/agencies/${v.agencyId}/offices`, fields: ids('agencyId'), body: {}, range: [1, 2147483647] },
  { method: 'DELETE', route: '/_sandbox/agencies/:agencyId/offices/:officeId', url: (v) => `/_sandbox/agencies/${v.agencyId}/offices/${v.officeId}`, fields: ids('agencyId', 'officeId'), range: [1, 2147483647] },
  { method: 'POST', route: '/_sandbox/agencies/:agencyId/users', url: (v) => `/_sandbox/agencies/${v.agencyId}/users`, fields: ids('agencyId'), body: {}, range: [1, 2147483647] },
  { method: 'DELETE', route: '/_sandbox/agencies/:agencyId/users/:userId', url: (v) => `/_sandbox/agencies/${v.agencyId}/users/${v.userId}`, fields: ids('agencyId', 'userId'), range: [1, 2147483647] },
  { method: 'GET', route: '/_sandbox/agencies/:agencyId/writes', url: (v) => `/_sandbox/agencies/${v.agencyId}/writes`, fields: ids('agencyId'), range: [1, 2147483647] },
  { method: 'GET', route: '/_sandbox/agencies/:agencyId/writes', url: (v) => `/_sandbox/agencies/${MAIN}/writes?kind=log&clientNumber=${v.clientNumber}`, fields: ids('clientNumber'), query: true, range: [1, 2147483647] },
  { method: 'GET', route: '/_sandbox/agencies/:agencyId/attachments/:refId/content', url: (v) => `/_sandbox/agencies/${v.agencyId}/attachments/${REF}/content`, fields: ids('agencyId'), range: [1, 2147483647] },
  { method: 'GET', route: '/_sandbox/agencies/:agencyId/clients', url: (v) => `/_sandbox/agencies/${v.agencyId}/clients?q=a`, fields: ids('agencyId'), range: [1, 2147483647] },
  { method: 'GET', route: '/_sandbox/agencies/:agencyId/clients', url: (v) => `/_sandbox/agencies/${MAIN}/clients?q=a&limit=${v.limit}`, fields: { limit: '5' }, query: true, range: [1, 1000] },
  { method: 'GET', route: '/_sandbox/agencies/:agencyId/clients/:clientNumber', url: (v) => `/_sandbox/agencies/${v.agencyId}/clients/${v.clientNumber}`, fields: ids('agencyId', 'clientNumber'), range: [1, 2147483647] },
  { method: 'PUT', route: '/_sandbox/agencies/:agencyId/clients/:clientNumber', url: (v) => `/_sandbox/agencies/${v.agencyId}/clients/${v.clientNumber}`, fields: ids('agencyId', 'clientNumber'), body: { details: {} }, range: [1, 2147483647] },
  { method: 'PATCH', route: '/_sandbox/agencies/:agencyId/clients/:clientNumber', url: (v) => `/_sandbox/agencies/${v.agencyId}/clients/${v.clientNumber}`, fields: ids('agencyId', 'clientNumber'), body: { deleted: false }, range: [1, 2147483647] },
  { method: 'DELETE', route: '/_sandbox/agencies/:agencyId/clients/:clientNumber', url: (v) => `/_sandbox/agencies/${v.agencyId}/clients/${v.clientNumber}`, fields: ids('agencyId', 'clientNumber'), range: [1, 2147483647] },
  { method: 'GET', route: '/_sandbox/requests', url: (v) => `/_sandbox/requests?agencyId=${v.agencyId}`, fields: ids('agencyId'), query: true, range: [1, 2147483647] },
  { method: 'GET', route: '/_sandbox/requests', url: (v) => `/_sandbox/requests?status=${v.status}`, fields: { status: '200' }, query: true, range: [0, 599] },
  { method: 'GET', route: '/_sandbox/requests', url: (v) => `/_sandbox/requests?limit=${v.limit}`, fields: { limit: '10' }, query: true, range: [1, 100000] }
]

/** Integer path parameters of the control plane: every route holding one must be in CASES. */
const INTEGER_PARAMS = /:(agencyId|clientNumber|officeId|userId)\b/
/** A world's routes are the default world's under this prefix (the same route code, registered twice). */
const WORLD_PREFIX = '/_sandbox/worlds/:worldId/'

t.test('every control route with an integer path parameter is covered', async (t) => {
  const app = await build(t)
  const covered = new Set(CASES.map((c) => `${c.method} ${c.route}`))
  const routes = app.routeTable.filter((r) => r.url.startsWith('/_sandbox/') && r.method !== 'HEAD' && INTEGER_PARAMS.test(r.url))
  t.ok(routes.length >= 30, `${routes.length} routes`)
  for (const r of routes) {
    const url = r.url.startsWith(WORLD_PREFIX) ? '/_sandbox/' + r.url.slice(WORLD_PREFIX.length) : r.url
    t.ok(covered.has(`${r.method} ${url}`), `${r.method} ${r.url} is tested`)
  }
})

t.test("a world's control routes check their integers as the default world's do", async (t) => {
  const app = await build(t)
  const world = (await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {} })).json() as { id: string }
  for (const c of CASES) {
    const field = Object.keys(c.fields)[0]
    const url = c.url({ ...c.fields, [field]: '1e999' }).replace('/_sandbox/', `/_sandbox/worlds/${world.id}/`)
    const res = await app.inject({ method: c.method, url, ...(c.body === undefined ? {} : { payload: c.body }) })
    t.equal(res.statusCode, 400, `${c.method} ${url}`)
    t.equal(res.json().errors?.[0]?.field, field, `${c.method} ${url}: names ${field}`)
  }
})

t.test('malformed and overflowing integers in control paths and queries are 400 naming the field, never 500', async (t) => {
  const app = await build(t)
  for (const c of CASES) {
    for (const field of Object.keys(c.fields)) {
      for (const bad of [...BAD, ...(c.query === true ? BAD_QUERY_ONLY : [])]) {
        const tooBig = /^[0-9]+$/.test(bad) && Number(bad) > c.range[1]
        const inRangeZero = bad === '0' && c.range[0] === 0
        if (inRangeZero) continue // status=0 is a dropped connection: valid
        const url = c.url({ ...c.fields, [field]: bad })
        const res = await app.inject({ method: c.method, url, ...(c.body === undefined ? {} : { payload: c.body }) })
        const label = `${c.method} ${url.slice(0, 120)}`
        t.equal(res.statusCode, 400, label)
        t.match(res.headers['content-type'], /application\/problem\+json/, label)
        const problem = res.json() as { errors?: { field: string; message: string }[] }
        t.equal(problem.errors?.[0]?.field, field, `${label}: names ${field}`)
        t.match(problem.errors?.[0]?.message, new RegExp(`whole number from ${c.range[0]} to ${c.range[1]} in plain digits`), `${label}: says the accepted form${tooBig ? ' (out of range)' : ''}`)
      }
    }
  }
})

t.test('a repeated integer query parameter is a 400 naming it; an over-long path id is 414', async (t) => {
  const app = await build(t)
  const long = await app.inject({ url: `/_sandbox/agencies/${'9'.repeat(400)}/clients` })
  t.equal(long.statusCode, 414)
  t.match(long.headers['content-type'], /application\/problem\+json/)
  const res = await app.inject({ url: `/_sandbox/agencies/${MAIN}/clients?q=a&limit=1&limit=2` })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'limit')
  t.match(res.json().errors[0].message, /given once/)
})

t.test('valid integers still work: the boundaries pass, lookups run', async (t) => {
  const app = await build(t)
  const clients = await app.inject({ url: `/_sandbox/agencies/${MAIN}/clients?q=a&limit=2` })
  t.equal(clients.statusCode, 200)
  t.ok(clients.json().length <= 2 && clients.json().length > 0)
  t.equal((await app.inject({ url: `/_sandbox/agencies/${MAIN}/clients?limit=1000` })).statusCode, 200)
  t.equal((await app.inject({ url: `/_sandbox/agencies/${MAIN}/clients?limit=1` })).json().length, 1)
  t.equal((await app.inject({ url: `/_sandbox/agencies/${MAIN}/clients/${CLIENT}` })).statusCode, 200)
  t.equal((await app.inject({ url: `/_sandbox/agencies/00${MAIN}/clients/${CLIENT}` })).statusCode, 200, 'leading zeros are digits')
  t.equal((await app.inject({ url: `/_sandbox/agencies/${MAIN}/writes?clientNumber=${CLIENT}` })).statusCode, 200)
  t.equal((await app.inject({ url: '/_sandbox/requests?agencyId=1001&status=0&limit=100000' })).statusCode, 200)
  t.equal((await app.inject({ url: '/_sandbox/requests?status=599&limit=1' })).statusCode, 200)
  const missing = await app.inject({ url: '/_sandbox/agencies/2147483647/clients' })
  t.equal(missing.statusCode, 404, 'the largest id is looked up')
  t.match(missing.json().detail, /2147483647/)
  for (const c of CASES) {
    const res = await app.inject({ method: c.method, url: c.url({ ...c.fields, ...Object.fromEntries(Object.keys(c.fields).map((f) => [f, String(c.range[1])])) }), ...(c.body === undefined ? {} : { payload: c.body }) })
    t.ok(res.statusCode < 500, `${c.method} ${c.route} at the top of the range: ${res.statusCode}`)
    const named = res.statusCode === 400 ? (res.json().errors ?? []).map((e: { field: string }) => e.field) : []
    for (const f of Object.keys(c.fields)) t.notOk(named.includes(f), `${c.method} ${c.route}: ${f} accepted`)
  }
})
