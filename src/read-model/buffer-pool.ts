/**
 * Buffers for large answers, given back once the answer has been written and reused.
 *
 * A fresh buffer per answer of 600 kB, a thousand times a second, is memory outside the
 * JavaScript heap that the collector learns about only by counting it: it collects more often,
 * then lets the heap grow further for a while, and the process's memory swings by tens of MB.
 * Reusing a handful of buffers keeps it flat.
 *
 * Only a buffer this pool lent, and not yet given back, is ever taken back: giving anything
 * else, or the same buffer twice, is ignored, so a mistake costs an allocation, never two
 * answers sharing memory.
 */
export class BufferPool {
  private readonly free: Buffer[] = []
  private freeBytes = 0
  /** Memory lent and not given back. */
  private readonly lent = new WeakSet<ArrayBufferLike>()

  constructor (
    /** Bytes kept for reuse at most; a larger answer gets a buffer of its own, never kept. */
    private readonly budget = 8 * 1024 * 1024,
    /** Sizes are rounded up to this, so answers of about the same size share buffers. */
    private readonly unit = 64 * 1024
  ) {}

  /**
   * A buffer of exactly `length` bytes (contents undefined): the smallest kept one large enough.
   * Answers under one unit are no churn worth pooling, and ones past the budget are never kept.
   */
  take (length: number): Buffer {
    if (length < this.unit || length > this.budget) return Buffer.allocUnsafe(length)
    let best = -1
    for (let i = 0; i < this.free.length; i++) {
      if (this.free[i].length >= length && (best === -1 || this.free[i].length < this.free[best].length)) best = i
    }
    let base: Buffer | undefined
    if (best >= 0) {
      ;[base] = this.free.splice(best, 1)
      this.freeBytes -= base.length
    }
    base ??= Buffer.allocUnsafeSlow(Math.min(this.budget, Math.max(this.unit, Math.ceil(length / this.unit) * this.unit)))
    this.lent.add(base.buffer)
    return base.subarray(0, length)
  }

  /** Whether `buffer` is lent by this pool and not given back yet. */
  lends (buffer: Buffer): boolean {
    return this.lent.has(buffer.buffer)
  }

  /** Gives back a buffer from take() once nothing reads it any more (for an answer: once it was written). */
  give (buffer: Buffer): void {
    const memory = buffer.buffer
    if (!this.lent.has(memory)) return
    this.lent.delete(memory)
    if (this.freeBytes + memory.byteLength > this.budget) return
    this.free.push(Buffer.from(memory, 0, memory.byteLength))
    this.freeBytes += memory.byteLength
  }

  /** Buffers waiting to be reused. */
  get kept (): number {
    return this.free.length
  }
}
