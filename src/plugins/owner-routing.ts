import replyFrom from '@fastify/reply-from'
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify'
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import type { HostedWorlds } from '../domain/worlds/hosted-worlds.js'
import type { OwnedWorld, WriteTurn } from '../domain/worlds/owned-world.js'
import type { Ownership, Route } from '../domain/worlds/ownership.js'
import { DEFAULT_WORLD_ID } from '../domain/worlds/world-ids.js'
import { ApiError, OutcomeUnknownAnswer, storageUnreachable, toResponse, worldDeleted, worldUnavailable, type RetryAdvice } from '../errors.js'
import { isWorldDeletion, mayWrite, worldOfRequest, worldRouteUrls } from './world-of-request.js'
import { hasBody } from '../http/has-body.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Hosted mode: the world this instance owns that the request is about (undefined: a request of the process, or forwarded). */
    owned: OwnedWorld | undefined
    /** Hosted mode: the turn of a request that may write its world, its append awaited before it is answered. */
    writeTurn: WriteTurn | undefined
  }
}

/** Who forwarded a request (and its answer): the owner it reaches answers it, or 503, and never forwards it again. */
export const FORWARDED_BY = 'x-sandbox-forwarded-by'
/** Which instance answered (the owner, forwarded or not). */
export const ANSWERED_BY = 'x-sandbox-instance'

/**
 * A forwarded request's answer is awaited this long: the owner bounds its own work well within it
 * (a large reset or state document takes seconds); an owner that stops answering without
 * stopping (frozen) has lost its lease by then, and the next request takes the world over.
 */
const FORWARD_TIMEOUT_MS = 30_000

// The hooks here are callback hooks: a request to a world held here goes on at once, without the
// promises an async hook costs on every request.

/** Goes on with `value` at once, or once it resolves when it is a promise (its failure to `fail`). */
function whenReady<T> (value: T | Promise<T>, next: (ready: T) => void, fail: (e: Error) => void): void {
  if (value instanceof Promise) value.then(next, fail)
  else next(value)
}

/**
 * A request body handed to the owner as it is read: nothing is taken from the client's request
 * until the connection to the owner asks for it, so when that connection is refused the body is
 * still there for this instance to read (it takes the world over).
 */
class BodyOnDemand extends Readable {
  started = false

  constructor (private readonly raw: IncomingMessage) {
    super()
  }

  override _read (): void {
    if (this.started) {
      this.raw.resume()
      return
    }
    this.started = true
    this.raw.on('data', (chunk: Buffer) => { if (!this.push(chunk)) this.raw.pause() })
    this.raw.on('end', () => this.push(null))
    this.raw.on('error', (e) => this.destroy(e))
  }

  // the client's request is left as it is: its connection answers the client
  override _destroy (error: Error | null, callback: (error?: Error | null) => void): void {
    callback(error)
  }
}

const CONNECT_FAILED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT'])
const codeOf = (e: unknown): string | undefined => {
  const { code, cause } = (e ?? {}) as { code?: string, cause?: unknown }
  return CONNECT_FAILED.has(code ?? '') ? code : cause === undefined ? code : codeOf(cause)
}

/** Answers the request now with `error` (the request reached no world: no journal records it). */
function answer (request: FastifyRequest, reply: FastifyReply, error: ApiError): void {
  request.journaled = true
  const { status, headers, contentType, body } = toResponse(error)
  void reply.code(status).headers(headers).header('content-type', contentType).send(body)
}

/** A request forwarded here, or sent again, is not forwarded on: it is served here or refused. */
const mayNotForward = (request: FastifyRequest, retried: boolean): boolean => retried || request.headers[FORWARDED_BY] !== undefined

/**
 * Hosted mode (ownership.ts): the first hook of every request finds the world it is about
 * (world-of-request.ts) and answers it here when this instance owns the world (claiming it when
 * nobody does), else forwards it to the owner, body streamed, and sends the owner's answer back.
 * At the owner, a request that may write takes the world's turn before its handler, and every
 * answer about the world waits until what it may have seen is in the world's log (owned-world.ts).
 * A control call showing a token first makes the catalogue current, so a token deleted elsewhere
 * opens nothing. Registered before the request context and before any other onSend hook.
 */
export async function routeToOwners (app: FastifyInstance, hosted: HostedWorlds, ownership: Ownership, instance: string): Promise<void> {
  await app.register(replyFrom, { disableRequestLogging: true, undici: { connections: 64, keepAliveTimeout: 60_000 } })
  app.decorateRequest('owned', undefined)
  app.decorateRequest('writeTurn', undefined)

  /** Serves the request here, once the catalogue is current for a token it shows. */
  const serveHere = (request: FastifyRequest, done: (e?: Error) => void) => {
    const bearer = request.url.startsWith('/_sandbox') && request.headers.authorization?.startsWith('Bearer ') === true
    if (!bearer) return done()
    hosted.fresh().then(() => done(), done)
  }

  const follow = (request: FastifyRequest, reply: FastifyReply, done: (e?: Error) => void, worldId: string, route: Route, retried: boolean): void => {
    if ('here' in route) {
      request.owned = route.here
      reply.header(ANSWERED_BY, instance)
      return serveHere(request, done)
    }
    // deleted meanwhile: a partner request goes to the default world (its credentials answer 401 there), a control call finds no world
    if ('gone' in route) return request.url.startsWith('/vendor/') ? toDefault(request, reply, done, worldId, retried) : done()
    if ('refused' in route) return answer(request, reply, route.refused)
    forward(request, reply, done, worldId, route.forward, retried)
  }

  /**
   * A partner request whose world is gone: to the default world, as in one process. One forwarded
   * here (or sent again) cannot go on to the default world's owner elsewhere: it reached the world
   * while it was deleted (or expired), and answers as such a request does, 401.
   */
  const toDefault = (request: FastifyRequest, reply: FastifyReply, done: (e?: Error) => void, worldId: string, retried: boolean): void => {
    const passedOn = mayNotForward(request, retried)
    whenReady(ownership.route(DEFAULT_WORLD_ID, passedOn), (route) => {
      if ('refused' in route && passedOn) answer(request, reply, worldDeleted(worldId, true))
      else follow(request, reply, done, DEFAULT_WORLD_ID, route, retried)
    }, done)
  }

  const routeTo = (request: FastifyRequest, reply: FastifyReply, done: (e?: Error) => void, worldId: string, retried: boolean): void => {
    whenReady(ownership.route(worldId, mayNotForward(request, retried)), (route) => follow(request, reply, done, worldId, route, retried), done)
  }

  const forward = (request: FastifyRequest, reply: FastifyReply, done: (e?: Error) => void, worldId: string, address: string, retried: boolean): void => {
    const body = hasBody(request.headers) ? new BodyOnDemand(request.raw) : undefined
    if (body !== undefined) request.body = body
    // the owner records it in the world's journal
    request.journaled = true
    reply.from(`${address}${request.url}`, {
      timeout: FORWARD_TIMEOUT_MS,
      // the owner's answer is the answer: a 503 is not sent again behind the client's back (a fault rule counts each request)
      retryDelay: () => null,
      // the request's id goes with it (the owner logs, journals and echoes the same one)
      rewriteRequestHeaders: (_request, headers) => ({ ...headers, 'x-request-id': request.id, [FORWARDED_BY]: instance }),
      // the answer says it came through this instance (routing by world sends few requests this way)
      rewriteHeaders: (headers) => ({ ...headers, [FORWARDED_BY]: instance }),
      onError: (_reply, { error }) => {
        const nothingSent = codeOf(error) !== undefined && body?.started !== true
        const writes = mayWrite(request.method, request.routeOptions.config.operation)
        if (!nothingSent && writes) return answer(request, reply, new OutcomeUnknownAnswer(`the world's owner did not answer (${error.message})`, adviceFor(request)))
        if (retried || (!nothingSent && body !== undefined)) return answer(request, reply, worldUnavailable(worldId, `its owner did not answer: ${error.message}`))
        // nothing reached the owner (or a read, sent again once): taken over here when its lease has run out
        request.body = undefined
        request.journaled = false
        ownership.ownerUnreachable(worldId).then((route) => follow(request, reply, done, worldId, route, true), done)
      }
    })
  }

  // the world routes, known once every route is registered
  const urls: string[] = []
  let worldRoutes: ReadonlySet<string> = new Set()
  app.addHook('onReady', (done) => {
    worldRoutes = worldRouteUrls(urls)
    done()
  })

  app.addHook('onRequest', (request, reply, done) => {
    const worldId = worldOfRequest(request, worldRoutes)
    if (worldId === undefined) {
      if (!isWorldDeletion(request) || request.headers[FORWARDED_BY] !== undefined) return serveHere(request, done)
      const { worldId: deleted } = request.params as { worldId: string }
      void ownership.ownerElsewhere(deleted).then((address) => {
        if (address === undefined) serveHere(request, done)
        else forward(request, reply, done, deleted, address, true)
      }, (e: unknown) => answer(request, reply, storageUnreachable(e)))
      return
    }
    whenReady(hosted.known(worldId), (known) => {
      // a Client Id of a world that does not exist goes to the default world, as it does in one process
      if (known) routeTo(request, reply, done, worldId, false)
      else if (request.url.startsWith('/vendor/')) toDefault(request, reply, done, worldId, false)
      else serveHere(request, done)
    }, done)
  })

  /** Takes the world's turn for a request that may write (a route of reads and writes decides by the method). */
  const takeTurn: preHandlerHookHandler = (request, reply, done) => {
    const { owned } = request
    if (owned === undefined || !mayWrite(request.method, request.routeOptions.config.operation)) return done()
    whenReady(owned.beginTurn(), (turn) => {
      request.writeTurn = turn
      done()
    }, done)
  }
  // on every route that may write a world (the request tells at once whether it is about a world held here)
  app.addHook('onRoute', (route) => {
    urls.push(route.url)
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const writes = route.url.startsWith('/vendor/') || route.url.startsWith('/_sandbox/')
      ? methods.some((method) => mayWrite(method, route.config?.operation))
      : false
    if (writes) route.preHandler = [...hooksOf(route.preHandler), takeTurn]
  })

  // the answer leaves once what it may have seen (or written) is in the log; else it is a 503
  app.addHook('onSend', (request, reply, payload, done) => {
    const { owned, writeTurn } = request
    if (owned === undefined) return done(null, payload)
    request.writeTurn = undefined
    const waiting = writeTurn !== undefined ? writeTurn.finish() : owned.settled()
    if (waiting === undefined) return done(null, payload)
    waiting.then(() => done(null, payload), (e: unknown) => {
      if (payload instanceof Readable) payload.destroy()
      const { status, headers, contentType, body } = toResponse(storageUnreachable(e instanceof ApiError ? e : new OutcomeUnknownAnswer(String(e), 'check-first'), adviceFor(request)))
      reply.code(status).headers(headers).header('content-type', contentType)
      done(null, body)
    })
  })

  // a request that ended without an answer (its client left) still queues what it wrote, and passes the turn on
  const settle = (request: FastifyRequest, done: () => void) => {
    const turn = request.writeTurn
    request.writeTurn = undefined
    turn?.finish().catch(() => undefined)
    done()
  }
  app.addHook('onResponse', (request, reply, done) => settle(request, done))
  app.addHook('onRequestAbort', settle)
}

/** What a caller should do before sending again a write whose outcome is unknown: a partner's write has a RefId, but for create client. */
function adviceFor (request: FastifyRequest): RetryAdvice {
  const operation = request.routeOptions.config.operation
  return operation === undefined ? 'check-first' : operation === 'createClient' ? 'look-for-client' : 'same-ref-id'
}

const hooksOf = <T>(hooks: T | T[] | undefined): T[] => hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]
