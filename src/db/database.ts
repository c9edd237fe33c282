import Database from 'better-sqlite3'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { StartupError } from '../startup-error.js'

export type Db = Database.Database

/**
 * The page cache of every database (negative: KiB), SQLite's own default of 2 MiB: batch reads are
 * answered from the store's own cache of client bytes, so a larger page cache only adds memory.
 */
export const PAGE_CACHE_KIB = -2048

export interface OpenOptions {
  /** File path, or ':memory:'. */
  file: string
  /** Folder of numbered `NNN-name.sql` migrations. */
  migrationsDir: string
}

/**
 * Opens (creating if needed) and migrates the database. WAL on file databases,
 * foreign keys on, synchronous=NORMAL: in WAL mode a committed transaction survives a crash of the process (only an OS crash or power loss can lose the last commits).
 */
export function openDatabase ({ file, migrationsDir }: OpenOptions): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
  const db = new Database(file, { timeout: 5000 })
  if (file !== ':memory:') db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma(`cache_size = ${PAGE_CACHE_KIB}`)
  migrate(db, migrationsDir)
  return db
}

/**
 * An empty database of the schema in memory, on SQLite's smallest pages (a page per table and
 * index: 25 KB, where the default pages take 128 KB): what stands in for a world's data an
 * instance holds no copy of (hosted mode).
 */
export function openEmptySchema (migrationsDir: string): Db {
  const db = new Database(':memory:')
  db.pragma('page_size = 512')
  db.pragma('foreign_keys = ON')
  migrate(db, migrationsDir)
  return db
}

export interface Migration {
  version: number
  name: string
  sql: string
}

export function listMigrations (dir: string): Migration[] {
  return readdirSync(dir)
    .map((name) => /^(\d+)-[\w-]+\.sql$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ version: Number(m[1]), name: m[0], sql: readFileSync(join(dir, m[0]), 'utf8') }))
    .sort((a, b) => a.version - b.version)
}

/**
 * Applies, each in its own transaction, every migration above PRAGMA user_version. A database of a
 * schema newer than this build knows (a newer version wrote it) is refused, not read as if it were
 * ours: StartupError names both versions.
 */
export function migrate (db: Db, dir: string): number {
  const current = db.pragma('user_version', { simple: true }) as number
  const migrations = listMigrations(dir)
  const known = migrations.at(-1)?.version ?? 0
  if (current > known) {
    const file = db.memory ? 'the SQLite database' : `the SQLite database ${db.name}`
    throw new StartupError(`${file} is at schema version ${current}, newer than this build knows (${known}): a newer agency-sandbox wrote it; run that version, or a copy of the file from before the upgrade (docs/operations.md, "Upgrade and rollback")`)
  }
  const pending = migrations.filter((m) => m.version > current)
  for (const m of pending) {
    db.transaction(() => {
      db.exec(m.sql)
      db.pragma(`user_version = ${m.version}`)
    }).immediate()
  }
  return db.pragma('user_version', { simple: true }) as number
}

export function closeDatabase (db: Db): void {
  if (!db.open) return
  try {
    db.pragma('optimize')
  } finally {
    db.close()
  }
}
