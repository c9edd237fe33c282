import { hostname } from 'node:os'
import sonicBoom from 'sonic-boom'

// a CommonJS package: its class is a property of what it exports
const { SonicBoom } = sonicBoom
type Destination = InstanceType<typeof SonicBoom>

/**
 * Standard output as the logs' destination, bounded. Lines are written beside the event loop; while
 * nobody reads the pipe, they wait in memory up to LOG_BUFFER_BYTES, and past it they are dropped
 * and counted (a line says how many once a write goes through again; the metrics count them too).
 * pino's own destination keeps every line while the pipe is full, and at exit retries a full pipe
 * forever, so a process whose reader stalled grew without bound and outlived SIGTERM.
 */

/** What the lines waiting for the pipe may take by default. */
export const DEFAULT_LOG_BUFFER_BYTES = 8 * 1024 * 1024
export const MIN_LOG_BUFFER_BYTES = 16 * 1024
export const MAX_LOG_BUFFER_BYTES = 1024 * 1024 * 1024
/** How long the exit may wait for a full pipe to take the last lines. */
const EXIT_FLUSH_MS = 1000

/** pino's number for warn: the notice of dropped lines reads as the logger's own lines do. */
const WARN = 40

class BoundedStdout {
  private readonly boom: Destination
  /** Lines dropped since the last notice, and in all. */
  private pending = 0
  dropped = 0
  private broken = false
  private noticeScheduled = false
  private exitDeadline: number | undefined

  constructor (private maxBytes: number, private format: ((line: string) => string) | undefined) {
    this.boom = new SonicBoom({
      fd: 1,
      sync: false,
      maxLength: maxBytes,
      // a full pipe is tried again every 100 ms, on a timer; at exit, only until the deadline
      retryEAGAIN: () => this.exitDeadline === undefined || Date.now() < this.exitDeadline
    })
    this.boom.on('drop', () => { this.pending++; this.dropped++ })
    this.boom.on('write', () => { if (this.pending > 0) this.scheduleNotice() })
    // a reader that is gone (EPIPE) or a closed descriptor: the logs stop, the sandbox goes on
    this.boom.on('error', () => { this.broken = true })
    process.once('exit', () => this.flushAtExit())
  }

  bound (bytes: number, format: ((line: string) => string) | undefined): void {
    this.maxBytes = bytes
    this.format = format
    // a field of SonicBoom its types leave out
    ;(this.boom as Destination & { maxLength: number }).maxLength = bytes
  }

  write (line: string): boolean {
    if (this.broken) {
      this.dropped++
      return true
    }
    return this.boom.write(this.format === undefined ? line : this.format(line))
  }

  /** After the write that ended the stall: the notice goes behind the lines that waited. */
  private scheduleNotice (): void {
    if (this.noticeScheduled) return
    this.noticeScheduled = true
    setImmediate(() => {
      this.noticeScheduled = false
      const lines = this.pending
      this.pending = 0
      this.write(JSON.stringify({
        level: WARN,
        time: Date.now(),
        pid: process.pid,
        hostname: hostname(),
        droppedLines: lines,
        msg: `${lines} log line${lines === 1 ? '' : 's'} dropped: standard output was not read while ` +
          `${this.maxBytes} bytes of lines waited for it (LOG_BUFFER_BYTES)`
      }) + '\n')
    })
  }

  private flushAtExit (): void {
    if (this.broken) return
    this.exitDeadline = Date.now() + EXIT_FLUSH_MS
    try {
      this.boom.flushSync()
    } catch {
      // the pipe stayed full past the deadline, or the reader is gone: the lines left are lost
    }
  }
}

let stdout: BoundedStdout | undefined

/**
 * The one writer of the process's standard output for logs, holding at most `maxBytes` unread;
 * `format` turns each JSON line into the text written (LOG_PRETTY's readable lines).
 */
export function stdoutLogStream (maxBytes: number, format?: (line: string) => string): { write(line: string): boolean } {
  if (stdout === undefined) stdout = new BoundedStdout(maxBytes, format)
  else stdout.bound(maxBytes, format)
  return stdout
}

/** Log lines dropped in this process: standard output not read, or gone. */
export function logLinesDropped (): number {
  return stdout?.dropped ?? 0
}
