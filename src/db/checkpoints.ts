import { statSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import type { CheckpointWorkerData } from './checkpoint-worker.js'
import type { Db } from './database.js'

/**
 * A file database's checkpoints, off the event loop. SQLite's own rule copies the write-ahead log
 * into the database file on the thread that commits, once the log holds 1,000 pages: about half
 * of a log-note write's time over a large database (a copy every ~200 writes, two fsyncs each).
 * Here a thread of its own (checkpoint-worker.ts) copies the log every CHECK_MS, and again at once
 * while it grows, never blocking the writer; the writer's thread only copies the pages written
 * during the thread's last pass, once the log holds RESTART_FRAMES, so that its next commit starts
 * the log over (SQLite restarts a log only once all of it is copied, which a copy running beside
 * the writes never reaches).
 *
 * The thread (a V8 isolate, ~9 MB) starts only once the log has grown past START_BYTES: a database
 * only read never pays for it. Should it fail, SQLite's rule comes back.
 */

/** How often the thread copies the log, and how often, before it runs, the log's size is looked at. */
const CHECK_MS = 100
/**
 * The log size at which the thread starts: half of what SQLite's rule lets it reach (1,000 pages of
 * 4 KiB and their frame headers), a size the log keeps once reached (SQLite reuses it from its start).
 */
const START_BYTES = 2 * 1024 * 1024
/** Frames (pages) in the log at which the writer's thread copies the rest and the log starts over: 16 MiB of 4 KiB pages. */
export const RESTART_FRAMES = 4096
/** SQLite's own rule, restored when the thread fails. */
const SQLITE_AUTOCHECKPOINT = 1000

export interface Checkpoints {
  /** Stops the thread, its connection closed: before the database closes, so that the last connection is the writer's. */
  stop(): Promise<void>
  /** True while the thread copies the log. */
  readonly aside: boolean
}

const NONE: Checkpoints = { stop: async () => {}, aside: false }

export interface CheckpointEvents {
  /** The thread copies the log from now on. */
  started?: () => void
  /** Why the thread stopped early (SQLite's rule is back then). */
  failed?: (reason: string) => void
}

/** Checkpoints of `db` (a file database in WAL mode) on a thread running `workerFile` (the compiled checkpoint-worker.js). */
export function checkpointAside (db: Db, workerFile: URL, events: CheckpointEvents = {}): Checkpoints {
  if (db.memory || String(db.pragma('journal_mode', { simple: true })) !== 'wal') return NONE
  let worker: Worker | undefined
  let stopping = false
  let ended: Promise<void> = Promise.resolve()

  const giveBack = (reason: string) => {
    worker = undefined
    if (stopping || !db.open) return
    db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`)
    events.failed?.(reason)
  }

  const start = () => {
    const data: CheckpointWorkerData = { file: db.name, intervalMs: CHECK_MS, restartFrames: RESTART_FRAMES }
    // plain JavaScript with a small heap: none of this process's flags (a test runner's TypeScript loader)
    const thread = new Worker(workerFile, { workerData: data, execArgv: [], resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 } })
    worker = thread
    thread.unref()
    ended = new Promise((resolve) => thread.once('exit', () => resolve()))
    // from the moment the thread copies, the writer no longer does
    thread.once('online', () => {
      if (worker !== thread || !db.open) return
      db.pragma('wal_autocheckpoint = 0')
      events.started?.()
    })
    thread.on('message', () => {
      // what the thread could not copy (pages written during its pass, or held by the writer's
      // transaction at the time): copied here, outside any transaction, the next commit starts the log over
      if (worker !== thread || !db.open) return
      if (!db.inTransaction) db.pragma('wal_checkpoint(PASSIVE)')
      thread.postMessage('resume')
    })
    thread.once('error', (e: Error) => giveBack(`the checkpoint thread failed: ${e.message}`))
    thread.once('exit', (code) => { if (worker === thread) giveBack(`the checkpoint thread ended (exit code ${code})`) })
  }

  const watch = setInterval(() => {
    const bytes = statSync(`${db.name}-wal`, { throwIfNoEntry: false })?.size ?? 0
    if (bytes < START_BYTES || stopping || !db.open) return
    clearInterval(watch)
    start()
  }, CHECK_MS)
  watch.unref()

  return {
    get aside () { return worker !== undefined },
    async stop () {
      stopping = true
      clearInterval(watch)
      const thread = worker
      worker = undefined
      if (thread === undefined) return
      // the process waits for the thread's connection to close
      thread.ref()
      thread.postMessage('stop')
      await ended
    }
  }
}
