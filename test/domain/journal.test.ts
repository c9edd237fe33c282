import t from 'tap'
import { createHash } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { FastifyInstance } from 'fastify'
import { AGENCY, DEMO, IDLE, basic, build } from '../helpers/app.js'
import { serveProcess } from '../helpers/process.js'
import { logNote } from '../helpers/writes.js'
import { loadConfig } from '../../src/config.js'
import { MAX_GLOB_LENGTH, MAX_MATCHED_PATH, PATH_CUT_MARKER } from '../../src/domain/glob.js'
import { MAX_FAULT_RULES } from '../../src/domain/faults.js'
import { DEFAULT_JOURNAL_BYTES, ENTRY_OVERHEAD_BYTES, Journal, MAX_BODY_TEXT, type JournalInput } from '../../src/domain/journal.js'

const ctl = (app: FastifyInstance, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload }) })
const journalCount = async (app: FastifyInstance) => (await ctl(app, 'GET', '/info')).json().counts.journal as number

/** A 64 KB body of empty objects, `[{},{},…]`: 21,800 objects once parsed. */
const EMPTY_OBJECTS = '[' + Array(21_800).fill('{}').join(',') + ']'

/** A garbage collection on demand (the flag can be set at run time; `gc` then exists in new contexts). */
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heapAfterGc = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}
const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

const input = (url: string, json?: string): JournalInput => ({
  url,
  requestId: undefined,
  warnings: [],
  body: json === undefined ? undefined : { json },
  fault: null,
  answerLost: null,
  method: 'POST',
  version: '4.0',
  integration: 'abc',
  agencyId: null,
  status: 200,
  durationMs: 0
})

t.test('the journal is bounded in bytes as well as entries; the oldest go first; clear gives everything back', async (t) => {
  const budget = 100_000
  const journal = new Journal(1000, budget)
  const body = JSON.stringify('x'.repeat(9_000))
  for (let i = 0; i < 50; i++) journal.record(input(`/vendor/${i}`, body), i)
  t.ok(journal.bytes <= budget, `accounted ${journal.bytes} bytes within the budget of ${budget}`)
  t.equal(journal.size, 10, 'each entry takes about 10 KB: ten fit')
  t.same((await journal.list()).map((e) => e.id), [41, 42, 43, 44, 45, 46, 47, 48, 49, 50], 'the newest kept, oldest first')
  t.equal((await journal.list())[0].body, 'x'.repeat(9_000), 'a kept body reads back as the parsed JSON')

  journal.record(input('/vendor/small'), 99)
  t.equal(journal.size, 11, 'a small entry fits beside them')
  journal.record(input('/vendor/huge', JSON.stringify('y'.repeat(budget))), 100)
  t.equal(journal.size, 11, 'an entry larger than the whole budget is not kept (and drops nothing)')

  const counted = new Journal(3, budget)
  for (let i = 0; i < 5; i++) counted.record(input(`/vendor/${i}`), i)
  t.same((await counted.list()).map((e) => e.path), ['/vendor/2', '/vendor/3', '/vendor/4'], 'the entry count still bounds it')
  t.equal(counted.bytes, 3 * (ENTRY_OVERHEAD_BYTES + 2 * '/vendor/0'.length))

  await journal.clear()
  t.equal(journal.size, 0)
  t.equal(journal.bytes, 0)
  t.same((await journal.list()), [])
  journal.record(input('/vendor/after'), 101)
  t.same((await journal.list()).map((e) => e.id), [52], 'ids keep rising after a clear')
})

t.test('DELETE /_sandbox/requests: /_sandbox/info counts 0 journal entries afterwards', async (t) => {
  const app = await build(t)
  for (let i = 0; i < 3; i++) await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })
  t.equal(await journalCount(app), 3)
  t.equal((await ctl(app, 'DELETE', '/requests')).statusCode, 204)
  t.equal(await journalCount(app), 0, 'the count is of entries kept, not of entries ever made')
  await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })
  t.equal(await journalCount(app), 1)
  t.match((await ctl(app, 'GET', '/info')).json().settings, { journalSize: 1000, journalBytes: DEFAULT_JOURNAL_BYTES })
})

t.test('bodies are kept compactly: whole JSON when small, the start of the text when large, size and digest when not authenticated', async (t) => {
  const app = await build(t)
  const log = `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`
  const json = { authorization: DEMO, 'content-type': 'application/json' }
  const note = logNote()
  await app.inject({ method: 'POST', url: log, headers: json, payload: JSON.stringify(note) })
  await app.inject({ method: 'POST', url: log, headers: json, payload: EMPTY_OBJECTS })
  await app.inject({ method: 'POST', url: log, headers: { ...json, authorization: basic('abc', 'wrong') }, payload: EMPTY_OBJECTS })
  await app.inject({ method: 'POST', url: '/vendor/no-such-operation', headers: { 'content-type': 'application/json' }, payload: '{"a":1}' })
  const [small, large, unauthenticated, unknownRoute] = (await ctl(app, 'GET', '/requests')).json()

  t.same(small.body, note, 'a small body reads back as the JSON sent')
  t.equal(large.status, 400)
  t.same(Object.keys(large.body).sort(), ['bytes', 'text', 'truncated'])
  t.match(large.body, { truncated: true, bytes: EMPTY_OBJECTS.length })
  t.equal(large.body.text, EMPTY_OBJECTS.slice(0, MAX_BODY_TEXT), `a large body keeps its first ${MAX_BODY_TEXT} characters of text`)
  t.equal(unauthenticated.status, 401)
  t.same(unauthenticated.body, { bytes: EMPTY_OBJECTS.length, read: false }, 'a body never read (401): its declared size only')
  // an unknown operation is answered 404 without authentication, after its body was read
  t.match(unknownRoute, { status: 404, integration: null })
  t.same(unknownRoute.body, { bytes: 7, sha256: '015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862' }, 'a body read without authentication: size and SHA-256 only')

  // the text as sent, not the parsed JSON written out again: its size and digest are the body's own
  const spaced = '{ "a": [1, 2],\n  "b": "\\u00e9" }'
  await app.inject({ method: 'POST', url: '/vendor/no-such-operation', headers: { 'content-type': 'application/json' }, payload: spaced })
  const [entry] = (await ctl(app, 'GET', '/requests?limit=1')).json()
  t.same(entry.body, { bytes: spaced.length, sha256: createHash('sha256').update(spaced).digest('hex') }, 'the size and digest of the bytes sent')
})

t.test('1,000 POSTs of a 64 KB body answered 403 are refused before their bodies are read; the journal keeps their declared size', { timeout: 300_000 }, async (t) => {
  const app = await build(t)
  // Over a socket: an injected request whose body is never read keeps its stream open.
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const { journal } = app.worlds.default
  const before = heapAfterGc()
  const headers = { authorization: IDLE, 'content-type': 'application/json' }
  for (let i = 0; i < 1000; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, { method: 'POST', headers, body: EMPTY_OBJECTS })
    await res.arrayBuffer()
    if (res.status !== 403) t.fail(`expected 403, got ${res.status}`)
  }
  const full = heapAfterGc()
  t.comment(`heap ${MiB(before)} before, ${MiB(full)} after (accounted ${MiB(journal.bytes)})`)
  t.ok(full - before < journal.budgetBytes / 4, `the heap grew by ${MiB(full - before)} (once parsed, these bodies took 1.3 GB)`)
  const listed = await ctl(app, 'GET', '/requests?limit=1')
  t.same(listed.json()[0].body, { bytes: EMPTY_OBJECTS.length, read: false }, 'the body was never read: its declared size only')
})

t.test('1,000 authenticated POSTs of a 64 KB body stay within the byte budget, and a clear gives the memory back', { timeout: 300_000 }, async (t) => {
  const app = await build(t)
  const { journal } = app.worlds.default
  const before = heapAfterGc()
  const headers = { authorization: DEMO, 'content-type': 'application/json' }
  for (let i = 0; i < 1000; i++) {
    const res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, headers, payload: EMPTY_OBJECTS })
    if (res.statusCode !== 400) t.fail(`expected 400, got ${res.statusCode}`)
  }
  t.ok(journal.bytes <= journal.budgetBytes, `accounted ${MiB(journal.bytes)} within the budget of ${MiB(journal.budgetBytes)} (${journal.size} entries)`)
  const full = heapAfterGc()
  t.comment(`heap ${MiB(before)} before, ${MiB(full)} with the journal full (accounted ${MiB(journal.bytes)})`)
  t.ok(full - before < 2 * journal.budgetBytes, `the heap grew by ${MiB(full - before)}, within twice the budget`)

  const listed = await ctl(app, 'GET', '/requests?limit=1')
  t.match(listed.json()[0].body, { truncated: true, bytes: EMPTY_OBJECTS.length })
  t.equal((await ctl(app, 'DELETE', '/requests')).statusCode, 204)
  t.equal(journal.bytes, 0)
  t.equal(await journalCount(app), 0)
  const cleared = heapAfterGc()
  t.comment(`heap ${MiB(cleared)} after the clear`)
  t.ok(cleared - before < journal.budgetBytes / 4, `the clear gave the memory back (${MiB(cleared - before)} above the start)`)
})

t.test('paths are recorded and matched cut at the cap; a maximum-length pathological glob over a journal of maximum-length paths', { timeout: 300_000 }, async (t) => {
  const app = await build(t)
  const segment = (n: number) => 'a'.repeat(n)
  // Half the paths have a first segment of 15,000 a's, half one of 100 a's and then more.
  const long = `/vendor/${segment(15_000)}`
  const short = `/vendor/${segment(100)}/${segment(14_000)}`
  for (let i = 0; i < 1000; i++) await app.inject({ url: i % 2 === 0 ? long : short, headers: { authorization: DEMO } })
  const entries = (await ctl(app, 'GET', '/requests')).json() as { id: number; path: string }[]
  t.ok(entries.length > 100, `${entries.length} entries kept within the byte budget`)
  const longIds = entries.filter((e) => e.path.startsWith(`/vendor/${segment(MAX_MATCHED_PATH - 8)}`)).map((e) => e.id)
  t.ok(longIds.length >= entries.length / 2 - 1)
  t.equal(entries[0].path.length, MAX_MATCHED_PATH + PATH_CUT_MARKER.length, 'a long path is recorded cut, with the marker')
  t.ok(entries[0].path.endsWith(PATH_CUT_MARKER))

  // `*a` repeated keeps one state alive for every a read: the automaton's worst case, at full width.
  const glob = '/vendor/' + '*a'.repeat(122) + '**'
  t.ok(glob.length <= MAX_GLOB_LENGTH)
  let started = performance.now()
  let queryDone = false
  const query = ctl(app, 'GET', `/requests?path=${encodeURIComponent(glob)}`).then((res) => {
    queryDone = true
    return res
  })
  t.equal((await ctl(app, 'GET', '/health')).statusCode, 200)
  t.notOk(queryDone, 'a health check is answered while the query is still running: the query gives other requests their turn')
  const res = await query
  const ms = performance.now() - started
  t.equal(res.statusCode, 200)
  t.same((res.json() as { id: number }[]).map((e) => e.id), longIds, 'exactly the paths whose first segment holds 122 a’s or more')
  t.comment(`query with a ${glob.length}-character glob over 1,000 paths of ${MAX_MATCHED_PATH} characters: ${ms.toFixed(1)} ms (this machine, not asserted)`)

  const tooLong = await ctl(app, 'GET', `/requests?path=${encodeURIComponent('*'.repeat(MAX_GLOB_LENGTH + 1))}`)
  t.equal(tooLong.statusCode, 400, 'a glob over the cap is refused')
  t.match(tooLong.body, /path/, 'naming the field')
  t.equal((await ctl(app, 'POST', '/faults', { match: { path: 'x'.repeat(MAX_GLOB_LENGTH + 1) }, effect: { status: 503 } })).statusCode, 400, 'as is a fault glob over the cap')

  // Fault rules see the same cut path: a rule matching the first segment answers, one matching the cut-off end does not.
  t.equal((await ctl(app, 'POST', '/faults', { match: { path: '**/' + segment(1) }, effect: { status: 502 } })).statusCode, 201)
  t.equal((await ctl(app, 'POST', '/faults', { match: { path: glob }, effect: { status: 503 } })).statusCode, 201)
  started = performance.now()
  t.equal((await app.inject({ url: long, headers: { authorization: DEMO } })).statusCode, 503, 'the long glob matches the cut path')
  t.comment(`a ${long.length}-character path against two fault rules: ${(performance.now() - started).toFixed(1)} ms (not asserted)`)
  t.equal((await app.inject({ url: `/vendor/${segment(100)}/${segment(3000)}/a`, headers: { authorization: DEMO } })).statusCode, 404, 'the end of a path past the cap is not seen by fault rules')
  t.equal((await app.inject({ url: `/vendor/${segment(100)}/a`, headers: { authorization: DEMO } })).statusCode, 502)
})

t.test(`at most ${MAX_FAULT_RULES} fault rules at once: each is matched on every vendor request`, async (t) => {
  const app = await build(t)
  for (let i = 0; i < MAX_FAULT_RULES; i++) {
    const res = await ctl(app, 'POST', '/faults', { match: { path: `/vendor/${i}/**` }, effect: { status: 503 } })
    if (res.statusCode !== 201) t.fail(`rule ${i}: ${res.statusCode} ${res.body}`)
  }
  const refused = await ctl(app, 'POST', '/faults', { match: { path: '/vendor/**' }, effect: { status: 503 } })
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { status: 409, detail: /already 100 fault rules/ })
  t.equal((await ctl(app, 'GET', '/faults')).json().length, MAX_FAULT_RULES)
  t.equal((await ctl(app, 'DELETE', '/faults/fault-1')).statusCode, 204)
  t.equal((await ctl(app, 'POST', '/faults', { match: { path: '/vendor/**' }, effect: { status: 503 } })).statusCode, 201, 'room again once one is removed')
})

t.test('the byte budget is a setting: SANDBOX_JOURNAL_BYTES, or --journal-bytes on the command line', { timeout: 60_000 }, async (t) => {
  t.equal(loadConfig({}).journalBytes, DEFAULT_JOURNAL_BYTES)
  t.equal(loadConfig({ SANDBOX_JOURNAL_BYTES: '65536' }).journalBytes, 65536)
  for (const bad of ['-1', '16MiB', '1e6', String(2 ** 30 + 1)]) {
    t.throws(() => loadConfig({ SANDBOX_JOURNAL_BYTES: bad }), { name: 'ConfigError', message: /SANDBOX_JOURNAL_BYTES/ }, `refuses ${bad}`)
  }
  const app = await build(t, { config: { journalBytes: 3 * ENTRY_OVERHEAD_BYTES } })
  for (let i = 0; i < 5; i++) await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })
  t.equal(await journalCount(app), 2, 'a small budget keeps few entries')

  const served = await serveProcess({ SANDBOX_DB: ':memory:' }, ['--journal-bytes', '65536'])
  try {
    const info = await (await fetch(`${served.url}/_sandbox/info`)).json() as { settings: { journalBytes: number } }
    t.equal(info.settings.journalBytes, 65536)
  } finally {
    served.child.kill('SIGKILL')
    await served.exited
  }
})

t.test('an entry place is reused by the entries that follow: what is listed is always the entry of its own id', async (t) => {
  const journal = new Journal(3)
  for (let i = 1; i <= 3; i++) journal.record(input(`/vendor/${i}`), i)
  t.same((await journal.list()).map((e) => e.path), ['/vendor/1', '/vendor/2', '/vendor/3'], 'described once listed')
  for (let i = 4; i <= 5; i++) journal.record(input(`/vendor/${i}`), i)
  t.same((await journal.list()).map((e) => [e.id, e.path]), [[3, '/vendor/3'], [4, '/vendor/4'], [5, '/vendor/5']], 'a reused place describes its new entry, not the one it held')

  // a query that gives other requests their turn halfway: the entries written meanwhile take the places of those it has not reached
  const long = new Journal(1000)
  const urlOf = (i: number) => `/vendor/${i}/${'x'.repeat(2000)}`
  for (let i = 1; i <= 1000; i++) long.record(input(urlOf(i)), i)
  const listing = long.list()
  for (let i = 1001; i <= 2000; i++) long.record(input(urlOf(i)), i)
  const listed = await listing
  t.ok(listed.length > 0 && listed.length < 1000, `the query read ${listed.length} entries before the others took their places`)
  t.ok(listed.every((e) => e.id <= 1000 && e.path === urlOf(e.id)), 'each listed entry is the one of its id, as it was when the query began')
})
