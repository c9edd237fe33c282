/**
 * The clients changed while a report is computed are not judged by it (changes-during-reports.ts):
 * a change that a session's log places wrongly could otherwise be held against a partner.
 */
import t from 'tap'
import type { ClientVersion } from '../../../src/db/clients.js'
import { ChangesDuringReports } from '../../../src/domain/examiner/changes-during-reports.js'

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
