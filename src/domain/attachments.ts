import { gunzipSync } from 'node:zlib'
import { badRequest, unsupportedMediaType } from '../errors.js'

/**
 * The attachment's body: one gzip stream of at most 5 MiB once decompressed. Its headers are
 * read into the domain's command by src/versions/attachment-headers.ts.
 */

/** Largest decompressed attachment: 5 MiB. */
export const MAX_ATTACHMENT = 5 * 1024 * 1024
/** Largest compressed attachment body accepted on the wire. */
export const MAX_ATTACHMENT_BODY = 6 * 1024 * 1024

/** The gzip body of an attachment, decompressed without ever holding more than the limit. */
export function gunzipAttachment (body: unknown): Buffer {
  if (!Buffer.isBuffer(body) || body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b) {
    throw unsupportedMediaType('The body must be the file compressed with gzip (it must start with the gzip magic bytes 1f 8b); no other compression is supported')
  }
  try {
    return gunzipSync(body, { maxOutputLength: MAX_ATTACHMENT })
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      // the live service's sentence and status (400, not 413)
      throw badRequest('File exceeds max size of 5 MB.', [{ field: '(body)', message: `must be at most ${MAX_ATTACHMENT} bytes (5 MiB) once decompressed` }])
    }
    throw badRequest(`The body is not a complete gzip stream: ${(e as Error).message}`, [{ field: '(body)', message: 'must be a valid gzip stream' }])
  }
}
