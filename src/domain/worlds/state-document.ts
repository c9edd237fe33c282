import Database from 'better-sqlite3'
import { createRepositories, UnitOfWork, type Repositories } from '../../db/index.js'
import { exportWorld } from '../world.js'

/**
 * A world's state document (GET /_sandbox/state): its whole data as a fixture document, in JSON,
 * which a reset to it reproduces every answer from. A large world's is written on the fixture
 * worker (fixture-job.ts) by the same code as a small world's, so both answer the same bytes: from
 * its database file, read in one read transaction of a connection of its own (the write-ahead log
 * lets it read the last commit while the event loop writes on), or, for a database in memory, from
 * a snapshot taken on the event loop (starts.ts pagesOf). Serializing a file database of 100,000
 * clients (27 MB) page by page held the event loop for 37 to 176 ms; one in memory, 5 to 18 ms.
 */

/** The document's JSON, from the world's repositories. */
export function stateDocument (repos: Repositories): Buffer {
  return Buffer.from(JSON.stringify(exportWorld(repos)))
}

/** Where the worker reads a world's data: its database file, or a snapshot of a database in memory. */
export type StateSource = { file: string } | { snapshot: Uint8Array }

/** The document's JSON of a database file or a snapshot, opened read-only and read in one transaction. */
export function stateOfSource (source: StateSource): Buffer {
  const db = 'file' in source
    ? new Database(source.file, { readonly: true, fileMustExist: true, timeout: 5000 })
    : new Database(Buffer.from(source.snapshot.buffer, source.snapshot.byteOffset, source.snapshot.byteLength), { readonly: true })
  try {
    const repos = createRepositories(new UnitOfWork(db))
    return db.transaction(() => stateDocument(repos))()
  } finally {
    db.close()
  }
}
