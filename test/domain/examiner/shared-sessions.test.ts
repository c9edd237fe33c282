/**
 * Hosted mode's examiner sessions, on one instance's side (no database): what it records follows
 * the open sessions the world's commits carry, the records it ships are in the order the requests
 * arrived, and it stops recording for a session once it alone recorded past the session's cap.
 */
import t from 'tap'
import { TEST_WORLD } from '../../helpers/examiner.js'
import { Clock } from '../../../src/domain/clock.js'
import { ReportRunner } from '../../../src/domain/examiner/report-runner.js'
import { SharedSessions } from '../../../src/domain/examiner/shared-sessions.js'
import type { RequestRecord } from '../../../src/domain/examiner/sessions.js'
import type { ExaminerStore } from '../../../src/db/postgres/examiner-store.js'

const request = (over: Partial<RequestRecord> = {}): RequestRecord => ({
  atMs: 0, realMs: 0, elapsedMs: 1, method: 'GET', url: '/vendor/agencies?version=4.0', operation: 'agencies', status: 200, journalId: 1, clientId: 'abc', ...over
})

function sessions (cap = 5) {
  let shipsAsked = 0
  const shared = new SharedSessions({
    worldId: 'w',
    store: {} as unknown as ExaminerStore,
    synced: async () => undefined,
    shipSoon: () => { shipsAsked++ },
    clock: new Clock(),
    clientsOf: async () => [],
    agencyExists: () => true,
    reports: new ReportRunner(),
    worldFacts: async () => TEST_WORLD,
    cap
  })
  return { shared, shipsAsked: () => shipsAsked }
}

t.test('records what the open sessions the commits carry take, and nothing once none is open', async (t) => {
  const { shared, shipsAsked } = sessions()
  shared.record(request())
  t.equal(shared.takeShipment().length, 0, 'no session open: nothing recorded')
  shared.adopt([[1, 'abc']])
  t.same(shared.state(), [[1, 'abc']])
  shared.record(request({ journalId: 2 }))
  shared.record(request({ journalId: 3, clientId: 'other' }))
  shared.noteChanges([[1001, 1000], [1001, 1000]])
  t.ok(shipsAsked() > 0, 'a ship is asked for')
  const shipped = shared.takeShipment()
  t.same(shipped.map((r) => [r.clientId, r.change]), [['abc', false], [null, true]], 'its Client Id\'s request and the change (once), not another integration\'s')
  t.ok(shipped[1].realMs >= shipped[0].realMs && shipped[1].localSeq > shipped[0].localSeq, 'in the order they came')
  t.match(shipped[1].line, /\/vendor\/agency\/1001\/client\/1000$/)
  t.same(shared.takeShipment(), [], 'taken once')
  shared.adopt([])
  shared.record(request())
  shared.noteChanges([[1001, 1000]])
  t.same(shared.takeShipment(), [], 'the session ended elsewhere: nothing recorded')
})

t.test('an instance that alone recorded past a session\'s cap records no more for it', async (t) => {
  const { shared } = sessions(5)
  shared.adopt([[1, 'abc']])
  for (let i = 0; i < 4; i++) shared.record(request({ journalId: i }))
  t.equal(shared.takeShipment().length, 4)
  for (let i = 0; i < 3; i++) shared.record(request({ journalId: i }))
  t.equal(shared.takeShipment().length, 3, 'what came before the check is shipped')
  shared.record(request())
  t.equal(shared.takeShipment().length, 0, 'past the cap: nothing more')
  for (let i = 0; i < 8; i++) shared.noteChanges([[1001, 1000 + i]])
  t.equal(shared.takeShipment().length, 0, 'nor changes, with no session wanting requests')
  shared.adopt([[1, 'abc']])
  t.notOk(shared.wants('abc'), 'another commit with the same sessions keeps their counts here: still past the cap')
  shared.adopt([[1, 'abc'], [2, 'abc']])
  t.ok(shared.wants('abc'), 'a session started since takes the Client Id again')
})

t.test('the timer\'s ships hold a change noted while a listing is answered until the listing is recorded; a read\'s ship does not', async (t) => {
  const listing = (arrivedAt: number) => request({ operation: 'changedClients', url: '/vendor/agency/1001/clients?version=4.0&asOf=2026-01-01', journalId: 2, arrivedAt })
  const { shared, shipsAsked } = sessions(100)
  shared.adopt([[1, 'abc']])
  shared.record(request({ journalId: 1 }))
  const arrivedAt = shared.arrival()
  shared.noteChanges([[1001, 1000]])
  shared.record(request({ journalId: 3 }))
  const asked = shipsAsked()
  t.same(shared.takeShipment(true).map((r) => r.journalId), [1], 'what came before the change is shipped')
  t.ok(shipsAsked() > asked, 'and a ship asked again for the rest')
  shared.record(listing(arrivedAt))
  const shipped = shared.takeShipment(true)
  t.same(shipped.map((r) => [r.journalId, r.change]), [[2, false], [0, true], [3, false]], 'recorded, the listing goes before the change, and all three are shipped')

  const again = shared.arrival()
  shared.noteChanges([[1001, 1000]])
  t.same(shared.takeShipment(false).map((r) => r.change), [true], 'a read\'s ship takes the change at once')
  shared.record(listing(again))
  t.same(shared.takeShipment(true).map((r) => r.journalId), [2], 'and the listing then')
})

t.test('a listing never recorded holds the changes after it for LISTING_HOLD_MS at most', async (t) => {
  const { shared } = sessions(100)
  shared.adopt([[1, 'abc']])
  shared.arrival()
  shared.noteChanges([[1001, 1000]])
  t.same(shared.takeShipment(true), [], 'held')
  const now = performance.now.bind(performance)
  performance.now = () => now() + 10_001
  t.teardown(() => { performance.now = now })
  t.same(shared.takeShipment(true).map((r) => r.change), [true], 'shipped once the listing is that old')
})
