/**
 * Isolation of worlds: nothing of one world is visible, countable or changeable from another, on
 * the vendor side (each world's credentials x every read in every version, and writes) and on the
 * control side (each world's token x every world's routes). Three worlds (the default one and two
 * created), each marked: client 1000 renamed after its world, a log note of its own, a session of
 * its own, its clock in a year of its own.
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

async function world (app: FastifyInstance, n: number): Promise<Marked> {
  let id = 'default'
  let token: string | undefined
  let suffix = ''
  if (n > 0) {
    const created = (await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { name: `world ${n}` }, headers: ADMIN })).json()
    id = created.id
    token = created.token
    suffix = `@${id}`
  }
  const prefix = n === 0 ? '/_sandbox' : `/_sandbox/worlds/${id}`
  const headers = token === undefined ? ADMIN : { authorization: `Bearer ${token}` }
  const mark = `Only in world ${n} ${id}`
  const year = String(2030 + n)
  const refId = `00000000-0000-4000-8000-00000000000${n}`
  await app.inject({ method: 'PATCH', url: `${prefix}/agencies/${AGENCY.main}/clients/1000`, payload: { details: { companyName: mark } }, headers })
  const abc = basic(`abc${suffix}`, '123')
  const northwind = basic(`northwind-crm${suffix}`, 'nw-sandbox-secret')
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
      const crossed = basic(`abc@${w.id}`, '123')
      if (w.id !== 'default' && o.id !== 'default') {
        t.equal((await app.inject({ url: `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`, headers: { authorization: crossed } })).json().details.companyName, w.mark)
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
