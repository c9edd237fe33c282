import t from 'tap'
import { join } from 'node:path'
import { closeDatabase, openDatabase } from '../../src/db/database.js'
import { ROOT } from '../../src/config.js'

/**
 * The changed-clients listing with asOf reads the index alone: a lookup of each row in the
 * table (kilobytes of JSON each) made an import's deletion-time search ten times slower on a
 * 100,000-client database (bench/IMPORT.md). The statement is the one src/db/clients.ts runs.
 */

t.test('the changed-clients listing with asOf is answered from a covering index', async (t) => {
  const db = openDatabase({ file: ':memory:', migrationsDir: join(ROOT, 'migrations') })
  t.teardown(() => closeDatabase(db))
  const plan = db.prepare(
    `EXPLAIN QUERY PLAN SELECT client_number FROM clients INDEXED BY clients_changed_ids
     WHERE agency_id = @agencyId AND deleted = @deleted AND modified_ms > @since
       AND (@officeId IS NULL OR office_id = @officeId)
     ORDER BY client_number`
  ).all({ agencyId: 1, deleted: 1, since: 0, officeId: 2 }) as Array<{ detail: string }>
  const details = plan.map((r) => r.detail).join('\n')
  t.match(details, /SEARCH clients USING COVERING INDEX clients_changed_ids \(agency_id=\? AND deleted=\? AND modified_ms>\?\)/)
  const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'clients'").pluck().all()
  t.notOk(indexes.includes('clients_changed'), 'the index it extends is gone')
})
