/**
 * A large world's state document is written on the fixture worker a piece at a time as its
 * reader takes it: neither thread holds the whole document. The answer is chunked (its length is
 * known at its end) and byte for byte the world's own document; a reader that takes nothing for
 * a while gives it up, so that its place among the worker's jobs and its read transaction end.
 */
import t from 'tap'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { request } from 'node:http'
import { FixtureRunner, MAX_FIXTURE_JOBS } from '../../src/domain/worlds/fixture-runner.js'
import { snapshotOf } from '../../src/domain/worlds/starts.js'
import { build, grownDemoFixture, testConfig } from '../helpers/app.js'

const WORKER = new URL('../../dist/src/domain/worlds/fixture-worker.js', import.meta.url)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test('a large world\'s state is sent chunked, piece by piece, and is the world\'s own document', async (t) => {
  const app = await build(t, { fixture: grownDemoFixture((_fixture, clients) => clients >= 3_000) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const req = request({ host: '127.0.0.1', port, path: '/_sandbox/state' })
  req.end()
  const [res] = await once(req, 'response') as [import('node:http').IncomingMessage]
  t.equal(res.statusCode, 200)
  t.equal(res.headers['transfer-encoding'], 'chunked', 'its length is not known before its end')
  t.equal(res.headers['content-length'], undefined)
  const chunks: Buffer[] = []
  for await (const chunk of res) chunks.push(chunk as Buffer)
  t.ok(chunks.length > 1, 'in several pieces')
  t.equal(Buffer.concat(chunks).toString(), JSON.stringify(app.worlds.default.state()), 'byte for byte')
})

t.test('a reader that takes nothing for the stall time gives the document up: its place and the worker\'s connection end', async (t) => {
  const app = await build(t, { fixture: grownDemoFixture((_fixture, clients) => clients >= 3_000) })
  const runner = new FixtureRunner({ workerFile: WORKER, migrationsDir: testConfig().migrationsDir, stateStallMs: 300 })
  t.teardown(() => runner.close())
  const snapshot = snapshotOf(app.worlds.default.db)
  const stalled = await runner.state({ snapshot }, 'w1')
  const failed = once(stalled, 'error')
  t.equal(runner.reading, 1, 'the document holds a place while it is read')
  const [error] = await failed as [Error]
  t.match(error.message, /took nothing for 300 ms/, 'given up')
  t.ok(stalled.destroyed)
  t.equal(runner.reading, 0, 'its place is free')
  // every place can be taken again (one per world), and a document read to its end frees its place too
  const texts = await Promise.all(Array.from({ length: MAX_FIXTURE_JOBS }, async (_, i) => {
    const chunks: Buffer[] = []
    for await (const chunk of await runner.state({ snapshot: snapshotOf(app.worlds.default.db) }, `w${i}`)) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks).toString()
  }))
  t.ok(texts.every((text) => text === JSON.stringify(app.worlds.default.state())), 'each is the whole document')
  await sleep(10)
  t.equal(runner.reading, 0)
})

t.test("one place per world: a world's next document waits until its first is sent or given up; another world's is written meanwhile", async (t) => {
  const app = await build(t, { fixture: grownDemoFixture((_fixture, clients) => clients >= 3_000) })
  const runner = new FixtureRunner({ workerFile: WORKER, migrationsDir: testConfig().migrationsDir, stateStallMs: 2_000 })
  t.teardown(() => runner.close())
  const events: string[] = []
  const first = await runner.state({ snapshot: snapshotOf(app.worlds.default.db) }, 'a')
  first.on('error', () => events.push("a's first given up"))
  const second = runner.state({ snapshot: snapshotOf(app.worlds.default.db) }, 'a').then((document) => {
    events.push("a's second started")
    return document
  })
  const other = await runner.state({ snapshot: snapshotOf(app.worlds.default.db) }, 'b')
  events.push("b's started")
  t.equal(runner.reading, 2, "a holds one place, b one; a's second waits")
  t.equal(runner.queued, 1)
  const read = async (document: AsyncIterable<unknown>) => {
    const chunks: Buffer[] = []
    for await (const chunk of document) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks).toString()
  }
  t.equal(await read(other), JSON.stringify(app.worlds.default.state()), "b's is the whole document, while a's first is left unread")
  t.equal(await read(await second), JSON.stringify(app.worlds.default.state()), "then a's second")
  t.same(events, ["b's started", "a's first given up", "a's second started"], "a's second waited for a's first, b for nobody")
})

t.test('each piece received is counted (so that a scavenge per 8 MiB of them frees those sent, as for request bodies)', async (t) => {
  const app = await build(t, { fixture: grownDemoFixture((_fixture, clients) => clients >= 3_000) })
  let counted = 0
  const runner = new FixtureRunner({ workerFile: WORKER, migrationsDir: testConfig().migrationsDir, countBytes: (bytes) => { counted += bytes } })
  t.teardown(() => runner.close())
  let read = 0
  for await (const chunk of await runner.state({ snapshot: snapshotOf(app.worlds.default.db) }, 'default')) read += (chunk as Buffer).byteLength
  t.ok(read > 0)
  t.equal(counted, read, 'every byte of the document')
})
