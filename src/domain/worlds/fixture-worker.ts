import { sandboxChannel } from '../../worker-process.js'
import { runFixtureJob, stateSourceOf, type FixtureJob } from './fixture-job.js'
import { stateOfSource } from './state-document.js'

/**
 * The fixture worker: a process of its own (fixture-runner.ts) that reads large bodies that carry
 * fixture documents (parse, validation, and the rows or database they become) away from the event
 * loop that answers requests, with a heap of its own and a bound on it. Messages: {id, job} in;
 * {id, outcome} or {id, failure} out.
 *
 * A state document is written a piece at a time as it is sent: {id, job} answers its first piece
 * ({id, piece}), each {id, pull} the next, and {id, end} follows the last; {id, cancel} gives it
 * up. Neither process holds the whole document (27 MB for 100,000 clients, besides what writing it
 * took: three read at once took the process from 90 MB to 220).
 */

const send = sandboxChannel('fixture-worker.js')

const documents = new Map<number, Generator<Buffer, void, undefined>>()

/** The next piece of a state document. */
function nextPiece (id: number): void {
  const pieces = documents.get(id)
  if (pieces === undefined) return
  try {
    const next = pieces.next()
    if (next.done === true) {
      documents.delete(id)
      send({ id, end: true })
      return
    }
    send({ id, piece: next.value })
  } catch (e) {
    documents.delete(id)
    send({ id, failure: e instanceof Error ? e.message : String(e) })
  }
}

process.on('message', (message: { id: number, job?: FixtureJob, pull?: true, cancel?: true }) => {
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
    send({ id, outcome: runFixtureJob(job) })
  } catch (e) {
    send({ id, failure: e instanceof Error ? e.message : String(e) })
  }
})
