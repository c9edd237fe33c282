import { fork, type ChildProcess } from 'node:child_process'
import type { Socket } from 'node:net'
import { fileURLToPath } from 'node:url'

/**
 * The sandbox's worker processes (fixture bodies, examiner reports): a process, not a thread, so
 * that the tens of MB a large job takes (parsed documents, SQLite's pages, a session's records)
 * all go back to the system when it ends. A thread's heap went back too, but the allocator kept
 * much of the rest: the sandbox stayed 60 MB larger after an 8 MiB fixture, and a report's 77 MB
 * heap counted in the sandbox's own memory while it was computed.
 */

/** What V8 writes when a process runs out of its heap, then aborts. */
const OUT_OF_MEMORY = /heap out of memory|Reached heap limit/
/** A worker's error output kept to tell why it stopped (V8's report of its last collections comes first). */
const ERROR_OUTPUT_CHARS = 16 * 1024
/**
 * A worker's young generation (semi-space) bound: what a job builds lives until it ends, so a
 * larger one only lets short-lived objects pile up.
 */
const SEMI_SPACE_MB = 4

/** Why a worker process ended by itself: out of its heap, or otherwise (a signal, an exit code). */
export type WorkerEnd = { outOfMemory: true } | { outOfMemory: false, how: string }

export interface WorkerProcessOptions {
  /** The old generation's bound: a job that needs more ends the process (WorkerEnd outOfMemory). */
  heapMb: number
  /** A message from the worker. */
  onMessage: (message: unknown) => void
  /** The process ended, stopped by nobody (never called after stop()). */
  onEnd: (end: WorkerEnd) => void
}

/**
 * A worker process running a module (compiled JavaScript), with a channel for messages (values as
 * structured clone sends them: Uint8Arrays, Maps). It keeps this process running only while it
 * has work (busy).
 */
export class WorkerProcess {
  private readonly child: ChildProcess
  private stopped = false

  constructor (file: URL, { heapMb, onMessage, onEnd }: WorkerProcessOptions) {
    this.child = fork(fileURLToPath(file), [], {
      // its heap bounded, and no flags of this process (a test runner's TypeScript loader): the worker is plain JavaScript
      execArgv: [`--max-old-space-size=${heapMb}`, `--max-semi-space-size=${SEMI_SPACE_MB}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc']
    })
    // its error output never keeps the sandbox running
    const errors = this.child.stderr as Socket
    errors.unref()
    let errorOutput = ''
    errors.on('data', (chunk: Buffer) => {
      if (errorOutput.length < ERROR_OUTPUT_CHARS) errorOutput += chunk.toString('utf8')
    })
    this.busy(false)
    this.child.on('message', onMessage)
    // 'close', not 'exit': its error output has been read to the end
    this.child.on('close', (code, signal) => {
      if (this.stopped) return
      this.stopped = true
      onEnd(OUT_OF_MEMORY.test(errorOutput) ? { outOfMemory: true } : { outOfMemory: false, how: signal ?? `exit code ${code ?? '?'}` })
    })
    this.child.on('error', (error: Error) => {
      // it could not be started, or a message could not be sent to it: it is of no more use
      if (this.stopped) return
      void this.stop()
      onEnd({ outOfMemory: false, how: error.message })
    })
  }

  send (message: unknown): void {
    if (!this.stopped) this.child.send(message as object)
  }

  /**
   * Whether the worker keeps this process running: while it has a job (a command that waits for
   * one must not end with nothing else to do), not while it waits for the next.
   */
  busy (busy: boolean): void {
    if (busy) {
      this.child.ref()
      this.child.channel?.ref()
    } else {
      this.child.unref()
      this.child.channel?.unref()
    }
  }

  /** Stops the worker on purpose (onEnd is not called) and waits until it has exited. */
  async stop (): Promise<void> {
    this.stopped = true
    const child = this.child
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGKILL')
    await exited
  }
}

/**
 * In a worker process: the function that sends a message to the sandbox. The worker ends when its
 * channel closes (the sandbox stopped it, or ended without stopping it: killed), as nothing is
 * left to answer.
 */
export function sandboxChannel (module: string): (message: unknown) => void {
  if (process.send === undefined) throw new Error(`${module} runs as a child process of the sandbox, with a channel to it`)
  process.on('disconnect', () => process.exit(0))
  return (message) => process.send!(message)
}
