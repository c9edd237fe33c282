import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'

/**
 * The checkpoints of one file database, on a thread of their own (checkpoints.ts): a connection
 * of its own copies what the write-ahead log holds into the database file, PASSIVE (it never
 * waits for, nor blocks, the writer on the event loop), again at once while a pass finds more to
 * copy than it could. Messages out: COPY_THE_REST after a pass that found at least
 * `restartFrames` frames in the log, after which it waits for 'resume' (the writer copied the
 * rest); in: 'resume', and 'stop' (the connection closes, the thread ends).
 */
export interface CheckpointWorkerData {
  file: string
  intervalMs: number
  restartFrames: number
}

/** The one message out: the writer is asked to copy the rest, after which it answers 'resume'. */
const COPY_THE_REST = 'copy-the-rest'

const { file, intervalMs, restartFrames } = workerData as CheckpointWorkerData
const port = parentPort!
const db = new Database(file, { fileMustExist: true })

/** True from a pass that asked the writer for the rest until it answers 'resume': its own copy must not find this one running. */
let handedOver = false
let stopped = false
let next: NodeJS.Timeout | undefined

/**
 * Frames written during the last pass below which the writer is asked for the rest: what it then
 * copies on the event loop (2 MiB of pages). Until then, at most CHASES passes in a row follow the log.
 */
const HANDOVER_FRAMES = 512
const CHASES = 3
/** After the writer copied the rest: time for its next commit to start the log over before the next pass. */
const RESUME_MS = 20
/** Frames in the log at the last pass, and passes in a row that found it past `restartFrames`. */
let lastFrames = 0
let chases = 0

/**
 * One copy. The next follows at once while the log grows (a writer at full speed), else after
 * `intervalMs`; once the log holds `restartFrames`, the writer copies what the last pass could not
 * (and the log starts over), as soon as that is small.
 */
function pass (): void {
  next = undefined
  if (handedOver || stopped) return
  const [result] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number, log: number, checkpointed: number }>
  const frames = result?.log ?? 0
  const grewBy = frames - lastFrames
  lastFrames = frames
  if (frames >= restartFrames) {
    chases++
    if (grewBy < HANDOVER_FRAMES || chases >= CHASES) {
      handedOver = true
      chases = 0
      lastFrames = 0
      port.postMessage(COPY_THE_REST)
      return
    }
  }
  const copiedAll = result === undefined || result.checkpointed >= result.log
  next = setTimeout(pass, copiedAll && chases === 0 ? intervalMs : 0)
}

port.on('message', (message: unknown) => {
  if (message === 'resume') {
    // not at once: a pass running when the writer next commits would keep its log from starting over
    handedOver = false
    if (next === undefined) next = setTimeout(pass, RESUME_MS)
    return
  }
  if (message !== 'stop') return
  stopped = true
  clearTimeout(next)
  db.close()
  port.close()
})

pass()
