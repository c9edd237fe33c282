import Database from 'better-sqlite3'
import { createRepositories, UnitOfWork, type Repositories } from '../../db/index.js'
import { randomUUID } from 'node:crypto'
import { exportWorld, rowToClient } from '../world.js'

/**
 * A world's state document (GET /_sandbox/state): its whole data as a fixture document, in JSON,
 * which a reset to it reproduces every answer from. A large world's is written on the fixture
 * worker (fixture-job.ts) by the same code as a small world's, so both answer the same bytes: from
 * its database file, read in one read transaction of a connection of its own (the write-ahead log
 * lets it read the last commit while the event loop writes on), or, for a database in memory, from
 * a snapshot taken on the event loop (starts.ts pagesOf). Serializing a file database of 100,000
 * clients (27 MB) page by page held the event loop for 37 to 176 ms; one in memory, 5 to 18 ms.
 */

/** Clients read and written per page: the document never holds every client as an object at once. */
const CLIENTS_PAGE = 1_000
/** Text gathered before it is encoded into the document's bytes. */
const PIECE_CHARS = 256 * 1024

/**
 * The document's JSON, from the world's repositories, in pieces of about 256 KiB made one at a
 * time as they are asked for: the same bytes as JSON.stringify of exportWorld, written a page of
 * clients at a time. A world of 100,000 clients as one object graph took some 150 MB of heap
 * besides its 27 MB of JSON; the pages take a few, and a piece sent is not kept.
 */
export function * stateDocumentPieces (repos: Repositories): Generator<Buffer, void, undefined> {
  const shell = exportWorld(repos, { withClients: false })
  // each agency's clients stand as a marker no data can hold (a NUL and a random id), replaced by
  // the agency's clients, written a page at a time
  const marker = `\u0000clients ${randomUUID()} `
  for (const agency of shell.agencies) (agency as { clients: unknown }).clients = `${marker}${agency.agencyId}`
  const [head, ...rest] = JSON.stringify(shell).split(JSON.stringify(marker).slice(0, -1))
  let text = head
  for (const piece of rest) {
    const end = piece.indexOf('"')
    const agencyId = Number(piece.slice(0, end))
    text += '['
    let after = 0
    let first = true
    for (;;) {
      const page = repos.clients.listClientsAfter(agencyId, after, CLIENTS_PAGE)
      for (const row of page) {
        text += (first ? '' : ',') + JSON.stringify(rowToClient(row))
        first = false
        if (text.length < PIECE_CHARS) continue
        yield Buffer.from(text)
        text = ''
      }
      if (page.length < CLIENTS_PAGE) break
      after = page[page.length - 1].clientNumber
    }
    text += ']' + piece.slice(end + 1)
  }
  yield Buffer.from(text)
}

/** The whole document's JSON, in its pieces (a small world's, written where it is asked for). */
export const stateDocument = (repos: Repositories): Buffer[] => [...stateDocumentPieces(repos)]

/** Where the worker reads a world's data: its database file, or a snapshot of a database in memory. */
export type StateSource = { file: string } | { snapshot: Uint8Array }

/**
 * The document's pieces of a database file or a snapshot, opened read-only and read in one read
 * transaction, held from the first piece to the last (the write-ahead log keeps what it reads
 * while the world writes on); the connection closes when the pieces end or are given up
 * (`return()`).
 */
export function * stateOfSource (source: StateSource): Generator<Buffer, void, undefined> {
  const db = 'file' in source
    ? new Database(source.file, { readonly: true, fileMustExist: true, timeout: 5000 })
    : new Database(Buffer.from(source.snapshot.buffer, source.snapshot.byteOffset, source.snapshot.byteLength), { readonly: true })
  try {
    const repos = createRepositories(new UnitOfWork(db))
    db.exec('BEGIN')
    yield * stateDocumentPieces(repos)
  } finally {
    if (db.inTransaction) db.exec('COMMIT')
    db.close()
  }
}
