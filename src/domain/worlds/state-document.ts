import Database from 'better-sqlite3'
import { createRepositories, UnitOfWork, type Repositories } from '../../db/index.js'
import { exportWorld } from '../world.js'

/**
 * A world's state document (GET /_sandbox/state): its whole data as a fixture document, in JSON,
 * which a reset to it reproduces every answer from. A large world's is written on the fixture
 * worker (fixture-job.ts) from a snapshot of its database taken on the event loop (starts.ts
 * pagesOf), by the same code as a small world's, so both answer the same bytes.
 */

/** The document's JSON, from the world's repositories. */
export function stateDocument (repos: Repositories): Buffer {
  return Buffer.from(JSON.stringify(exportWorld(repos)))
}

/** The document's JSON of a snapshot's database, opened read-only. */
export function stateOfSnapshot (snapshot: Uint8Array): Buffer {
  const db = new Database(Buffer.from(snapshot.buffer, snapshot.byteOffset, snapshot.byteLength), { readonly: true })
  try {
    return stateDocument(createRepositories(new UnitOfWork(db)))
  } finally {
    db.close()
  }
}
