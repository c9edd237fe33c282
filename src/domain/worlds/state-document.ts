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
 * The document's JSON, from the world's repositories, in pieces of about 256 KiB sent one after
 * the other: the same bytes as JSON.stringify of exportWorld, written a page of clients at a time. A world of 100,000 clients as one object
 * graph took some 150 MB of heap besides its 27 MB of JSON; the pages take a few.
 */
export function stateDocument (repos: Repositories): Buffer[] {
  const shell = exportWorld(repos, { withClients: false })
  // each agency's clients stand as a marker no data can hold (a NUL and a random id), replaced by
  // the agency's clients, written a page at a time
  const marker = `\u0000clients ${randomUUID()} `
  for (const agency of shell.agencies) (agency as { clients: unknown }).clients = `${marker}${agency.agencyId}`
  const [head, ...rest] = JSON.stringify(shell).split(JSON.stringify(marker).slice(0, -1))
  const bytes: Buffer[] = []
  let text = ''
  const add = (more: string) => {
    text += more
    if (text.length < PIECE_CHARS) return
    bytes.push(Buffer.from(text))
    text = ''
  }
  add(head)
  for (const piece of rest) {
    const end = piece.indexOf('"')
    const agencyId = Number(piece.slice(0, end))
    add('[')
    let after = 0
    let first = true
    for (;;) {
      const page = repos.clients.listClientsAfter(agencyId, after, CLIENTS_PAGE)
      for (const row of page) {
        add((first ? '' : ',') + JSON.stringify(rowToClient(row)))
        first = false
      }
      if (page.length < CLIENTS_PAGE) break
      after = page[page.length - 1].clientNumber
    }
    add(']')
    add(piece.slice(end + 1))
  }
  bytes.push(Buffer.from(text))
  return bytes
}

/** Where the worker reads a world's data: its database file, or a snapshot of a database in memory. */
export type StateSource = { file: string } | { snapshot: Uint8Array }

/** The document's JSON of a database file or a snapshot, opened read-only and read in one transaction. */
export function stateOfSource (source: StateSource): Buffer[] {
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
