import t from 'tap'
import { join } from 'node:path'
import fc from 'fast-check'
import { ROOT } from '../../src/config.js'
import { closeDatabase, openDatabase } from '../../src/db/database.js'
import { createRepositories, UnitOfWork, type ClientRow } from '../../src/db/index.js'
import { createClients } from '../../src/domain/clients.js'
import { loadWorld } from '../../src/domain/world.js'
import { BatchAnswers } from '../../src/read-model/batch-answers.js'
import { clientJson, clientJsonPieces, createReadModel, type EncodedJson } from '../../src/read-model/index.js'
import { GROUP_KEYS, type ClientGroup } from '../../src/schemas/client.js'
import { AGENCY, build, demoFixture } from '../helpers/app.js'

const migrationsDir = join(ROOT, 'migrations')

/** An answer's text, then released as the send-bytes plugin does once it is written. */
const sent = (answer: EncodedJson) => {
  const text = answer.body.toString('utf8')
  answer.release()
  return text
}

/** The rows rendered one by one, by the one rule for a client's JSON. */
const rendered = (rows: ClientRow[], groups: ClientGroup[]) => '[' + rows.map((r) => clientJson(r, clientJsonPieces(groups))).join(',') + ']'
/** The same answer built from parsed objects: an oracle that shares no code with the rule. */
const parsedAndStringified = (rows: ClientRow[], groups: ClientGroup[]) =>
  JSON.stringify(rows.map((r) => ({ clientNumber: r.clientNumber, ...Object.fromEntries(groups.map((g) => [GROUP_KEYS[g], JSON.parse(r[GROUP_KEYS[g]]) as unknown])) })))

t.test('batch answers joined by SQLite equal the rows rendered one by one, for any numbers and groups', async (t) => {
  const app = await build(t)
  const { clients } = app.worlds.default
  const agency = AGENCY.main
  const demoClients = demoFixture().agencies.find((a) => a.agencyId === agency)!.clients
  const known = demoClients.map((c) => c.clientNumber)
  t.ok(demoClients.some((c) => c.deleted === true), 'the demo agency has deleted clients to leave out')
  const groupNames = Object.keys(GROUP_KEYS) as ClientGroup[]
  const number = fc.oneof(fc.constantFrom(...known), fc.integer({ min: 1, max: 2_000_000 }))
  fc.assert(
    fc.property(
      fc.array(number, { maxLength: 60 }),
      fc.shuffledSubarray(groupNames),
      (numbers, groups) => {
        const joined = sent(clients.batchJson(agency, numbers, groups))
        const rows = clients.batch(agency, numbers)
        return joined === rendered(rows, groups) && joined === parsedAndStringified(rows, groups)
      }
    ),
    { seed: 20261122, numRuns: 300 }
  )
  const all = clients.batchJson(agency, known.slice(0, 200).reverse(), ['Details'])
  const ids = (JSON.parse(sent(all)) as { clientNumber: number }[]).map((c) => c.clientNumber)
  t.ok(ids.length > 1 && ids[0] > ids[1], 'in the order asked')
  t.same(JSON.parse(sent(clients.batchJson(agency, [], ['Details']))), [])
})

t.test('batch answers stay whole when the cache of client bytes starts over in the middle of a request', async (t) => {
  const db = openDatabase({ file: ':memory:', migrationsDir })
  t.teardown(() => closeDatabase(db))
  const repositories = createRepositories(new UnitOfWork(db))
  // room for about three clients: nearly every batch starts the cache over while it reads
  const reads = createReadModel(repositories, repositories.changes, { batchCacheBytes: 10_000 })
  loadWorld(repositories, demoFixture(), 'demo', new Date().toISOString())
  const clients = createClients(reads)
  const agency = AGENCY.main
  const known = demoFixture().agencies.find((a) => a.agencyId === agency)!.clients.map((c) => c.clientNumber)
  const groupNames = Object.keys(GROUP_KEYS) as ClientGroup[]
  fc.assert(
    fc.property(
      // a few clients asked often, so requests mix clients found in memory with clients read now
      fc.array(fc.oneof(fc.constantFrom(...known.slice(0, 8)), fc.constantFrom(...known), fc.integer({ min: 1, max: 2_000_000 })), { maxLength: 40 }),
      fc.shuffledSubarray(groupNames, { minLength: 1 }),
      (numbers, groups) => {
        const joined = sent(clients.batchJson(agency, numbers, groups))
        return joined === rendered(clients.batch(agency, numbers), groups)
      }
    ),
    { seed: 20261123, numRuns: 200 }
  )
  const live = demoFixture().agencies.find((a) => a.agencyId === agency)!.clients.filter((c) => c.deleted !== true).map((c) => c.clientNumber)
  const numbersOf = (asked: number[]) =>
    (JSON.parse(sent(clients.batchJson(agency, asked, ['Details']))) as { clientNumber: number }[]).map((c) => c.clientNumber)
  t.same(numbersOf(live.slice(0, 50)), live.slice(0, 50), 'fifty live clients asked, fifty answered in order, though only three fit')
  // a client kept from the last request, then enough new ones to start the cache over
  const kept = live.slice(48, 50)
  t.same(numbersOf([...kept, ...live.slice(60, 160)]), [...kept, ...live.slice(60, 160)], 'clients found in memory survive a start-over later in the same request')
})

t.test("a large answer is sent from the cache's own memory, which is written again only once no answer reads it", async (t) => {
  // clients of about 10 kB, in a cache of four slabs of 40 kB: sixteen fit
  const textOf = (n: number) => JSON.stringify({ clientNumber: n, pad: String(n).padEnd(10_000, String(n % 10)) })
  const source = { concatLiveClientsIn: (_agency: number, numbers: readonly number[]) => numbers.map((n): [number, string] => [n, textOf(n)]) }
  const batches = new BatchAnswers(source, 160_000)
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)
  const expected = (numbers: number[]) => `[${numbers.map(textOf).join(',')}]`
  const ask = (numbers: number[]) => batches.json(AGENCY.main, numbers, 'Details', [], true)

  const first = ask(range(0, 8))
  t.ok(first.chunks !== undefined && first.chunks.length <= 7, `80 kB sent as ${first.chunks?.length} chunks viewing the slabs, nothing copied`)
  t.equal(batches.answersReading, 1)
  const filling = ask(range(8, 24))
  t.equal(filling.chunks, undefined, 'a cache that fills up during a request answers it with a copy')
  t.equal(sent(filling), expected(range(8, 24)))
  // full, and the first answer still reads it: it does not start over, keeps nothing more, and copies
  const whileRead = ask(range(100, 116))
  t.equal(whileRead.chunks, undefined)
  t.equal(sent(whileRead), expected(range(100, 116)))
  batches.clear()
  t.equal(sent(ask(range(200, 216))), expected(range(200, 216)), 'nor does a clear write it again while it is read')
  t.equal(Buffer.concat(first.chunks ?? []).toString(), expected(range(0, 8)), 'the first answer is whole when its reader gets to it')
  first.release()
  first.release()
  t.equal(batches.answersReading, 0, 'released once, however often it is asked to')

  const after = ask(range(300, 308))
  t.ok(after.chunks !== undefined, 'once nothing reads it, the cache starts over and keeps again')
  t.equal(sent(after), expected(range(300, 308)))
  const again = ask(range(300, 308))
  t.ok(again.chunks !== undefined && again.chunks.length <= 7, `the same clients again: a run per slab they fill (${again.chunks?.length} chunks, brackets and commas included)`)
  t.equal(sent(again), expected(range(300, 308)))
  const small = ask([300])
  t.equal(small.chunks, undefined, 'an answer under 64 KiB is copied: a copy of a few kB costs less than a stream')
  t.equal(sent(small), expected([300]))
})
