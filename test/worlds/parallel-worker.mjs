// One worker of the parallel-worlds test (parallel.test.ts): runs `tests` tests one after another
// against the sandbox at `url`, each in a world of its own, and prints one JSON line of results.
// Each test writes, adds a fault, moves the clock and resets, and checks exact counts, numbers and
// times that another worker's actions would change if they leaked into its world.
//
//   node parallel-worker.mjs <url> <worker> <tests> [<world JSON>]
//
// With a world (the answer of POST /_sandbox/worlds), every test uses that one world and none is
// created or deleted: how the test shows that its checks notice a world shared with another worker.
import { randomUUID } from 'node:crypto'

const [url, worker, count, shared] = process.argv.slice(2)
const AGENCY = 1001
/** Agency 1001's highest client number + 1: the number a fresh world gives next. */
const NEXT_CLIENT = 1260
const NEW_CLIENT = {
  People: [{ FirstName: 'Ada', LastName: 'Lovelace', MainContactType: 'First' }],
  Log: { Channel: 29, Note: 'New client', TS: '2026-11-20T10:00:00Z' }
}

class Mismatch extends Error {}

function expect (what, actual, expected) {
  const a = JSON.stringify(actual)
  const e = JSON.stringify(expected)
  if (a !== e) throw new Mismatch(`${what}: expected ${e}, got ${a}`)
}

async function call (method, path, { body, authorization } = {}) {
  const headers = {}
  if (authorization !== undefined) headers.authorization = authorization
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  const type = res.headers.get('content-type') ?? ''
  return { status: res.status, headers: res.headers, body: type.includes('json') && text !== '' ? JSON.parse(text) : text }
}

async function ok (method, path, options) {
  const res = await call(method, path, options)
  if (res.status >= 400) throw new Mismatch(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res
}

/** One test in `world`; the worlds' creation time when it made one. */
async function runTest (test, world) {
  const control = `/_sandbox/worlds/${world.id}`
  const abc = world.integrations.find((i) => i.clientId === `abc@${world.id}`)
  const authorization = 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64')
  const vendor = (method, path, body) => call(method, `/vendor${path}${path.includes('?') ? '&' : '?'}version=4.0`, { body, authorization })
  const note = () => vendor('POST', `/agency/${AGENCY}/client/1000/log`, { refId: randomUUID(), ts: '2026-11-20T10:00:00Z', channel: 29, note: `worker ${worker} test ${test}` })
  const writes = async () => (await ok('GET', `${control}/agencies/${AGENCY}/writes`)).body
  const journal = async () => (await ok('GET', `${control}/requests`)).body

  expect('a fresh world has no writes', await writes(), [])
  expect('a fresh world has no journal', await journal(), [])

  // writes: a few log notes and a new client, counted exactly
  const notes = 1 + ((test + Number(worker)) % 3)
  for (let i = 0; i < notes; i++) expect('log note status', (await note()).status, 200)
  const created = await vendor('POST', `/agency/${AGENCY}/client`, NEW_CLIENT)
  expect('the new client number', created.body.clientNumber, NEXT_CLIENT)
  const written = await writes()
  expect('writes of this world', written.map((w) => [w.kind, w.integration]), [...Array(notes).fill(['log', abc.clientId]), ['client', abc.clientId]])

  // a fault of this world answers this world's next request, once
  const mark = { world: world.id, worker, test }
  await ok('POST', `${control}/faults`, { body: { match: { path: '/vendor/agencies' }, effect: { status: 503, body: mark }, times: 1 } })
  const faulted = await vendor('GET', '/agencies')
  expect('the faulted answer', [faulted.status, faulted.body], [503, mark])
  expect('after the fault', (await vendor('GET', '/agencies')).status, 200)

  // the clock: a time no other worker or test sets
  const now = new Date(Date.UTC(2030 + Number(worker), 0, 1) + test * 86_400_000 + Number(worker) * 1000).toISOString()
  await ok('PUT', `${control}/clock`, { body: { now, frozen: true } })
  const dated = await vendor('GET', '/agencies')
  expect('Date from this world\'s clock', new Date(dated.headers.get('date')).toISOString(), now)
  expect('one more note', (await note()).status, 200)
  expect('received at this world\'s time', (await writes()).at(-1).receivedAt, now)

  // the journal holds this test's requests, and only them (the faulted one was answered before authentication)
  const entries = (await journal()).map((e) => (e.status === 503 ? 'faulted' : e.integration))
  expect('the journal', entries, [...Array(notes + 1).fill(abc.clientId), 'faulted', abc.clientId, abc.clientId, abc.clientId])

  // a reset within the test: back to the world's start
  await ok('POST', `${control}/reset`)
  expect('writes after the reset', await writes(), [])
  expect('faults after the reset', (await ok('GET', `${control}/faults`)).body, [])
  expect('journal after the reset', await journal(), [])
  expect('clock after the reset', (await ok('GET', `${control}/clock`)).body.frozen, false)
  expect('the client number after the reset', (await vendor('POST', `/agency/${AGENCY}/client`, NEW_CLIENT)).body.clientNumber, NEXT_CLIENT)
}

const results = { worker: Number(worker), tests: 0, failures: [], createMs: [], ms: 0 }
const started = performance.now()
for (let test = 0; test < Number(count); test++) {
  let world
  try {
    if (shared !== undefined) {
      world = JSON.parse(shared)
    } else {
      const before = performance.now()
      world = (await ok('POST', '/_sandbox/worlds', { body: { name: `worker ${worker} test ${test}`, ttlSeconds: 600 } })).body
      results.createMs.push(performance.now() - before)
    }
    await runTest(test, world)
  } catch (e) {
    results.failures.push({ test, message: e instanceof Mismatch ? e.message : String(e?.stack ?? e) })
  } finally {
    if (shared === undefined && world !== undefined) {
      const deleted = await call('DELETE', `/_sandbox/worlds/${world.id}`)
      if (deleted.status !== 204) results.failures.push({ test, message: `DELETE answered ${deleted.status}` })
    }
    results.tests++
  }
}
results.ms = performance.now() - started
process.stdout.write(JSON.stringify(results) + '\n')
