import { appendFileSync, closeSync, existsSync, ftruncateSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import type { AgencySurvey } from './survey.js'

/**
 * The fixture is written to `<out>.partial` and renamed to `<out>` when complete. Beside it,
 * `<out>.checkpoint` holds one line of plan (the survey, the fixture's opening text, the
 * options it was made with), then one line per step written (how far the partial file is
 * valid) and one line per agency whose deletion times are known. The data is written before
 * its line, so after a crash or a kill the last complete line is always true; `--resume` cuts
 * the partial file back to it and carries on.
 */

export interface Plan {
  format: 2
  /** Identifies the options that shape the output; a resume with other options starts over. */
  key: string
  /** Text before the first agency: the integration and the opening of the agency list. */
  header: string
  agencies: AgencySurvey[]
  /** The anonymising seed (drawn at random when none was given), so a resume maps alike. */
  seed?: string
  /** The integration's new secret, printed at the end. */
  secret: string
}

export interface Mark {
  /** Steps written (the next step to write). */
  step: number
  /** Valid bytes of the partial file. */
  bytes: number
  /** Clients written so far in the current agency (a separator goes before the next). */
  inAgency: number
  /** Live clients read so far, for the progress bar. */
  done: number
}

export const checkpointPath = (out: string) => `${out}.checkpoint`
export const partialPath = (out: string) => `${out}.partial`

/** Deletion times of one agency's deleted clients: [clientNumber, epoch ms] pairs. */
export interface DeletionTimes { agency: number; times: Array<[number, number]> }

export interface Checkpoint {
  plan: Plan
  mark: Mark | undefined
  /** By agency index. */
  times: Map<number, Array<[number, number]>>
}

/** The plan, the last complete mark and the deletion times found by an interrupted import, if there is one. */
export function readCheckpoint (out: string): Checkpoint | undefined {
  const file = checkpointPath(out)
  if (!existsSync(file) || !existsSync(partialPath(out))) return undefined
  const lines = readFileSync(file, 'utf8').split('\n')
  let plan: Plan
  try {
    plan = JSON.parse(lines[0]) as Plan
  } catch {
    return undefined
  }
  if (plan.format !== 2) return undefined
  let mark: Mark | undefined
  const times = new Map<number, Array<[number, number]>>()
  for (const line of lines.slice(1)) {
    let entry: Mark | { deletionTimes: DeletionTimes }
    try {
      if (line === '') continue
      entry = JSON.parse(line) as typeof entry
    } catch {
      // a line cut by the interruption: the one before it stands
      continue
    }
    if ('deletionTimes' in entry) times.set(entry.deletionTimes.agency, entry.deletionTimes.times)
    else mark = entry
  }
  return { plan, mark, times }
}

export class CheckpointedFile {
  private fd: number
  private position: number

  private constructor (private readonly out: string, fd: number, position: number) {
    this.fd = fd
    this.position = position
  }

  /** A new import: the plan is recorded, the partial file starts with the header. */
  static start (out: string, plan: Plan): CheckpointedFile {
    writeFileSync(checkpointPath(out), JSON.stringify(plan) + '\n')
    const file = new CheckpointedFile(out, openSync(partialPath(out), 'w'), 0)
    file.write(plan.header, { step: 0, bytes: 0, inAgency: 0, done: 0 })
    return file
  }

  /** An interrupted import: the partial file is cut back to the mark. */
  static resume (out: string, mark: Mark): CheckpointedFile {
    const fd = openSync(partialPath(out), 'r+')
    ftruncateSync(fd, mark.bytes)
    return new CheckpointedFile(out, fd, mark.bytes)
  }

  /** Appends `text`, then records `mark` (its bytes filled in). */
  write (text: string, mark: Mark): Mark {
    this.position += writeSync(this.fd, text, this.position, 'utf8')
    const written = { ...mark, bytes: this.position }
    appendFileSync(checkpointPath(this.out), JSON.stringify(written) + '\n')
    return written
  }

  /** Records an agency's deletion times, so a resume need not search them again. */
  recordTimes (deletionTimes: DeletionTimes): void {
    appendFileSync(checkpointPath(this.out), JSON.stringify({ deletionTimes }) + '\n')
  }

  /** The last text, then the partial file becomes the output and the checkpoint goes. */
  finish (footer: string): void {
    this.position += writeSync(this.fd, footer, this.position, 'utf8')
    closeSync(this.fd)
    renameSync(partialPath(this.out), this.out)
    rmSync(checkpointPath(this.out), { force: true })
  }

  close (): void {
    closeSync(this.fd)
  }
}
