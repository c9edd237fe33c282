import { createHmac } from 'node:crypto'

/**
 * A keyed hash for anonymising: the same value and key give the same output, and without the
 * key the output tells nothing usable about the value. HalfSipHash-2-4 (a keyed PRF on 32-bit
 * words, written from its description) over the UTF-16 code units of the text, so that an
 * import of 100,000 clients hashes its millions of values in JavaScript without a native call
 * per value (an HMAC per value would take longer than the rest of the import). The 64-bit key
 * is derived once from the seed with HMAC-SHA256.
 */

const rotl = (x: number, b: number) => ((x << b) | (x >>> (32 - b))) >>> 0

export class KeyedHash {
  private readonly k0: number
  private readonly k1: number
  private v0 = 0
  private v1 = 0
  private v2 = 0
  private v3 = 0

  constructor (seed: string, purpose = 'agency-sandbox anonymize') {
    const key = createHmac('sha256', seed).update(purpose).digest()
    this.k0 = key.readUInt32LE(0)
    this.k1 = key.readUInt32LE(4)
  }

  private round (): void {
    this.v0 = (this.v0 + this.v1) >>> 0; this.v1 = rotl(this.v1, 5); this.v1 = (this.v1 ^ this.v0) >>> 0; this.v0 = rotl(this.v0, 16)
    this.v2 = (this.v2 + this.v3) >>> 0; this.v3 = rotl(this.v3, 8); this.v3 = (this.v3 ^ this.v2) >>> 0
    this.v0 = (this.v0 + this.v3) >>> 0; this.v3 = rotl(this.v3, 7); this.v3 = (this.v3 ^ this.v0) >>> 0
    this.v2 = (this.v2 + this.v1) >>> 0; this.v1 = rotl(this.v1, 13); this.v1 = (this.v1 ^ this.v2) >>> 0; this.v2 = rotl(this.v2, 16)
  }

  private word (m: number): void {
    this.v3 = (this.v3 ^ m) >>> 0
    this.round(); this.round()
    this.v0 = (this.v0 ^ m) >>> 0
  }

  /** 64 bits of the keyed hash of `text`, as two unsigned 32-bit numbers [high, low]. */
  hash64 (text: string): [number, number] {
    this.v0 = this.k0
    this.v1 = this.k1
    this.v2 = (0x6c796765 ^ this.k0) >>> 0
    this.v3 = (0x74656462 ^ this.k1) >>> 0
    this.v1 = (this.v1 ^ 0xee) >>> 0
    const n = text.length
    let i = 0
    for (; i + 1 < n; i += 2) this.word((text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16)) >>> 0)
    // the last word carries the length, so that "a" and "a\0" differ
    this.word(((i < n ? text.charCodeAt(i) : 0) | ((n & 0xffff) << 16)) >>> 0)
    this.v2 = (this.v2 ^ 0xee) >>> 0
    this.round(); this.round(); this.round(); this.round()
    const high = (this.v1 ^ this.v3) >>> 0
    this.v1 = (this.v1 ^ 0xdd) >>> 0
    this.round(); this.round(); this.round(); this.round()
    return [high, (this.v1 ^ this.v3) >>> 0]
  }

  /** A number in [0, 1) from the keyed hash of `text` (53 bits). */
  unit (text: string): number {
    const [high, low] = this.hash64(text)
    return (high * 2 ** 21 + (low >>> 11)) / 2 ** 53
  }

  /** An integer in [0, n). */
  int (text: string, n: number): number {
    return Math.floor(this.unit(text) * n)
  }
}
