import { closeSync, openSync, readSync } from 'node:fs'

/** A file past the most its reader takes; it was not read beyond that. */
export class FileTooLarge extends Error {
  constructor (readonly file: string, readonly maxBytes: number) {
    super(`${file} holds more than ${maxBytes} bytes`)
    this.name = 'FileTooLarge'
  }
}

const CHUNK_BYTES = 64 * 1024

/**
 * Reads a file of at most `maxBytes` (a regular file, a pipe, a device): past that it stops and
 * throws FileTooLarge, so that a file given by name (a key, a report) never sizes the memory
 * taken. System errors (ENOENT, EACCES, EISDIR) are thrown as they are.
 */
export function readFileBounded (file: string, maxBytes: number): Buffer {
  const fd = openSync(file, 'r')
  try {
    const chunks: Buffer[] = []
    let total = 0
    const chunk = Buffer.allocUnsafe(Math.min(maxBytes + 1, CHUNK_BYTES))
    for (;;) {
      const read = readSync(fd, chunk, 0, chunk.length, null)
      if (read === 0) return Buffer.concat(chunks, total)
      total += read
      if (total > maxBytes) throw new FileTooLarge(file, maxBytes)
      chunks.push(Buffer.from(chunk.subarray(0, read)))
    }
  } finally {
    closeSync(fd)
  }
}
