import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads'
import { runReportJob, type ClientColumns, type ReportJob } from './report-job.js'

/**
 * The report worker: judges sessions away from the event loop that answers requests (a session
 * at its cap of 200,000 requests takes about a second), with a heap of its own and a bound on it.
 * Messages: {job, id} in; {need, id, agencies} out, answered by {clients, id}; {mirror, id,
 * agencyId, signal} out, answered on the mirror port (workerData.mirrors) while this thread waits
 * on `signal`; {done, id, report} or {failed, id, message} out.
 */

type Incoming = { type: 'job', id: number, job: ReportJob } | { type: 'clients', id: number, clients: Array<[number, ClientColumns]> }

const waiting = new Map<number, (clients: Map<number, ClientColumns>) => void>()
const port = parentPort
if (port === null) throw new Error('report-worker.js runs as a worker thread')
const mirrors = (workerData as { mirrors: MessagePort }).mirrors

/**
 * One mirror's client list, asked for when the sync check reaches it: this thread waits (it has
 * nothing else to do) until the main thread has put the bytes on the mirror port, so a session's
 * mirrors are never all in memory at once.
 */
function mirrorClients (id: number, agencyId: number): string {
  const signal = new Int32Array(new SharedArrayBuffer(4))
  port!.postMessage({ type: 'mirror', id, agencyId, signal })
  Atomics.wait(signal, 0, 0)
  const answer = receiveMessageOnPort(mirrors)?.message as { bytes?: Uint8Array } | undefined
  return answer?.bytes === undefined ? '[]' : Buffer.from(answer.bytes.buffer, answer.bytes.byteOffset, answer.bytes.byteLength).toString('utf8')
}

port.on('message', (message: Incoming) => {
  if (message.type === 'clients') {
    waiting.get(message.id)?.(new Map(message.clients))
    waiting.delete(message.id)
    return
  }
  const { id, job } = message
  const clientsOf = (agencies: number[]) => new Promise<Map<number, ClientColumns>>((resolve) => {
    waiting.set(id, resolve)
    port.postMessage({ type: 'need', id, agencies })
  })
  runReportJob(job, clientsOf, (agencyId) => mirrorClients(id, agencyId)).then(
    (report) => port.postMessage({ type: 'done', id, report }),
    (e: unknown) => port.postMessage({ type: 'failed', id, message: e instanceof Error ? e.message : String(e) })
  )
})
