import t from 'tap'
import { CLIENT_CHANGED, type RecordedRequest } from '../../../src/domain/examiner/records.js'
import { syncChecks, type DeclaredMirror } from '../../../src/domain/examiner/sync.js'

/**
 * A report is computed on a worker after its session's records end, and reads the agency's
 * clients then: a client changed in between (the simulator keeps running) must not make a
 * complete, current mirror read as stale, nor its deletion read as missed.
 */

const AGENCY = 1001
const T0 = Date.parse('2026-11-20T09:00:00Z')

const request = (seq: number, atMs: number, r: Partial<RecordedRequest>): RecordedRequest => ({
  seq, atMs, realMs: atMs, elapsedMs: 1, method: 'GET', path: '', version: '4.0', status: 200, journalId: seq, agencyId: AGENCY, ...r
})

// client 1 changed (seq 1), listed (seq 2), read (seq 3); client 2 listed and read too
const records: RecordedRequest[] = [
  request(1, T0, { method: 'CHANGE', operation: CLIENT_CHANGED, clients: [1], status: 0 }),
  request(2, T0 + 1000, { operation: 'changedClients' }),
  request(3, T0 + 2000, { method: 'POST', operation: 'batchClients', clients: [1, 2] }),
  request(4, T0 + 3000, { operation: 'changedClients', query: { deleted: 'true' } })
]
const mirror: DeclaredMirror = { agencyId: AGENCY, upTo: null, postedMs: T0 + 4000, after: 4, clients: async () => [[1, T0], [2, T0 - 5000]] }
const END = T0 + 5000

/** Client 1 as the report finds it: changed again, or deleted, at `atMs`. */
const clientsAfter = (atMs: number, deleted: boolean) => () => [
  { clientNumber: 1, deleted, modifiedMs: atMs },
  { clientNumber: 2, deleted: false, modifiedMs: T0 - 5000 }
]

const counts = (check: { missing: { count: number }, stale: { count: number }, deletedKept: { count: number } }) =>
  [check.missing.count, check.stale.count, check.deletedKept.count]

t.test('a client changed after the session ended is not judged', async (t) => {
  for (const deleted of [false, true]) {
    const { sync, outcomes } = await syncChecks(records, [mirror], clientsAfter(END + 10, deleted), END)
    t.same(sync.map(counts), [[0, 0, 0], [0, 0, 0]], `declared and inferred: nothing stale or missed (${deleted ? 'deleted' : 'changed'} after the end)`)
    t.same([...outcomes.values()].map((o) => o.tally.count), [...outcomes.values()].map(() => 0), 'no sync rule counts it')
  }
})

t.test('the same change within the session is judged: the check is not blind', async (t) => {
  const { sync } = await syncChecks(records, [mirror], clientsAfter(END - 10, false), END)
  t.same(counts(sync[0]!), [0, 1, 0], 'declared: client 1 is older in the mirror than its change')
})
