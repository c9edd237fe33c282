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
    // a state document goes back moved, not copied, when it owns its whole memory (a large one does)
    const state = outcome.ok ? outcome.state : undefined
    const whole = state !== undefined && state.byteOffset === 0 && state.byteLength === state.buffer.byteLength && state.buffer instanceof ArrayBuffer
    port.postMessage({ id, outcome }, whole ? [state.buffer as ArrayBuffer] : [])
  } catch (e) {
    port.postMessage({ id, failure: e instanceof Error ? e.message : String(e) })
  }
})
