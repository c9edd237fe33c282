import { sandboxChannel } from '../../worker-process.js'
import { runReportJob, type ClientColumns, type ReportJob } from './report-job.js'

/**
 * The report worker: a process of its own (report-runner.ts) that judges sessions away from the
 * event loop that answers requests (a session at its cap of 200,000 requests takes about a second
 * and some 80 MB of heap), with a bound on its heap. Messages: {job, id} in; {need, id, agencies}
 * out, answered by {clients, id}; {mirror, id, agencyId} out, answered by {mirror, id, bytes} (one
 * mirror's client list at a time, as the sync check reaches it, so a session's mirrors are never
 * all in memory at once); {done, id, report} or {failed, id, message} out.
 */

type Incoming =
  | { type: 'job', id: number, job: ReportJob }
  | { type: 'clients', id: number, clients: Array<[number, ClientColumns]> }
  | { type: 'mirror', id: number, bytes?: Uint8Array }

const send = sandboxChannel('report-worker.js')

const waitingClients = new Map<number, (clients: Map<number, ClientColumns>) => void>()
const waitingMirrors = new Map<number, (text: string) => void>()

process.on('message', (message: Incoming) => {
  const { id } = message
  if (message.type === 'clients') {
    waitingClients.get(id)?.(new Map(message.clients))
    waitingClients.delete(id)
    return
  }
  if (message.type === 'mirror') {
    const { bytes } = message
    waitingMirrors.get(id)?.(bytes === undefined ? '[]' : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'))
    waitingMirrors.delete(id)
    return
  }
  const clientsOf = (agencies: number[]) => new Promise<Map<number, ClientColumns>>((resolve) => {
    waitingClients.set(id, resolve)
    send({ type: 'need', id, agencies })
  })
  const mirrorClients = (agencyId: number) => new Promise<string>((resolve) => {
    waitingMirrors.set(id, resolve)
    send({ type: 'mirror', id, agencyId })
  })
  runReportJob(message.job, clientsOf, mirrorClients).then(
    (report) => send({ type: 'done', id, report }),
    (e: unknown) => send({ type: 'failed', id, message: e instanceof Error ? e.message : String(e) })
  )
})
