import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError, notSharedWhenHosted, storageUnavailable, toResponse } from '../errors.js'
import type { WorldReplica, WriteTurn } from '../domain/worlds/replica.js'
import { OPERATIONS } from '../versions/operations.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Hosted mode: the turn of a request that may write the default world, committed before it is answered. */
    writeTurn?: WriteTurn
  }
}

/** Methods that never write: they only wait for the replica to hold what was acknowledged before them. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Control calls that change what each instance keeps for itself (its fault rules, simulator,
 * examiner sessions, created worlds and tenants): hosted mode refuses them, as applied
 * on one instance they would hold there only.
 */
const KEPT_PER_INSTANCE: ReadonlyArray<readonly [method: string, route: string, what: string]> = [
  ['POST', '/_sandbox/faults', 'A fault rule'],
  ['POST', '/_sandbox/simulator', 'The activity simulator'],
  ['POST', '/_sandbox/sessions', 'An examiner session'],
  ['POST', '/_sandbox/worlds', 'A created world'],
  ['POST', '/_sandbox/tenants', 'A tenant']
]

/**
 * Hosted mode over PostgreSQL (src/domain/worlds/replica.ts): every request about the default
 * world first waits until this instance's replica holds every write acknowledged before it
 * arrived; one that may write takes the world's turn once its body is read and checked, and its
 * commit reaches PostgreSQL before its answer leaves (a failed commit answers 503 instead).
 * `commitBeforeAnswering` is registered before any other onSend hook (a fault may drop the answer
 * in one), `waitForReplica` after the request context (which chose the world).
 */
export function commitBeforeAnswering (app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const turn = request.writeTurn
    if (turn === undefined) return payload
    request.writeTurn = undefined
    try {
      await turn.commit()
      return payload
    } catch (e) {
      const answer = toResponse(e instanceof ApiError ? e : storageUnavailable((e as Error).message))
      reply.code(answer.status).headers(answer.headers).header('content-type', answer.contentType)
      return answer.body
    }
  })
  // a request that ended without an answer (its client left) still commits what it wrote
  const settle = async (request: FastifyRequest) => {
    const turn = request.writeTurn
    request.writeTurn = undefined
    await turn?.commit().catch(() => undefined)
  }
  app.addHook('onResponse', settle)
  app.addHook('onRequestAbort', settle)
}

export function waitForReplica (app: FastifyInstance, replica: WorldReplica): void {
  app.addHook('onRequest', async (request) => {
    if (request.world === replica.world) await replica.caughtUp()
  })
  // refused before the body is validated: the answer is the same whatever the body says
  app.addHook('preValidation', async (request) => {
    if (READS.has(request.method)) return
    const route = request.routeOptions.url
    const refused = KEPT_PER_INSTANCE.find(([method, url]) => method === request.method && (route === url || route === `/_sandbox/worlds/:worldId${url.slice('/_sandbox'.length)}`))
    if (refused !== undefined) throw notSharedWhenHosted(refused[2])
  })
  app.addHook('preHandler', async (request) => {
    if (request.world !== replica.world) return
    // a partner operation says whether it writes (a batch read is a POST); a control call writes unless it is a GET
    const operation = request.operation ?? null
    const writes = operation === null ? !READS.has(request.method) : OPERATIONS[operation].writes === true
    if (writes) request.writeTurn = await replica.beginWrite()
  })
}
