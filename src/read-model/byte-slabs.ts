/**
 * Memory for cached bytes: a few large slabs, allocated once each and filled in turn. When they
 * are full the owner starts over with `reset()`, and the same slabs are written again, so what a
 * cache drops never becomes garbage for the collector and its memory never passes `budget`.
 *
 * What is kept is known by a handle, a small integer: no JavaScript object per kept item (a
 * view object each would land in the old generation and pile up there between collections).
 * A handle is good until the next `reset()`; reset only between uses, never while a handle
 * taken in the same use is still needed.
 */
/** What keep() returns when the slabs are full. */
export const NOT_KEPT = -1
const COMMA = 0x2c
const OPEN = Buffer.from('[')
const SEPARATOR = Buffer.from(',')
const CLOSE = Buffer.from(']')

export class ByteSlabs {
  private readonly slabs: Buffer[] = []
  /** Slab being filled, and the bytes used in it. */
  private current = 0
  private used = 0
  /** Slab, offset and length of each kept item, by handle. */
  private where = new Int32Array(3 * 1024)
  private count = 0

  constructor (
    /** Bytes of all slabs together. */
    private readonly budget: number,
    /** The largest text a slab holds. */
    readonly slabBytes = 1024 * 1024
  ) {
    if (!(slabBytes > 0) || !(budget >= 0)) throw new Error(`ByteSlabs needs a positive slab size and a budget, got ${slabBytes} and ${budget}`)
  }

  /** Slabs the budget allows. */
  private get capacity (): number {
    return Math.floor(this.budget / this.slabBytes)
  }

  /**
   * Copies `text` in as UTF-8 (`bytes` long: Buffer.byteLength(text), at most slabBytes) and
   * returns its handle; NOT_KEPT when the slabs are full (reset, then keep again).
   */
  keep (text: string, bytes: number): number {
    if (bytes > this.slabBytes) throw new RangeError(`${bytes} bytes do not fit a slab of ${this.slabBytes}`)
    if (this.used + bytes > this.slabBytes) {
      if (this.current + 1 >= this.capacity) return NOT_KEPT
      this.current++
      this.used = 0
    }
    if (this.current >= this.capacity) return NOT_KEPT
    const slab = (this.slabs[this.current] ??= Buffer.allocUnsafeSlow(this.slabBytes))
    // a comma before it when there is room: items kept one after another then join into an array in one copy
    if (this.used > 0 && this.used + 1 + bytes <= this.slabBytes) slab[this.used++] = COMMA
    writeText(slab, text, this.used, bytes)
    if (3 * (this.count + 1) > this.where.length) {
      const bigger = new Int32Array(this.where.length * 2)
      bigger.set(this.where)
      this.where = bigger
    }
    const handle = this.count++
    this.where[3 * handle] = this.current
    this.where[3 * handle + 1] = this.used
    this.where[3 * handle + 2] = bytes
    this.used += bytes
    return handle
  }

  /** Bytes of a kept item. */
  size (handle: number): number {
    return this.where[3 * handle + 2]
  }

  /** The last of the handles from `parts[i]` on that were kept one after another in one slab, a comma between each. */
  private runEnd (parts: ReadonlyArray<number | string>, i: number): number {
    const { where } = this
    let last = i
    while (last + 1 < parts.length) {
      const handle = parts[last] as number
      const next = parts[last + 1]
      if (typeof next !== 'number' || where[3 * next] !== where[3 * handle] || where[3 * next + 1] !== where[3 * handle + 1] + where[3 * handle + 2] + 1) break
      last++
    }
    return last
  }

  /** The bytes of a run of handles, first to last: a view of its slab. */
  private runBytes (first: number, last: number): Buffer {
    const { where } = this
    return this.slabs[where[3 * first]].subarray(where[3 * first + 1], where[3 * last + 1] + where[3 * last + 2])
  }

  /** Bytes of the JSON array of the parts (what jsonArray and jsonChunks make). */
  jsonLength (parts: ReadonlyArray<number | string>): number {
    let length = 2 + Math.max(0, parts.length - 1)
    for (const part of parts) length += typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : this.size(part)
    return length
  }

  /**
   * The JSON array of the parts (handles of kept JSON values, or JSON text) in one buffer from
   * `alloc`: `[a,b,…]`. Handles kept one after another are copied as one run, commas and all: a
   * batch of 200 clients read together is a few copies, not 200.
   */
  jsonArray (parts: ReadonlyArray<number | string>, alloc: (length: number) => Buffer = (length) => Buffer.allocUnsafe(length)): Buffer {
    // each text's UTF-8 length measured once (a cold batch is 200 texts of a few kB)
    const sizes = parts.map((p) => (typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : this.size(p)))
    const out = alloc(sizes.reduce((sum, size) => sum + size, 2 + Math.max(0, parts.length - 1)))
    out[0] = 0x5b // [
    let at = 1
    for (let i = 0; i < parts.length;) {
      if (i > 0) out[at++] = COMMA
      const part = parts[i]
      if (typeof part === 'string') {
        writeText(out, part, at, sizes[i])
        at += sizes[i++]
        continue
      }
      const last = this.runEnd(parts, i)
      at += this.runBytes(part, parts[last] as number).copy(out, at)
      i = last + 1
    }
    out[at] = 0x5d // ]
    return out
  }

  /**
   * The same JSON array as chunks, nothing copied: each run of handles a view of its slab, text
   * parts and separators small buffers of their own. The views read the slabs as they are: they
   * are good until the next `reset()`, which must wait until nothing reads them.
   */
  jsonChunks (parts: ReadonlyArray<number | string>): Buffer[] {
    const chunks: Buffer[] = [OPEN]
    for (let i = 0; i < parts.length;) {
      if (i > 0) chunks.push(SEPARATOR)
      const part = parts[i]
      if (typeof part === 'string') {
        chunks.push(Buffer.from(part, 'utf8'))
        i++
        continue
      }
      const last = this.runEnd(parts, i)
      chunks.push(this.runBytes(part, parts[last] as number))
      i = last + 1
    }
    chunks.push(CLOSE)
    return chunks
  }

  /** Forgets every kept item; the slabs are written again from the start. */
  reset (): void {
    this.current = 0
    this.used = 0
    this.count = 0
  }

  /** Bytes allocated for slabs so far (they are kept for reuse). */
  get allocatedBytes (): number {
    return this.slabs.length * this.slabBytes
  }
}

/** Writes text `bytes` long in UTF-8; all-ASCII text is the same in Latin-1, which is copied rather than encoded. */
function writeText (target: Buffer, text: string, at: number, bytes: number): void {
  target.write(text, at, bytes, bytes === text.length ? 'latin1' : 'utf8')
}
