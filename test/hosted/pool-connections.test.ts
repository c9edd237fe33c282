/**
 * Hosted mode's connection pool: a connection the server ends while it is taken from the pool,
 * between two queries (a write turn's when PostgreSQL shuts down), is reported, never thrown. Its
 * next query fails, and the pool goes on with a new connection; the process lives on.
 */
import t from 'tap'
import { openPool } from '../../src/db/postgres/world-log.js'
import { startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { withoutPostgres } from '../helpers/hosted.js'

t.test('a taken connection ended by the server is reported, not thrown', { skip: withoutPostgres }, async (t) => {
  const postgres: ScratchPostgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  const reported: string[] = []
  const pool = openPool({ url: postgres.url, onError: (e) => reported.push(e.message) })
  t.teardown(async () => await pool.end())
  // an error thrown from an event emitter would reach here and end the run
  const uncaught: Error[] = []
  const onUncaught = (e: Error) => { uncaught.push(e) }
  process.on('uncaughtException', onUncaught)
  t.teardown(() => process.off('uncaughtException', onUncaught))

  const taken = await pool.connect()
  await taken.query('BEGIN')
  const { rows } = await taken.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
  const other = await pool.connect()
  await other.query('SELECT pg_terminate_backend($1)', [rows[0].pid])
  other.release()
  await new Promise((resolve) => setTimeout(resolve, 300))

  t.same(uncaught.map((e) => e.message), [], 'nothing thrown')
  t.match(reported.join('\n'), /terminating connection due to administrator command/, 'the end of the connection is reported')
  await t.rejects(taken.query('COMMIT'), 'its next query fails')
  taken.release(true)
  t.equal((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0].one, 1, 'the pool answers on a new connection')
})
