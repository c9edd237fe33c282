import { renameSync, rmSync, writeFileSync } from 'node:fs'

/**
 * What `serve` tells the program that started it once it listens: where, and which process.
 * Written as one JSON line beginning `{"url":`, on stdout (where the JSON log lines begin
 * `{"level":`) and, asked for, in a file, so that a program can start the sandbox on port 0 and
 * learn its address without reading logs or guessing a free port.
 */
export interface Ready {
  url: string
  pid: number
}

export const readyLine = ({ url, pid }: Ready): string => JSON.stringify({ url, pid }) + '\n'

/**
 * Writes the ready line to `path` atomically: a file beside it, then renamed, so that a program
 * polling for the file never reads it half written. Answers a function that removes it (on a
 * graceful stop: the file says the sandbox listens).
 */
export function writeReadyFile (path: string, ready: Ready): () => void {
  const partial = `${path}.${ready.pid}.partial`
  try {
    writeFileSync(partial, readyLine(ready), { flag: 'w' })
    renameSync(partial, path)
  } catch (e) {
    rmSync(partial, { force: true })
    throw new ReadyFileError(`cannot write the ready file ${path}: ${(e as Error).message}; give --ready-file a path in a folder that exists and is writable`)
  }
  return () => rmSync(path, { force: true })
}

export class ReadyFileError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ReadyFileError'
  }
}
