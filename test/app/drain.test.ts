/**
 * SIGTERM under load drains `agency-sandbox serve`: requests in flight when the signal comes get
 * their answers (held by a fault for a while, within SANDBOX_DRAIN_SECONDS); a request sent after
 * it is refused: its connection refused (idle kept-alive connections are closed at the signal), or,
 * one that reaches the app, 503 with Retry-After (in process, below: journaled in its world);
 * then the process exits 0. Every answer names its request id.
 */
import t from 'tap'
import { Agent, request } from 'node:http'
import { build, DEMO } from '../helpers/app.js'
import { serveProcess } from '../helpers/process.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Answer { status: number, headers: Record<string, string | string[] | undefined> }

/** A GET through `agent` (one kept-alive connection). */
function get (url: string, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: DEMO } }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }))
    })
    req.on('error', reject)
    req.end()
  })
}
const json = { 'content-type': 'application/json' }

t.test('SIGTERM under load: requests in flight answered, later ones refused, exit 0', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:', SANDBOX_DRAIN_SECONDS: '10' })
  t.teardown(() => served.child.kill('SIGKILL'))
  // the offices of agency 1001 take 1.5 s to answer
  const fault = await fetch(`${served.url}/_sandbox/faults`, { method: 'POST', headers: json, body: JSON.stringify({ match: { path: '/vendor/agency/1001/offices' }, effect: { delayMs: 1500 } }) })
  t.equal(fault.status, 201)

  // a connection opened before the signal, kept for a request sent after it
  const kept = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => kept.destroy())
  t.equal((await get(`${served.url}/vendor/agencies?version=4.0`, kept)).status, 200)

  // load: fast reads on their own connections, and slow ones in flight at the signal
  const load = { stop: false }
  const fast: number[] = []
  const fastLoad = Promise.all(Array.from({ length: 4 }, async () => {
    while (!load.stop) {
      fast.push(await fetch(`${served.url}/vendor/agency/1001/client/1000?version=4.0`, { headers: { authorization: DEMO } }).then((res) => res.status, () => 0))
    }
  }))
  const slow = Array.from({ length: 6 }, async () => {
    const res = await fetch(`${served.url}/vendor/agency/1001/offices?version=4.0`, { headers: { authorization: DEMO } })
    return { status: res.status, id: res.headers.get('x-request-id') }
  })
  await sleep(400)
  const signalled = Date.now()
  served.child.kill('SIGTERM')
  await sleep(200)
  load.stop = true

  // the kept connection was idle at the signal: closed then, so this one needs a new connection
  const late = await get(`${served.url}/vendor/agencies?version=4.0`, kept).catch((e: NodeJS.ErrnoException) => e.code)
  t.ok(late === 'ECONNREFUSED' || (typeof late === 'object' && late.status === 503 && late.headers['retry-after'] === '1'),
    `a request sent after the signal on a connection opened before is refused, or answered 503 with Retry-After (${typeof late === 'object' ? late.status : late})`)
  const refused = await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } }).then((res) => res.status, () => 'refused')
  t.ok(refused === 'refused' || refused === 503, `a new connection after the signal is refused (${refused})`)

  const answers = await Promise.all(slow)
  t.same(answers.map((a) => a.status), answers.map(() => 200), 'every request in flight at the signal got its answer')
  t.equal(new Set(answers.map((a) => a.id)).size, answers.length, 'each with a request id of its own')
  await fastLoad
  t.same([...new Set(fast)].filter((status) => status !== 200 && status !== 503 && status !== 0), [], `the fast load saw 200, then 503 or a refused connection (${fast.length} requests)`)
  const code = await served.exited
  const ms = Date.now() - signalled
  t.equal(code, 0, 'exit 0')
  t.ok(ms < 10_000, `exited ${ms} ms after the signal, once the requests in flight were answered (well within the drain's 10 s)`)
})

t.test('a request that reaches the app while it drains: 503 with Retry-After, its connection closed, journaled in its world', async (t) => {
  const app = await build(t)
  const world = await app.inject({ method: 'POST', url: '/_sandbox/worlds', headers: json, payload: '{}' })
  const { integrations } = world.json() as { integrations: Array<{ clientId: string, clientSecret: string }> }
  const basic = 'Basic ' + Buffer.from(`${integrations[0].clientId}:${integrations[0].clientSecret}`).toString('base64')
  app.operations.drain.begin()
  const res = await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: basic, 'x-request-id': 'late-1' } })
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '1')
  t.equal(res.headers.connection, 'close')
  t.equal(res.headers['x-request-id'], 'late-1', 'its request id echoed')
  t.match(res.json(), { status: 503, detail: /shutting down and takes no new requests; nothing was applied/ })
  const created = app.worlds.forClientId(integrations[0].clientId)
  t.not(created, app.worlds.default)
  const entries = JSON.parse(await created.journal.listJson({})) as Array<{ status: number, requestId: string }>
  t.same(entries.map((e) => [e.status, e.requestId]), [[503, 'late-1']], 'journaled in its own world, with its request id')
})
