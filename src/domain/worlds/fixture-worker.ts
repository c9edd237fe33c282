import { parentPort } from 'node:worker_threads'
import { runFixtureJob, type FixtureJob } from './fixture-job.js'

/**
 * The fixture worker: reads large bodies that carry fixture documents (parse, validation, and the
 * rows or database they become) away from the event loop that answers requests, with a heap of its
 * own and a bound on it. Messages: {id, job} in; {id, outcome} or {id, failure} out.
 */

const port = parentPort
if (port === null) throw new Error('fixture-worker.js runs as a worker thread')

port.on('message', ({ id, job }: { id: number, job: FixtureJob }) => {
  try {
    const outcome = runFixtureJob(job)
    // a state document's pieces go back moved, not copied, each that owns its whole memory (a
    // large one does; a small one may share Node's pool, and is copied)
    const pieces = (outcome.ok ? outcome.state : undefined) ?? []
    const whole = pieces.filter((p) => p.byteOffset === 0 && p.byteLength === p.buffer.byteLength && p.buffer instanceof ArrayBuffer)
    port.postMessage({ id, outcome }, whole.map((p) => p.buffer as ArrayBuffer))
  } catch (e) {
    port.postMessage({ id, failure: e instanceof Error ? e.message : String(e) })
  }
})
