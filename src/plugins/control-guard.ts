import type { FastifyReply, FastifyRequest } from 'fastify'
import { isIP } from 'node:net'
import type { Config } from '../config.js'
import { controlNeedsJson, crossSiteRequest, misdirectedHost } from '../errors.js'
import { CONSOLE_HEADER } from './console-cookie.js'
import { pathOf } from '../domain/glob.js'

/**
 * Keeps web pages away from the control plane (every URL under /_sandbox, whatever the routes
 * registered there): a page of another site must not reset the sandbox, and a page that rebinds
 * its own DNS name to this machine must not read the state document, which holds every Client
 * Secret. Programs (tests, SDKs, curl) send no browser headers and pass untouched.
 *
 * 1. Host: a loopback name, an IP address, the configured HOST, or a name in
 *    SANDBOX_ALLOWED_HOSTS; anything else is 421. A rebinding page reaches the sandbox under its
 *    own DNS name; an IP address cannot be rebound, and `localhost` never reaches DNS.
 * 2. Origin: a request a browser marks as coming from another origin (`Sec-Fetch-Site`, `Origin`)
 *    is 403, but for a plain link followed to a page (a top-level GET navigation).
 * 3. A state-changing request that looks like a browser's yet proves no origin (an old browser)
 *    needs a JSON content type or the console's header, which no other page can send unasked.
 *
 * Every control answer also forbids framing by other origins (the console must not be
 * clickjacked). The vendor API is left alone: partners reach it under any name they configure,
 * and it answers only to Basic credentials.
 */

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

const isControlPath = (path: string | undefined) => path !== undefined && (path === '/_sandbox' || path.startsWith('/_sandbox/'))

/** The host name of a Host header: lower-case, without port, brackets or a trailing dot. */
export function hostNameOf (header: string): string {
  let name = header.trim().toLowerCase()
  if (name.startsWith('[')) {
    const end = name.indexOf(']')
    name = end === -1 ? name.slice(1) : name.slice(1, end)
  } else {
    name = name.replace(/:\d*$/, '')
  }
  return name.length > 1 && name.endsWith('.') ? name.slice(0, -1) : name
}

/** Whether the control plane answers under this host name. */
export function hostAllowed (name: string, config: Pick<Config, 'host' | 'allowedHosts'>): boolean {
  if (isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return true
  if (name === hostNameOf(config.host)) return true
  return config.allowedHosts.some((allowed) =>
    allowed === '*' || allowed === name || (allowed.startsWith('.') && (name === allowed.slice(1) || name.endsWith(allowed))))
}

/** The request's own origin is the Origin it carries: same scheme-less host and port. */
function sameOrigin (origin: string, host: string | undefined): boolean {
  if (host === undefined) return false
  try {
    const from = new URL(origin)
    return (from.protocol === 'http:' || from.protocol === 'https:') && from.host === new URL(`${from.protocol}//${host}`).host
  } catch {
    return false
  }
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** A link followed to a page: the browser shows the answer to its user, never to the page that linked. */
const isNavigation = (request: FastifyRequest) =>
  (request.method === 'GET' || request.method === 'HEAD') &&
  header(request, 'sec-fetch-mode') === 'navigate' && header(request, 'sec-fetch-dest') === 'document'

/** Marks only browsers send, and which a page cannot take away from its requests. */
const looksLikeBrowser = (request: FastifyRequest) =>
  /^Mozilla\//.test(header(request, 'user-agent') ?? '') || header(request, 'referer') !== undefined

const isJson = (type: string | undefined) => type !== undefined && /^\s*application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)

/** Why this control request is refused, or undefined. */
function refusal (request: FastifyRequest, config: Pick<Config, 'host' | 'allowedHosts'>): Error | undefined {
  const host = header(request, 'host')
  if (host !== undefined && host !== '' && !hostAllowed(hostNameOf(host), config)) return misdirectedHost(hostNameOf(host))
  const site = header(request, 'sec-fetch-site')
  const origin = header(request, 'origin')
  const crossSite = site !== undefined && site !== 'same-origin' && site !== 'none'
  const foreignOrigin = origin !== undefined && !sameOrigin(origin, host)
  if ((crossSite || foreignOrigin) && !isNavigation(request)) {
    return crossSiteRequest(origin !== undefined ? `the page origin '${origin.slice(0, 200)}'` : `another site (Sec-Fetch-Site: ${site})`)
  }
  if (!SAFE_METHODS.has(request.method) && site === undefined && origin === undefined && looksLikeBrowser(request) &&
    !isJson(header(request, 'content-type')) && request.headers[CONSOLE_HEADER] === undefined) {
    return controlNeedsJson()
  }
  return undefined
}

/**
 * The guard of a request that is not a partner's (the request context hook asks it, first thing,
 * so it holds for every route under /_sandbox, registered now or later): why it is refused, or
 * undefined; a control answer forbids framing by other origins.
 */
export function guardControlRequest (request: FastifyRequest, reply: FastifyReply, config: Pick<Config, 'host' | 'allowedHosts'>): Error | undefined {
  const route = request.routeOptions.url
  if (!isControlPath(route) && !isControlPath(pathOf(request.url))) return undefined
  reply.header('content-security-policy', "frame-ancestors 'self'").header('x-frame-options', 'SAMEORIGIN')
  // Container and load-balancer health checks ask under any name; health tells nothing.
  if (route !== undefined && route.endsWith('/health') && (request.method === 'GET' || request.method === 'HEAD')) return undefined
  return refusal(request, config)
}
