import type { IncomingHttpHeaders } from 'node:http'

/** Whether a body comes with a request: a length announced above 0, or one sent in chunks. */
export const hasBody = (headers: IncomingHttpHeaders): boolean =>
  (headers['content-length'] !== undefined && headers['content-length'] !== '0') || headers['transfer-encoding'] !== undefined
