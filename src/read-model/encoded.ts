/**
 * An answer's JSON, already encoded: what a route returns for the send-bytes plugin to write
 * unchanged. Its bytes are one string or buffer, or (a large batch answer) chunks viewing memory
 * a cache keeps. Bytes that are lent (from a pool, or the cache's own memory) must be released
 * once nothing reads them any more (the response has been written, or its connection is gone);
 * releasing an answer that was not lent, or twice, does nothing.
 */
export class EncodedJson {
  private releaser: (() => void) | null
  /** The chunks, in order, when the answer is made of several. */
  readonly chunks: readonly Buffer[] | undefined
  private readonly whole: string | Buffer | undefined

  constructor (body: string | Buffer | readonly Buffer[], release: (() => void) | null = null) {
    if (typeof body === 'string' || Buffer.isBuffer(body)) this.whole = body
    else this.chunks = body
    this.releaser = release
  }

  /** The answer as one string or buffer (chunks are joined into a copy: the plugin writes them as they are). */
  get body (): string | Buffer {
    return this.whole ?? Buffer.concat(this.chunks!)
  }

  /** Bytes of a chunked answer. */
  get chunkBytes (): number {
    let bytes = 0
    for (const chunk of this.chunks ?? []) bytes += chunk.length
    return bytes
  }

  /** Whether the bytes are lent: whoever writes them must release them afterwards. */
  get lent (): boolean {
    return this.releaser !== null
  }

  release (): void {
    const releaser = this.releaser
    if (releaser === null) return
    this.releaser = null
    releaser()
  }
}
