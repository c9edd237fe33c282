import t from 'tap'
import { join } from 'node:path'
import fc from 'fast-check'
import { ROOT } from '../../src/config.js'
import { closeDatabase, openDatabase } from '../../src/db/database.js'
import { createRepositories, UnitOfWork, type ClientRow } from '../../src/db/index.js'
import { createClients } from '../../src/domain/clients.js'
import { loadWorld } from '../../src/domain/world.js'
import { clientJson, clientJsonPieces, createReadModel } from '../../src/read-model/index.js'
import { GROUP_KEYS, type ClientGroup } from '../../src/schemas/client.js'
import { AGENCY, build, demoFixture } from '../helpers/app.js'

const migrationsDir = join(ROOT, 'migrations')

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
        const joined = clients.batchJson(agency, numbers, groups).body.toString('utf8')
        const rows = clients.batch(agency, numbers)
        return joined === rendered(rows, groups) && joined === parsedAndStringified(rows, groups)
      }
    ),
    { seed: 20261122, numRuns: 300 }
  )
  const all = clients.batchJson(agency, known.slice(0, 200).reverse(), ['Details'])
  const ids = (JSON.parse(all.body.toString()) as { clientNumber: number }[]).map((c) => c.clientNumber)
  t.ok(ids.length > 1 && ids[0] > ids[1], 'in the order asked')
  t.same(JSON.parse(clients.batchJson(agency, [], ['Details']).body.toString()), [])
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
        const joined = clients.batchJson(agency, numbers, groups).body.toString('utf8')
        return joined === rendered(clients.batch(agency, numbers), groups)
      }
    ),
    { seed: 20261123, numRuns: 200 }
  )
  const live = demoFixture().agencies.find((a) => a.agencyId === agency)!.clients.filter((c) => c.deleted !== true).map((c) => c.clientNumber)
  const numbersOf = (asked: number[]) =>
    (JSON.parse(clients.batchJson(agency, asked, ['Details']).body.toString()) as { clientNumber: number }[]).map((c) => c.clientNumber)
  t.same(numbersOf(live.slice(0, 50)), live.slice(0, 50), 'fifty live clients asked, fifty answered in order, though only three fit')
  // a client kept from the last request, then enough new ones to start the cache over
  const kept = live.slice(48, 50)
  t.same(numbersOf([...kept, ...live.slice(60, 160)]), [...kept, ...live.slice(60, 160)], 'clients found in memory survive a start-over later in the same request')
})
