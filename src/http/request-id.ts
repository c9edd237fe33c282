import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** An `x-request-id` kept as sent: at most 128 characters, letters, digits and `._:~+/=@-` (a UUID, a trace id, base64). */
const USABLE = /^[\w.:~+/=@-]{1,128}$/

/**
 * What the ids this process makes begin with: 72 random bits (12 base64url characters), drawn
 * once, so that no two instances make the same id; each request's id adds a count in base 36.
 * Cheaper than a random UUID per request (crypto.randomUUID costs several times a counter).
 */
const PROCESS_PREFIX = randomBytes(9).toString('base64url')
let made = 0

/**
 * A request's id (Fastify's genReqId): the `x-request-id` it was sent with, when usable (a proxy
 * or the partner named it), else a new one, unique across instances (`<process>-<count>`). The
 * answer echoes it (src/plugins/operations.ts), the log binds it (reqId) and the journal keeps it.
 */
export function requestIdOf (request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && USABLE.test(sent) ? sent : `${PROCESS_PREFIX}-${(++made).toString(36)}`
}
