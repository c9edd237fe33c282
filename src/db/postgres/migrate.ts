import type pg from 'pg'
import { StartupError } from '../../startup-error.js'
import { listMigrations } from '../database.js'

/** Any constant of our own: instances starting together migrate one after the other. */
const MIGRATION_LOCK = 7_110_428_001

/**
 * Applies, each in its own transaction, every migration of `dir` the database does not record
 * (forward only, as for SQLite: src/db/database.ts). Each applied version is a row of
 * sandbox_schema, so a migration numbered below one applied already (two changes made side by
 * side) is applied too. Instances starting at once take turns under an advisory lock, so each
 * migration runs once. A database holding a version above every migration of `dir` was migrated
 * by a newer build: refused (StartupError), naming both versions.
 */
export async function migratePostgres (pool: pg.Pool, dir: string): Promise<number> {
  const client = await pool.connect()
  try {
    // a migration may take longer than the pool's bounds on a statement, and the lock waits for
    // another instance's migrations: this connection is given both back before it is released
    await client.query('SET statement_timeout = 0')
    await client.query('SET lock_timeout = 0')
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    try {
      await client.query('CREATE TABLE IF NOT EXISTS sandbox_schema (version integer NOT NULL)')
      const found = await client.query<{ version: number }>('SELECT DISTINCT version FROM sandbox_schema')
      const applied = new Set(found.rows.map((row) => row.version))
      const migrations = listMigrations(dir)
      const known = migrations.at(-1)?.version ?? 0
      const newest = Math.max(0, ...applied)
      if (newest > known) {
        throw new StartupError(`the PostgreSQL database is at schema version ${newest}, newer than this build knows (${known}): ` +
          'a newer agency-sandbox migrated it; run that version, or restore the backup taken before the upgrade (docs/operations.md, "Upgrade and rollback")')
      }
      for (const migration of migrations.filter((m) => !applied.has(m.version))) {
        await client.query('BEGIN')
        try {
          await client.query(migration.sql)
          await client.query('INSERT INTO sandbox_schema (version) VALUES ($1)', [migration.version])
          await client.query('COMMIT')
        } catch (e) {
          await client.query('ROLLBACK')
          throw new Error(`PostgreSQL migration ${migration.name} failed: ${(e as Error).message}`)
        }
        applied.add(migration.version)
      }
      return Math.max(0, ...applied)
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
    }
  } finally {
    await client.query('RESET statement_timeout').catch(() => undefined)
    await client.query('RESET lock_timeout').catch(() => undefined)
    client.release()
  }
}
