import type { FastifyReply, FastifyRequest } from 'fastify'
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * How the web console's own requests are told apart from a partner's: by a secret of this process
 * that the sandbox gives the console's page as an HttpOnly, SameSite=Strict cookie, which the
 * browser sends with the page's own requests and which no script, and no page of another site,
 * can read or send. It is given only to whoever administers the sandbox (on a sandbox with a
 * control token, with the answer to a call that token authorizes), so a partner holding a tenant's
 * or a world's token cannot hide its requests with it. No header does: a request that merely
 * carries the console's header is recorded like any partner's (journal, fault rules, sessions).
 */

const SECRET = randomBytes(32).toString('base64url')
const SECRET_DIGEST = createHash('sha256').update(SECRET).digest()
/** Named per process: two sandboxes on one host (cookies ignore the port) each keep their own. */
const NAME = `agency-sandbox-console-${randomBytes(4).toString('hex')}`

/** The header the console puts on its own calls (public/console/api.js): it asks for the cookie, and proves nothing. */
export const CONSOLE_HEADER = 'x-sandbox-console'

/** The cookie's value in a Cookie header, or undefined. */
function cookieValue (header: string): string | undefined {
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).trim() === NAME) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** The last Cookie header checked and its answer: the console sends the same one on every call. */
let last: { header: string, valid: boolean } | undefined

/** True when the request carries this process's console cookie (compared in constant time). */
export function isConsoleRequest (request: FastifyRequest): boolean {
  const header = request.headers.cookie
  if (header === undefined) return false
  if (last?.header === header) return last.valid
  const value = cookieValue(header)
  const valid = value !== undefined && timingSafeEqual(createHash('sha256').update(value).digest(), SECRET_DIGEST)
  last = { header, valid }
  return valid
}

/** The console's page, or a call of its own (it sends its header), that does not hold the cookie yet. */
export const wantsConsoleCookie = (request: FastifyRequest, isConsolePage: boolean): boolean =>
  (isConsolePage || request.headers[CONSOLE_HEADER] !== undefined) && !isConsoleRequest(request)

/** Gives the console its cookie: for this site's own requests only, unreadable by scripts, for the browser's session. */
export function grantConsoleCookie (reply: FastifyReply): void {
  reply.header('set-cookie', `${NAME}=${SECRET}; Path=/; HttpOnly; SameSite=Strict`)
}
