import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/**
 * Gives back the memory of request bodies soon after their requests are answered.
 *
 * A body's bytes (the socket's chunks, their concatenation, an attachment's decompressed
 * content) live outside the JavaScript heap, and V8 collects them only once about 64 MiB more
 * has been allocated there since its last collection, whatever the heap holds. A few bodies at
 * the 6 and 8 MiB limits, a few gzip bombs or a thousand 64 KB bodies so kept up to 64 MiB of
 * dead buffers: a third of the 200 MB the sandbox aims to stay under. Those buffers die young,
 * and a minor collection (a scavenge, 0.3 to 10 ms) frees them.
 *
 * So the bytes of request bodies are counted (Content-Length, plus what handlers note, such as
 * decompressed attachments), and each BYTES_PER_COLLECTION of them is followed by a scavenge.
 * The cost follows the bytes: none for reads, one scavenge per 8 MiB of bodies otherwise.
 */

/** Body bytes received (or made from bodies) between two collections. */
export const BYTES_PER_COLLECTION = 8 * 1024 * 1024

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

type Collect = () => void

/**
 * A collection (minor unless asked), or undefined when the runtime refuses to expose one. The
 * flag only makes `gc` visible in contexts created after it is set: the process's own global
 * stays unchanged.
 */
export function exposedCollection (type: 'minor' | 'major' = 'minor'): Collect | undefined {
  try {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as unknown
    if (typeof gc !== 'function') return undefined
    return () => (gc as (options: { type: string, execution: string }) => void)({ type, execution: 'sync' })
  } catch {
    return undefined
  }
}

/** Bytes handlers made from a request's body (noteBodyBytes), by request. */
const madeFromBodies = new WeakMap<FastifyRequest, number>()

/** A handler made `bytes` of buffers from the request's body (a decompressed attachment). */
export function noteBodyBytes (request: FastifyRequest, bytes: number): void {
  madeFromBodies.set(request, (madeFromBodies.get(request) ?? 0) + bytes)
}

/**
 * Counts body bytes and runs `collect` once BYTES_PER_COLLECTION have been counted. The
 * collection waits for the loop's check phase (setImmediate), after the answers of this turn
 * are written: a timer would let the next turn read new bodies first, and the scavenge would
 * then move them, still alive, towards the old generation, where they wait for a full collection.
 */
export class BodyBytesCollector {
  private counted = 0
  private pending: NodeJS.Immediate | undefined

  constructor (private readonly collect: Collect, private readonly bytesPerCollection = BYTES_PER_COLLECTION) {}

  count (bytes: number): void {
    this.counted += bytes
    if (this.counted < this.bytesPerCollection || this.pending !== undefined) return
    this.pending = setImmediate(this.run)
    // A collection never keeps the process alive.
    this.pending.unref()
  }

  private readonly run = () => {
    this.pending = undefined
    this.counted = 0
    this.collect()
  }

  stop (): void {
    clearImmediate(this.pending)
    this.pending = undefined
  }
}

/**
 * The body bytes a request brought: its Content-Length (none when that alone was refused with a
 * 413, before any byte was read); a chunked body counts as the route's limit.
 */
function bodyBytes (request: FastifyRequest, reply: FastifyReply): number {
  const length = request.headers['content-length']
  if (length !== undefined) return reply.statusCode === 413 ? 0 : Number(length) || 0
  return request.headers['transfer-encoding'] === undefined ? 0 : (request.routeOptions.bodyLimit ?? 0)
}

/**
 * Counts the bodies of every route registered after this call (in any scope) that takes a body.
 * Without a collection from the runtime, nothing is added.
 */
export function releaseBodyBuffers (app: FastifyInstance): void {
  const collect = exposedCollection()
  if (collect === undefined) return
  const collector = new BodyBytesCollector(collect)
  const countBody = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    collector.count(bodyBytes(request, reply) + (madeFromBodies.get(request) ?? 0))
    done()
  }
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (!methods.some((m) => BODY_METHODS.has(m))) return
    const own = route.onResponse
    route.onResponse = own === undefined ? [countBody] : [...(Array.isArray(own) ? own : [own]), countBody]
  })
  app.addHook('onClose', async () => collector.stop())
}
