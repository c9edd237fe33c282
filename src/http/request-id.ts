import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** An `x-request-id` kept as sent: at most 128 characters, letters, digits and `._:~+/=@-` (a UUID, a trace id, base64). */
const USABLE = /^[\w.:~+/=@-]{1,128}$/

/**
 * A request's id (Fastify's genReqId): the `x-request-id` it was sent with, when usable (a proxy
 * or the partner named it), else a new random UUID, unique across instances. The answer echoes
 * it (src/plugins/operations.ts), the log binds it (reqId) and the journal keeps it.
 */
export function requestIdOf (request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && USABLE.test(sent) ? sent : randomUUID()
}
