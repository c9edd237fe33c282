import { parentPort } from 'node:worker_threads'
import { runReportJob, type ClientColumns, type ReportJob } from './report-job.js'

/**
 * The report worker: judges sessions away from the event loop that answers requests (a session
 * at its cap of 200,000 requests takes about a second), with a heap of its own and a bound on it.
 * Messages: {job, id} in; {need, id, agencies} out, answered by {clients, id}; {done, id, report} or
 * {failed, id, message} out.
 */

type Incoming = { type: 'job', id: number, job: ReportJob } | { type: 'clients', id: number, clients: Array<[number, ClientColumns]> }

const waiting = new Map<number, (clients: Map<number, ClientColumns>) => void>()
const port = parentPort
if (port === null) throw new Error('report-worker.js runs as a worker thread')

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
  runReportJob(job, clientsOf).then(
    (report) => port.postMessage({ type: 'done', id, report }),
    (e: unknown) => port.postMessage({ type: 'failed', id, message: e instanceof Error ? e.message : String(e) })
  )
})
