import type { BufferPool } from './buffer-pool.js'

/**
 * An answer's JSON, already encoded: what a route returns for the send-bytes plugin to write
 * unchanged. Its bytes may be lent from a pool; then `release()` gives them back, once nothing
 * reads them any more (the response has been written, or its connection is gone). Releasing an
 * answer that was not lent, or twice, does nothing.
 */
export class EncodedJson {
  private lender: BufferPool | null

  constructor (
    readonly body: string | Buffer,
    lender: BufferPool | null = null
  ) {
    this.lender = lender
  }

  /** Whether the bytes are lent: whoever writes them must release them afterwards. */
  get lent (): boolean {
    return this.lender !== null
  }

  release (): void {
    const lender = this.lender
    if (lender === null) return
    this.lender = null
    lender.give(this.body as Buffer)
  }
}
