import type pg from 'pg'
import { listMigrations } from '../database.js'

/** Any constant of our own: instances starting together migrate one after the other. */
const MIGRATION_LOCK = 7_110_428_001

/**
 * Applies, each in its own transaction, every migration of `dir` above the version the database
 * records (forward only, as for SQLite: src/db/database.ts). Instances starting at once take turns
 * under an advisory lock, so each migration runs once.
 */
export async function migratePostgres (pool: pg.Pool, dir: string): Promise<number> {
  const client = await pool.connect()
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    try {
      await client.query('CREATE TABLE IF NOT EXISTS sandbox_schema (version integer NOT NULL)')
      const found = await client.query<{ version: number }>('SELECT max(version) AS version FROM sandbox_schema')
      let current = found.rows[0]?.version ?? 0
      for (const migration of listMigrations(dir).filter((m) => m.version > current)) {
        await client.query('BEGIN')
        try {
          await client.query(migration.sql)
          await client.query('INSERT INTO sandbox_schema (version) VALUES ($1)', [migration.version])
          await client.query('COMMIT')
        } catch (e) {
          await client.query('ROLLBACK')
          throw new Error(`PostgreSQL migration ${migration.name} failed: ${(e as Error).message}`)
        }
        current = migration.version
      }
      return current
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
    }
  } finally {
    client.release()
  }
}
