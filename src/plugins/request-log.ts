import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { DEFAULT_WORLD_ID } from '../domain/worlds/world-ids.js'
import { isConsoleRequest } from './console-cookie.js'
import { tenantOf } from './operations.js'

/** Calls the web console makes for itself (with its cookie), and its own files. */
const isConsoleCall = (request: FastifyRequest) => request.url.startsWith('/_sandbox/ui') || isConsoleRequest(request)

type LevelLog = FastifyRequest['log'] & { isLevelEnabled?: (level: string) => boolean }
type Completion = (request: FastifyRequest, reply: FastifyReply) => void

/** Runs a completion step; what it throws is given back, to be logged as the request's error (as Fastify logs a hook's), and the next step still runs. */
function runStep (step: Completion | undefined, request: FastifyRequest, reply: FastifyReply): Error | undefined {
  try {
    step?.(request, reply)
  } catch (e) {
    return e as Error
  }
  return undefined
}

/**
 * Fastify's request logging, one line per request: at info the method, path, status,
 * milliseconds, integration, agency, world and tenant (and, bound by Fastify, the request id:
 * reqId) (instead of Fastify's two multi-line entries); at debug
 * the query and headers too. The console's own polling is logged at debug only, so an idle
 * console does not fill the log. Credentials never appear: only the Client Id that
 * authenticated.
 */
export class OneLineRequestLog extends LogController {
  /**
   * What is done as each request completes, before its line is logged: first its journal and
   * examiner records (observe.ts), then its count and its end for the drain (operations.ts).
   * Fastify calls requestCompleted at every answer sent (the app always has a logger, silent
   * included: src/logger.ts), so these need no onResponse hooks of their own (which cost a read
   * a few percent more).
   */
  journal: Completion | undefined
  operations: Completion | undefined

  override incomingRequest (): void {}

  override requestCompleted (failure: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const journalError = runStep(this.journal, request, reply)
    const operationsError = runStep(this.operations, request, reply)
    const error = failure ?? journalError ?? operationsError
    const failed = error !== null && error !== undefined
    const log = request.log as LevelLog
    // above info (LOG_LEVEL=warn) only errors are logged: nothing else is looked at
    if (!failed && log.isLevelEnabled?.('info') === false) return
    const level = failed ? 'error' : isConsoleCall(request) ? 'debug' : 'info'
    if (log.isLevelEnabled !== undefined && !log.isLevelEnabled(level)) return
    const q = request.url.indexOf('?')
    const path = q === -1 ? request.url : request.url.slice(0, q)
    const ms = Math.round(reply.elapsedTime * 100) / 100
    const integration = (request as FastifyRequest & { integrationId?: string }).integrationId || undefined
    const param = (request.params as { agencyId?: string } | undefined)?.agencyId
    const agency = param !== undefined && /^\d{1,10}$/.test(param) ? param : undefined
    const world = request.world?.id
    const tenant = tenantOf(request)
    const line = {
      method: request.method,
      path,
      status: reply.statusCode,
      ms,
      integration,
      agency: agency === undefined ? undefined : Number(agency),
      world,
      tenant: tenant === '' ? undefined : tenant,
      ...(failed ? { err: error } : {})
    }
    const where = world === undefined || world === DEFAULT_WORLD_ID ? '' : ` in ${world}${tenant === '' ? '' : ` of ${tenant}`}`
    log[level](line, `${request.method} ${path} ${reply.statusCode} ${ms} ms${integration === undefined ? '' : ` (${integration})`}${where}`)
    if (level === 'info' && log.isLevelEnabled?.('debug') === true) {
      const { authorization: _secret, 'proxy-authorization': _proxySecret, cookie: _cookie, ...headers } = request.headers
      log.debug({ query: q === -1 ? '' : request.url.slice(q + 1), headers }, 'request detail')
    }
  }
}
