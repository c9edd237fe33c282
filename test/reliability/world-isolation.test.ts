/**
 * Isolation of worlds: nothing of one world is visible, countable or changeable from another, on
 * the vendor side (each world's credentials x every read in every version, and writes) and on the
 * control side (each world's token x every world's routes). Three worlds (the default one and two
 * created), each marked: client 1000 renamed after its world, a log note of its own, a session of
 * its own, its clock in a year of its own. Then tenants: two, each with worlds of its own, beside
 * the default world and one of the administrator's: one tenant's token x every route of every
 * other world finds nothing and changes nothing.
 */
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { AGENCY, basic, build } from '../helpers/app.js'

const TOKEN = 'sandbox-token'
const ADMIN = { authorization: `Bearer ${TOKEN}` }

interface Marked {
  id: string
  /** Control path prefix of the world. */
  prefix: string
  token: string | undefined
  /** Authorization header of its abc and northwind integrations. */
  abc: string
  northwind: string
  mark: string
  year: string
  refId: string
  session: number
}

/** World n (0: the default one), created with the creator's token (a tenant's, or the sandbox's) and marked. */
async function world (app: FastifyInstance, n: number, creator: Record<string, string> = ADMIN): Promise<Marked> {
  let id = 'default'
  let token: string | undefined
  let suffix = ''
  // the default world's are the fixture's; a created world's, its own (the create answer's)
  const secrets = new Map([['abc', '123'], ['northwind-crm', 'nw-sandbox-secret']])
  if (n > 0) {
    const created = (await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { name: `world ${n}` }, headers: creator })).json()
    id = created.id
    token = created.token
    suffix = `@${id}`
    for (const i of created.integrations as Array<{ clientId: string, clientSecret: string }>) secrets.set(i.clientId.replace(suffix, ''), i.clientSecret)
  }
  const prefix = n === 0 ? '/_sandbox' : `/_sandbox/worlds/${id}`
  const headers = token === undefined ? ADMIN : { authorization: `Bearer ${token}` }
  const mark = `Only in world ${n} ${id}`
  const year = String(2030 + n)
  const refId = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
  await app.inject({ method: 'PATCH', url: `${prefix}/agencies/${AGENCY.main}/clients/1000`, payload: { details: { companyName: mark } }, headers })
  const abc = basic(`abc${suffix}`, secrets.get('abc')!)
  const northwind = basic(`northwind-crm${suffix}`, secrets.get('northwind-crm')!)
  const session = (await app.inject({ method: 'POST', url: `${prefix}/sessions`, payload: {}, headers })).json().id as number
  await app.inject({
    method: 'POST',
    url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`,
    headers: { authorization: abc },
    payload: { refId, ts: '2026-11-20T10:00:00Z', channel: 29, note: mark }
  })
  await app.inject({ method: 'PUT', url: `${prefix}/clock`, payload: { now: `${year}-06-01T00:00:00Z`, frozen: true }, headers })
  return { id, prefix, token, abc, northwind, mark, year, refId, session }
}

const READS = (v: '4.0' | '3.0' | '1') => {
  const q = v === '1' ? '' : `?version=${v}`
  const qa = v === '1' ? '?' : `?version=${v}&`
  return [
    { method: 'GET' as const, url: `/vendor/agencies${q}` },
    { method: 'GET' as const, url: `/vendor/agency/${AGENCY.main}/offices${q}` },
    { method: 'GET' as const, url: `/vendor/agency/${AGENCY.main}/clients${qa}asOf=2026-11-25T00:00:00Z` },
    { method: 'GET' as const, url: `/vendor/agency/${AGENCY.main}/client/1000${q}` },
    { method: 'POST' as const, url: `/vendor/agency/${AGENCY.main}/clients${q}`, payload: v === '1' ? [1000, 1001] : { clientNumbers: [1000, 1001] } },
    ...(v === '1' ? [] : [{ method: 'GET' as const, url: `/vendor/agency/${AGENCY.main}/clients/search${qa}policyNumber=HIG-1000-01` }]),
    ...(v === '4.0' ? [{ method: 'GET' as const, url: `/vendor/agency/${AGENCY.main}/users${q}` }] : [])
  ]
}

t.test('worlds x credentials x reads in every version: each world answers its own data only', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const worlds = [await world(app, 0), await world(app, 1), await world(app, 2)]
  for (const w of worlds) {
    const others = worlds.filter((o) => o !== w)
    for (const v of ['4.0', '3.0', '1'] as const) {
      for (const read of READS(v)) {
        for (const authorization of [w.abc, w.northwind]) {
          const res = await app.inject({ ...read, headers: { authorization } })
          const label = `world ${w.id} ${authorization === w.abc ? 'abc' : 'northwind'} ${read.method} ${read.url}`
          t.ok(res.statusCode < 500, `${label}: ${res.statusCode}`)
          for (const o of others) t.notOk(res.body.includes(o.mark), `${label}: nothing of world ${o.id}`)
          t.notOk(res.body.includes('@') && others.some((o) => o.id !== 'default' && res.body.includes(o.id)), `${label}: no other world's id`)
          if (res.statusCode === 200 && read.url.includes('/client/1000')) t.ok(res.body.includes(w.mark), `${label}: its own mark`)
        }
      }
    }
    const since = await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=2026-11-25T00:00:00Z`, headers: { authorization: w.abc } })
    t.same(since.json(), [1000], `world ${w.id}: only its own change is listed`)
    const date = (await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: w.abc } })).headers.date
    t.match(String(date), new RegExp(` ${w.year} `), `world ${w.id}: answers dated by its own clock`)
    for (const o of others) {
      // another world's secret with this world's Client Id opens nothing
      const crossed = basic(`abc@${w.id}`, Buffer.from(o.abc.slice(6), 'base64').toString().split(':')[1])
      if (w.id !== 'default' && o.id !== 'default') {
        t.equal((await app.inject({ url: `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`, headers: { authorization: crossed } })).statusCode, 401, `world ${w.id}: world ${o.id}'s secret is refused`)
      }
    }
  }
})

t.test('worlds x tokens x control routes: a world\'s token opens its routes only, and they show its own data only', async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const worlds = [await world(app, 0), await world(app, 1), await world(app, 2)]
  const routes = (prefix: string) => [
    { method: 'GET' as const, url: `${prefix}/info` },
    { method: 'GET' as const, url: `${prefix}/state` },
    { method: 'GET' as const, url: `${prefix}/requests` },
    { method: 'GET' as const, url: `${prefix}/sessions` },
    { method: 'GET' as const, url: `${prefix}/clock` },
    { method: 'GET' as const, url: `${prefix}/faults` },
    { method: 'GET' as const, url: `${prefix}/agencies/${AGENCY.main}/writes` },
    { method: 'GET' as const, url: `${prefix}/agencies/${AGENCY.main}/clients/1000` },
    { method: 'GET' as const, url: `${prefix}/integrations` }
  ]
  for (const w of worlds.filter((x) => x.token !== undefined)) {
    const own = { authorization: `Bearer ${w.token}` }
    for (const target of worlds) {
      for (const route of routes(target.prefix)) {
        const res = await app.inject({ ...route, headers: own })
        if (target === w) {
          t.equal(res.statusCode, 200, `${w.id}'s token on ${route.url}`)
          for (const o of worlds.filter((x) => x !== w)) {
            t.notOk(res.body.includes(o.mark), `${route.url}: nothing of world ${o.id}`)
            if (o.id !== 'default') t.notOk(res.body.includes(o.id), `${route.url}: no id of world ${o.id}`)
          }
        } else {
          t.equal(res.statusCode, 401, `${w.id}'s token on ${route.url}`)
          t.notOk(res.body.includes(target.mark), `${route.url}: refused without its data`)
        }
      }
      for (const change of [
        { method: 'POST' as const, url: `${target.prefix}/reset` },
        { method: 'POST' as const, url: `${target.prefix}/faults`, payload: { effect: { status: 503 } } },
        { method: 'DELETE' as const, url: `${target.prefix}/sessions/${target.session}` }
      ]) {
        if (target === w) continue
        t.equal((await app.inject({ ...change, headers: own })).statusCode, 401, `${w.id}'s token cannot ${change.method} ${change.url}`)
      }
    }
  }
  // nothing changed anywhere by the refused calls: each world still has its mark, its write and its session
  for (const w of worlds) {
    const headers = w.token === undefined ? ADMIN : { authorization: `Bearer ${w.token}` }
    t.match((await app.inject({ url: `${w.prefix}/agencies/${AGENCY.main}/clients/1000`, headers })).json().details.companyName, w.mark)
    const writes = (await app.inject({ url: `${w.prefix}/agencies/${AGENCY.main}/writes`, headers })).json() as Array<{ refId: string }>
    t.same(writes.map((x) => x.refId), [w.refId], `world ${w.id}: its own write only`)
    const info = (await app.inject({ url: `${w.prefix}/info`, headers })).json()
    t.same(info.counts.writes, { pending: 0, applied: 1 }, `world ${w.id}: counts its own writes only`)
    t.equal(info.counts.faults, 0)
    const sessions = (await app.inject({ url: `${w.prefix}/sessions`, headers })).json() as Array<{ id: number, recorded: number }>
    t.same(sessions.map((s) => s.id), [w.session], `world ${w.id}: its own session only`)
    t.ok(sessions[0].recorded >= 1, 'which recorded its own requests')
  }
})

/** A path of the route table with its parameters filled for the world `worldId` (the target's session for :id under sessions). */
function filled (url: string, worldId: string, session: number): string {
  return url
    .replace(':worldId', worldId)
    .replace(':agencyId', String(AGENCY.main))
    .replace(':clientNumber', '1000')
    .replace(':clientId', `abc@${worldId}`)
    .replace(/sessions\/:id/, `sessions/${session}`)
    .replace(/:\w+/g, '1')
}

/** What a world holds, as its administrator reads it (the clock, counts, journal, writes, sessions, faults and data). */
async function holdings (app: FastifyInstance, prefix: string) {
  const read = async (url: string) => (await app.inject({ url: `${prefix}${url}`, headers: ADMIN })).body
  const info = JSON.parse(await read('/info'))
  return {
    clock: info.clock,
    counts: info.counts,
    journal: await read('/requests'),
    writes: await read(`/agencies/${AGENCY.main}/writes`),
    sessions: await read('/sessions'),
    faults: await read('/faults'),
    simulator: await read('/simulator'),
    state: await read('/state')
  }
}

t.test("tenants x every control route of a world: another tenant's token finds nothing there and changes nothing", async (t) => {
  const app = await build(t, { config: { controlToken: TOKEN } })
  const tenant = async (name: string) => (await app.inject({ method: 'POST', url: '/_sandbox/tenants', payload: { name }, headers: ADMIN })).json() as { id: string, token: string }
  const a = await tenant('A')
  const b = await tenant('B')
  const ofA = [await world(app, 1, { authorization: `Bearer ${a.token}` }), await world(app, 2, { authorization: `Bearer ${a.token}` })]
  const ofB = [await world(app, 3, { authorization: `Bearer ${b.token}` }), await world(app, 4, { authorization: `Bearer ${b.token}` })]
  const others = [await world(app, 0), await world(app, 5)]
  const asA = { authorization: `Bearer ${a.token}` }

  const routes = app.routeTable.filter((r) => r.url.startsWith('/_sandbox/worlds/:worldId') && r.method !== 'HEAD')
  t.ok(routes.length > 40, `${routes.length} routes of a world`)
  for (const target of [...ofB, ...others]) {
    const listedBefore = (await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.find((w: { id: string }) => w.id === target.id)
    const before = await holdings(app, target.prefix)
    const lastUsed = (await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.find((w: { id: string }) => w.id === target.id).lastUsedAt
    for (const route of routes) {
      const url = filled(route.url, target.id, target.session)
      const payload = ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined
      const res = await app.inject({ method: route.method as 'GET', url, headers: asA, ...(payload === undefined ? {} : { payload }) })
      t.equal(res.statusCode, 404, `A's token: ${route.method} ${url}`)
      t.notOk(res.body.includes(target.mark), 'without its data')
    }
    const listed = (await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.find((w: { id: string }) => w.id === target.id)
    t.equal(listed.lastUsedAt, lastUsed, `${target.id}: not even marked used`)
    t.same(await holdings(app, target.prefix), before, `${target.id}: clock, counts, journal, writes, sessions, faults and data unchanged`)
    t.ok(listedBefore !== undefined, 'listed to the administrator')
  }

  const listedToA = await app.inject({ url: '/_sandbox/worlds', headers: asA })
  t.same(listedToA.json().worlds.map((w: { id: string }) => w.id), ofA.map((w) => w.id), 'A lists its own worlds')
  for (const o of [...ofB, ...others]) {
    if (o.id !== 'default') t.notOk(listedToA.body.includes(o.id), `and never ${o.id}`)
    t.notOk(listedToA.body.includes(o.mark))
  }
  const all = (await app.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.map((w: { id: string }) => w.id)
  t.same([...all].sort(), [...ofA, ...ofB, ...others].map((w) => w.id).sort(), 'the administrator sees every world')
  for (const w of ofA) {
    const res = await app.inject({ url: `${w.prefix}/agencies/${AGENCY.main}/clients/1000`, headers: asA })
    t.equal(res.json().details.companyName, w.mark, `A's token opens its own world ${w.id}`)
  }

  // every route outside /_sandbox/worlds that is the default world's or the administrator's: 403, and nothing changes
  const open = /^\/_sandbox\/(health|signing-keys?|meta|ui)(\/|$)/
  const process = app.routeTable.filter((r) => r.url.startsWith('/_sandbox/') && !r.url.startsWith('/_sandbox/worlds') && !open.test(r.url) && r.method !== 'HEAD')
  const defaultWorld = others[0]
  const before = await holdings(app, defaultWorld.prefix)
  const tenantsBefore = (await app.inject({ url: '/_sandbox/tenants', headers: ADMIN })).body
  for (const route of process) {
    const url = filled(route.url, 'default', defaultWorld.session).replace(':tenantId', b.id)
    const payload = ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined
    const res = await app.inject({ method: route.method as 'GET', url, headers: asA, ...(payload === undefined ? {} : { payload }) })
    t.equal(res.statusCode, 403, `A's token: ${route.method} ${url}`)
    t.notOk(res.body.includes(defaultWorld.mark), 'without its data')
  }
  t.same(await holdings(app, defaultWorld.prefix), before, 'the default world unchanged')
  t.equal((await app.inject({ url: '/_sandbox/tenants', headers: ADMIN })).body, tenantsBefore, 'the tenants unchanged')
})
