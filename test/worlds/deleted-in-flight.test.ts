import t from 'tap'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { World } from '../../src/domain/worlds/world.js'
import { AGENCY, basic, build, demoFixture, queryHosted, type Teardown } from '../helpers/app.js'
import { logNote } from '../helpers/writes.js'

// In hosted mode a world expires at its owner, by the owner's sweep: a listing elsewhere does not end it mid-request.
const expiryHere = (process.env.SANDBOX_TEST_DATABASE_URL ?? '') !== '' && 'hosted mode: a world expires by its owner\'s sweep, not by a listing during the request'
const hostedOnly = (process.env.SANDBOX_TEST_DATABASE_URL ?? '') === '' && 'hosted mode only: a world deleted in PostgreSQL by another instance'

/**
 * Deletion and expiry are never a 5xx: a request in flight when its world is deleted (or expires)
 * answers as one sent after it would, 401 to a partner and 404 on the control plane, and nothing
 * is applied to the world. The test deletes the world at a chosen point of the request: while its
 * body is read (before any check runs), or at its handler's door (past every check).
 */

interface Created { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }

/** Where a request marked `x-delete-at` has its world deleted by the test. */
type Point = 'body' | 'handler'

async function sandbox (t: Teardown): Promise<{ app: FastifyInstance, at: Map<Point, (request: FastifyRequest) => Promise<void>> }> {
  const at = new Map<Point, (request: FastifyRequest) => Promise<void>>()
  const act = async (request: FastifyRequest, point: Point) => {
    if (request.headers['x-delete-at'] === point) await at.get(point)?.(request)
  }
  const app = await build(t, {
    beforeReady (app) {
      app.addHook('preParsing', async (request, _reply, payload) => {
        await act(request, 'body')
        return payload
      })
      // added last: past every check the sandbox makes, right before the handler
      app.addHook('preHandler', async (request) => act(request, 'handler'))
    }
  })
  return { app, at }
}

async function createWorld (app: FastifyInstance, body: object = {}): Promise<Created> {
  const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: body })
  if (res.statusCode !== 201) throw new Error(`POST /_sandbox/worlds answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

const authOf = (world: Created) => ({ authorization: basic(world.integrations[0].clientId, world.integrations[0].clientSecret) })

interface Attempt {
  name: string
  /** The request to `world`, deleted at `x-delete-at`. */
  request: (world: Created) => { method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, headers?: Record<string, string>, payload?: unknown }
  partner: boolean
}

const ATTEMPTS: Attempt[] = [
  { name: 'a partner write', partner: true, request: (w) => ({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, headers: authOf(w), payload: logNote() }) },
  { name: 'a partner read', partner: true, request: (w) => ({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: authOf(w), payload: { clientNumbers: [1000] } }) },
  { name: 'a fault rule', partner: false, request: (w) => ({ method: 'POST', url: `/_sandbox/worlds/${w.id}/faults`, payload: { effect: { status: 503 } } }) },
  { name: 'a clock setting', partner: false, request: (w) => ({ method: 'PUT', url: `/_sandbox/worlds/${w.id}/clock`, payload: { now: '2031-01-02T03:04:05Z' } }) },
  { name: 'a session', partner: false, request: (w) => ({ method: 'POST', url: `/_sandbox/worlds/${w.id}/sessions`, payload: { name: 'run' } }) },
  { name: 'an agency patch', partner: false, request: (w) => ({ method: 'PATCH', url: `/_sandbox/worlds/${w.id}/agencies/${AGENCY.main}`, payload: { supportsIncludes: false } }) },
  { name: 'a reset', partner: false, request: (w) => ({ method: 'POST', url: `/_sandbox/worlds/${w.id}/reset` }) },
  { name: 'a reset to a fixture', partner: false, request: (w) => ({ method: 'POST', url: `/_sandbox/worlds/${w.id}/reset`, payload: { ...smallFixture(), keep: ['journal'] } }) },
  { name: 'the state document', partner: false, request: (w) => ({ method: 'GET', url: `/_sandbox/worlds/${w.id}/state` }) }
]

function smallFixture () {
  const fixture = demoFixture()
  for (const agency of fixture.agencies) agency.clients = agency.clients.slice(0, 2)
  return fixture
}

for (const point of ['body', 'handler'] as const) {
  t.test(`deleted while ${point === 'body' ? 'its body is read' : 'past every check'}: 401 to a partner, 404 on the control plane, nothing applied`, async (t) => {
    const { app, at } = await sandbox(t)
    for (const attempt of ATTEMPTS) {
      const created = await createWorld(app)
      // the world as the request found it (in hosted mode, loaded when the request arrived)
      let world: World | undefined
      at.set(point, async () => {
        world = app.worlds.get(created.id)
        t.equal((await app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${created.id}` })).statusCode, 204, `${attempt.name}: the world is deleted meanwhile`)
      })
      const { headers, ...rest } = attempt.request(created)
      const res = await app.inject({ ...rest, headers: { ...headers, 'x-delete-at': point }, payload: rest.payload as object })
      t.equal(res.statusCode, attempt.partner ? 401 : 404, `${attempt.name}: ${attempt.partner ? 401 : 404} (${res.body.slice(0, 160)})`)
      if (attempt.partner) t.equal(res.body, 'The provided credentials are invalid', 'the documented sentence')
      else t.match(res.json().detail, /deleted/, 'saying the world was deleted')
      t.ok(world?.deleted, 'the world is gone')
      // (past every check, a handler that runs without a pause writes to no store: its answer says deleted all the same)
      if (point === 'body') t.same(world?.faults.list(), [], 'no fault rule was added to it')
      t.equal(world?.db.open, false, 'its database is closed, never opened again')
    }
  })
}

t.test('expired while in flight: the same answers', { skip: expiryHere }, async (t) => {
  const { app, at } = await sandbox(t)
  for (const attempt of [ATTEMPTS[0], ATTEMPTS[2]]) {
    const created = await createWorld(app, { ttlSeconds: 1 })
    at.set('body', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1100))
      // the next look at the worlds deletes the expired one
      await app.inject({ url: '/_sandbox/worlds' })
    })
    const { headers, ...rest } = attempt.request(created)
    const res = await app.inject({ ...rest, headers: { ...headers, 'x-delete-at': 'body' }, payload: rest.payload as object })
    t.equal(res.statusCode, attempt.partner ? 401 : 404, `${attempt.name}: ${res.body.slice(0, 160)}`)
  }
})

t.test('deleted by another instance while a request is at its owner: the same answers', { skip: hostedOnly }, async (t) => {
  const { app, at } = await sandbox(t)
  for (const attempt of [ATTEMPTS[0], ATTEMPTS[2], ATTEMPTS[3]]) {
    const created = await createWorld(app)
    let world: World | undefined
    at.set('handler', async () => {
      world = app.worlds.get(created.id)
      // as another instance deletes it, before this one hears of it: its lease goes with it
      const id = created.id
      await queryHosted(app, `WITH w AS (DELETE FROM sandbox_worlds WHERE world_id = '${id}'), l AS (DELETE FROM world_log WHERE world_id = '${id}'),
        o AS (DELETE FROM world_owners WHERE world_id = '${id}') UPDATE sandbox_catalogue SET version = version + 1`)
    })
    const { headers, ...rest } = attempt.request(created)
    const res = await app.inject({ ...rest, headers: { ...headers, 'x-delete-at': 'handler' }, payload: rest.payload as object })
    t.equal(res.statusCode, attempt.partner ? 401 : 404, `${attempt.name}: ${res.body.slice(0, 160)}`)
    t.equal(res.headers['retry-after'], undefined, 'nothing to retry')
    t.ok(world?.deleted, 'the world is gone')
  }
})

t.test('deleted while its first request is on its way (in hosted mode, while that request loads it): gone once the delete is answered', async (t) => {
  const { app } = await sandbox(t)
  // a race: ten rounds, so that some land the delete before the load ends
  for (let round = 0; round < 10; round++) {
    const created = await createWorld(app)
    const read = ATTEMPTS[1].request(created)
    const [first, deleted] = await Promise.all([
      app.inject({ ...read, payload: read.payload as object }),
      app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${created.id}` })
    ])
    t.equal(deleted.statusCode, 204, `round ${round}: deleted`)
    t.ok(first.statusCode === 200 || first.statusCode === 401, `the request on its way: answered before the delete, or as deleted (${first.statusCode})`)
    t.equal((await app.inject({ ...read, payload: read.payload as object })).statusCode, 401, 'a partner request after it: 401')
    t.equal((await app.inject({ url: `/_sandbox/worlds/${created.id}/clock` })).statusCode, 404, 'a control request after it: 404')
    t.equal(app.worlds.get(created.id), undefined, 'held nowhere')
  }
})

t.test('many requests in flight across a delete: none is a 5xx', async (t) => {
  const { app } = await sandbox(t)
  const created = await createWorld(app)
  const requests: Array<Promise<{ statusCode: number }>> = []
  for (let i = 0; i < 60; i++) {
    const attempt = ATTEMPTS[i % ATTEMPTS.length]
    const { headers, ...rest } = attempt.request(created)
    requests.push(app.inject({ ...rest, headers, payload: rest.payload as object }))
    if (i === 30) requests.push(app.inject({ method: 'DELETE', url: `/_sandbox/worlds/${created.id}` }))
  }
  const statuses = (await Promise.all(requests)).map((r) => r.statusCode)
  t.same(statuses.filter((s) => s >= 500), [], 'no 5xx')
  t.ok(statuses.some((s) => s === 401 || s === 404), 'some were answered as deleted')
})
