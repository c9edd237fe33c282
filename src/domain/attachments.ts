import { webcrypto } from 'node:crypto'
import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { badRequest, tooManyRequests, unsupportedMediaType } from '../errors.js'
import { FairPlaces } from './fair-places.js'

/**
 * The attachment's body: one gzip stream of at most 5 MiB once decompressed. Its headers are
 * read into the domain's command by src/versions/attachment-headers.ts.
 */

/** Largest decompressed attachment: 5 MiB. */
export const MAX_ATTACHMENT = 5 * 1024 * 1024
/** Largest compressed attachment body accepted on the wire. */
export const MAX_ATTACHMENT_BODY = 6 * 1024 * 1024

/**
 * Attachments decompressed, digested and written at once in the process, one per world at a time
 * while others wait (fair-places.ts): each holds up to three copies of 5 MiB meanwhile (the
 * content, the digest's copy, SQLite's pages).
 */
export const ATTACHMENTS_AT_ONCE = 2
const places = new FairPlaces(ATTACHMENTS_AT_ONCE, { maxWaiting: 256, maxWaitingPerKey: 64 })

/** A place to decompress and write an attachment of `worldId`, given back by the function it resolves to; a 429 when too many wait. */
export async function attachmentPlace (worldId: string): Promise<() => void> {
  const place = places.take(worldId)
  if (place === undefined) throw tooManyRequests(`${places.waiting} attachments are waiting to be written; send this one again in a moment`, 1)
  return await place
}

const inflate = promisify(gunzip)
/** Pieces of decompressed content when the body does not say its size: zlib's 16 KiB would take 320 trips between the pool and the event loop for 5 MiB. */
const INFLATE_CHUNK = 1024 * 1024

/**
 * The gzip body of an attachment, decompressed without ever holding more than the limit, in
 * libuv's thread pool (5 ms for 5 MiB on the event loop, where other worlds' requests wait), into
 * one buffer of the size the body declares (a copy less).
 */
export async function gunzipAttachment (body: unknown): Promise<Buffer> {
  if (!Buffer.isBuffer(body) || body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b) {
    throw unsupportedMediaType('The body must be the file compressed with gzip (it must start with the gzip magic bytes 1f 8b); no other compression is supported')
  }
  try {
    const declared = declaredSize(body)
    const chunkSize = declared === undefined ? INFLATE_CHUNK : Math.max(64 * 1024, declared + 1)
    return await inflate(body, { maxOutputLength: MAX_ATTACHMENT, chunkSize })
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      // the live service's sentence and status (400, not 413)
      throw badRequest('File exceeds max size of 5 MB.', [{ field: '(body)', message: `must be at most ${MAX_ATTACHMENT} bytes (5 MiB) once decompressed` }])
    }
    throw badRequest(`The body is not a complete gzip stream: ${(e as Error).message}`, [{ field: '(body)', message: 'must be a valid gzip stream' }])
  }
}

/** The content's SHA-256 (hex), computed in libuv's thread pool (12 ms for 5 MiB on the event loop). */
export async function contentSha256 (content: Buffer): Promise<string> {
  return Buffer.from(await webcrypto.subtle.digest('SHA-256', content)).toString('hex')
}

/**
 * The size a gzip body says its content has (its trailer's ISIZE: the size modulo 2^32), or
 * undefined when it says more than an attachment may hold or is too short to say: an estimate to
 * refuse a body before it is decompressed, never trusted beyond that (the content's own length is
 * checked again once it is).
 */
export function declaredSize (body: unknown): number | undefined {
  if (!Buffer.isBuffer(body) || body.length < 18) return undefined
  const size = body.readUInt32LE(body.length - 4)
  return size <= MAX_ATTACHMENT ? size : undefined
}
