import { printable } from '../printable.js'

/**
 * What a long command tells while it runs: on a terminal, a bar that redraws itself with
 * notes printed above it; anywhere else (a log, CI), plain lines: each note, and the progress
 * at every tenth of the work or every 5 seconds, whichever comes first. Messages quote what an
 * upstream answered (scope names, field names, headers), so they are printed through printable.
 */

export interface Output { isTTY?: boolean; write(text: string): unknown }

const BAR_WIDTH = 30
const LINE_EVERY_MS = 5_000
const REDRAW_EVERY_MS = 100
/** Characters of a message printed (an upstream's field name can be megabytes long). */
const MAX_MESSAGE = 1_000
/** Warnings printed in full; later ones are only counted. */
const MAX_WARNINGS = 50

export class Reporter {
  private drawn = ''
  private lastDraw = 0
  private lastLine = 0
  private tenths = 0
  private printedDone = -1
  private started = Date.now()
  warnings = 0
  /** What was left out, by kind, for the summary. */
  private readonly leftOutKinds = new Map<string, number>()

  constructor (private readonly out: Output, private readonly label: string) {}

  private clearBar (): void {
    if (this.drawn !== '') this.out.write('\r' + ' '.repeat(this.drawn.length) + '\r')
    this.drawn = ''
  }

  /** A line of its own (above the bar on a terminal). */
  note (message: string): void {
    this.clearBar()
    const shown = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message
    this.out.write(`${this.label}: ${printable(shown)}\n`)
  }

  warn (message: string): void {
    this.warnings++
    if (this.warnings <= MAX_WARNINGS) this.note(`warning: ${message}`)
    else if (this.warnings === MAX_WARNINGS + 1) this.note('warning: further warnings are only counted')
  }

  /**
   * Something upstream answered that the fixture cannot hold, left out: a warning (`message`),
   * and one more of its `kind` (`agencies listed more than once`) for the summary.
   */
  leftOut (kind: string, message: string): void {
    this.leftOutKinds.set(kind, (this.leftOutKinds.get(kind) ?? 0) + 1)
    this.warn(message)
  }

  /** One line per kind of thing left out, with its count: `agencies listed more than once: 1 left out`. */
  leftOutSummary (): string[] {
    return [...this.leftOutKinds].map(([kind, n]) => `${kind}: ${n.toLocaleString('en-US')} left out`)
  }

  /** `done` of `total` clients written. */
  progress (done: number, total: number): void {
    const now = Date.now()
    const elapsed = ((now - this.started) / 1000).toFixed(1)
    if (this.out.isTTY === true) {
      if (now - this.lastDraw < REDRAW_EVERY_MS && done < total) return
      this.lastDraw = now
      const filled = Math.round((done / Math.max(total, 1)) * BAR_WIDTH)
      const text = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done}/${total} clients ${elapsed} s`
      this.out.write('\r' + text)
      this.drawn = text
      return
    }
    const reached = Math.floor((done * 10) / Math.max(total, 1))
    if (done === this.printedDone) return
    if (reached <= this.tenths && now - this.lastLine < LINE_EVERY_MS && done < total) return
    this.printedDone = done
    this.tenths = reached
    this.lastLine = now
    this.out.write(`${this.label}: ${done}/${total} clients (${Math.floor((done * 100) / Math.max(total, 1))}%) ${elapsed} s\n`)
  }

  /** Ends the bar's line. */
  finish (): void {
    if (this.drawn !== '') this.out.write('\n')
    this.drawn = ''
  }
}
