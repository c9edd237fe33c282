/**
 * The clients changed while a report is computed are not judged by it (changes-during-reports.ts),
 * and a listing is placed where it arrived among the changes an instance ships (hosted mode):
 * the two ways a change that a session's log places wrongly could be held against a partner.
 */
import t from 'tap'
import { TEST_WORLD } from '../../helpers/examiner.js'
import type { ClientVersion } from '../../../src/db/clients.js'
import type { ExaminerStore, StoredSession } from '../../../src/db/postgres/examiner-store.js'
import { Clock } from '../../../src/domain/clock.js'
import { ChangesDuringReports } from '../../../src/domain/examiner/changes-during-reports.js'
import type { ReportRunner } from '../../../src/domain/examiner/report-runner.js'
import type { RequestRecord } from '../../../src/domain/examiner/sessions.js'
import { SharedSessions } from '../../../src/domain/examiner/shared-sessions.js'
import type { Report } from '../../../src/schemas/examiner.js'

const CLIENTS: ClientVersion[] = [
  { clientNumber: 1000, deleted: false, modifiedMs: 5_000 },
  { clientNumber: 1001, deleted: false, modifiedMs: 5_000 }
]
const modified = (clients: readonly ClientVersion[]) => clients.map((c) => c.modifiedMs)

t.test('a client changed while a report is computed is given as changed after every horizon', async (t) => {
  const changes = new ChangesDuringReports()
  changes.note([[1001, 1000]])
  const first = changes.watch(async () => CLIENTS)
  t.same(modified(await first.clientsOf(1001)), [5_000, 5_000], 'a change before the watch is the report\'s')
  changes.note([[1001, 1001], [1002, 1000]])
  const second = changes.watch(async () => CLIENTS)
  t.same(modified(await first.clientsOf(1001)), [5_000, Infinity], 'changed since: not judged')
  t.same(modified(await first.clientsOf(1002)), [Infinity, 5_000], 'by agency and client number')
  t.same(modified(await second.clientsOf(1001)), [5_000, 5_000], 'each report from its own start')
  first.stop()
  second.stop()
  changes.note([[1001, 1000]])
  t.same(modified(await first.clientsOf(1001)), [5_000, Infinity], 'a stopped watch notes nothing more')
})

function hosted (store: Partial<ExaminerStore>, run: ReportRunner['run']) {
  return new SharedSessions({
    worldId: 'w',
    store: store as ExaminerStore,
    synced: async () => undefined,
    shipSoon: () => undefined,
    clock: new Clock(),
    clientsOf: async () => CLIENTS,
    agencyExists: () => true,
    reports: { run } as ReportRunner,
    worldFacts: async () => TEST_WORLD
  })
}

t.test('hosted: a change replayed from another instance while a report\'s records end is taken is not judged', async (t) => {
  const open: StoredSession = { id: 1, name: 's', clientId: 'abc', startedMs: 0, startSeq: 1, endedMs: null, endSeq: null, endedBy: null, recorded: 0, capped: false }
  /** A session's report, its end taken while another instance's commit is replayed here; what the report read of agency 1001. */
  async function clientsRead (ask: (shared: SharedSessions) => Promise<unknown>): Promise<readonly ClientVersion[]> {
    let seen: readonly ClientVersion[] = []
    const shared: SharedSessions = hosted({
      get: async () => open,
      mark: async () => { shared.noteChanges([[1001, 1000]], true); return 7 },
      count: async () => 0,
      records: async () => [],
      mirrors: async () => [],
      end: async () => undefined,
      keepReport: async (_id, report) => report,
      trim: async () => undefined
    }, async (_job, clientsOf) => {
      seen = await clientsOf(1001)
      return { session: {}, verdict: 'pass', findings: [] } as unknown as Report
    })
    await ask(shared)
    return seen
  }
  t.same(modified(await clientsRead((shared) => shared.report(1))), [Infinity, 5_000], 'an open session\'s report')
  t.same(modified(await clientsRead((shared) => shared.end(1))), [Infinity, 5_000], 'the report a session ends with')
})

const request = (over: Partial<RequestRecord>): RequestRecord => ({
  atMs: 0, realMs: 0, elapsedMs: 1, method: 'GET', url: '/vendor/agency/1001/clients?version=4.0', operation: 'changedClients', status: 200, journalId: 1, clientId: 'abc', ...over
})

t.test('hosted: a listing is shipped before the changes this instance noted after it arrived', async (t) => {
  const shared = hosted({}, async () => ({}) as Report)
  shared.adopt([[1, 'abc']])
  const arrivedAt = shared.arrival()
  shared.noteChanges([[1001, 1000]])
  shared.record(request({ journalId: 2, arrivedAt }))
  shared.record(request({ journalId: 3 }))
  const shipped = shared.takeShipment()
  t.same(shipped.map((r) => r.change), [false, true, false], 'the listing that arrived before the change, the change, the listing with no arrival kept')
  t.ok(shipped[0].realMs <= shipped[1].realMs, 'their times in the same order')
  t.notMatch(shipped[0].line, /arrivedAt/, 'the local number is not shipped')
})
