import { parentPort } from 'node:worker_threads'
import { runFixtureJob, stateSourceOf, type FixtureJob } from './fixture-job.js'
import { stateOfSource } from './state-document.js'

/**
 * The fixture worker: reads large bodies that carry fixture documents (parse, validation, and the
 * rows or database they become) away from the event loop that answers requests, with a heap of its
 * own and a bound on it. Messages: {id, job} in; {id, outcome} or {id, failure} out.
 *
 * A state document is written a piece at a time as it is sent: {id, job} answers its first piece
 * ({id, piece}), each {id, pull} the next, and {id, end} follows the last; {id, cancel} gives it
 * up. Neither thread holds the whole document (27 MB for 100,000 clients, besides what writing it
 * took: three read at once took the process from 90 MB to 220).
 */

const port = parentPort
if (port === null) throw new Error('fixture-worker.js runs as a worker thread')

const documents = new Map<number, Generator<Buffer, void, undefined>>()

/** The next piece of a state document, moved (not copied) when it owns its whole memory (a large one does). */
function nextPiece (id: number): void {
  const pieces = documents.get(id)
  if (pieces === undefined) return
  try {
    const next = pieces.next()
    if (next.done === true) {
      documents.delete(id)
      port!.postMessage({ id, end: true })
      return
    }
    const piece = next.value
    const whole = piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength && piece.buffer instanceof ArrayBuffer
    port!.postMessage({ id, piece }, whole ? [piece.buffer as ArrayBuffer] : [])
  } catch (e) {
    documents.delete(id)
    port!.postMessage({ id, failure: e instanceof Error ? e.message : String(e) })
  }
}

port.on('message', (message: { id: number, job?: FixtureJob, pull?: true, cancel?: true }) => {
  const { id, job } = message
  if (message.pull === true) return nextPiece(id)
  if (message.cancel === true) {
    documents.get(id)?.return()
    documents.delete(id)
    return
  }
  if (job === undefined) return
  if (job.kind === 'state') {
    documents.set(id, stateOfSource(stateSourceOf(job)))
    return nextPiece(id)
  }
  try {
    const outcome = runFixtureJob(job)
    // a snapshot (SQLite's memory backs it, which cannot move between threads) goes back as a copy
    // of its own, moved: posted as it is, it was copied twice more (into the message, out of it)
    const snapshot = outcome.ok ? outcome.world ?? outcome.reset : undefined
    if (snapshot?.snapshot === undefined) return port.postMessage({ id, outcome })
    const own = new Uint8Array(snapshot.snapshot.byteLength)
    own.set(snapshot.snapshot)
    snapshot.snapshot = own as Buffer
    port.postMessage({ id, outcome }, [own.buffer])
  } catch (e) {
    port.postMessage({ id, failure: e instanceof Error ? e.message : String(e) })
  }
})
