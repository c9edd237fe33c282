import type { ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { EncodedJson } from '../read-model/index.js'

/** The bytes of an encoded answer, as the reply's serializer: sent unchanged, never serialized. */
const encodedBody = (answer: EncodedJson) => answer.body

/**
 * A chunked answer as the reply's serializer: a stream Fastify pipes to the response, whose pipe
 * writes every chunk to the corked response and ends it, so the headers and all the chunks leave
 * in one write. Piping chunk by chunk wrote each on its own, with a stream's events around each.
 */
class ChunkedAnswer extends Readable {
  constructor (private readonly chunks: readonly Buffer[]) {
    super()
  }

  override _read (): void {}

  override pipe<T extends NodeJS.WritableStream> (destination: T): T {
    const response = destination as unknown as ServerResponse
    response.cork()
    for (const chunk of this.chunks) response.write(chunk)
    response.end()
    // the stream ends as one with nothing left to read, so Fastify sees it finish, not fail
    this.push(null)
    this.resume()
    return destination
  }
}

const chunkedBody = (answer: EncodedJson): Readable => new ChunkedAnswer(answer.chunks!)

/** Answers whose bytes are lent, by their response, until it closes. */
const lentAnswers = new WeakMap<ServerResponse, EncodedJson>()

/** The 'close' listener of those responses: one function for all, so no closure per answer. */
function releaseOnClose (this: ServerResponse): void {
  lentAnswers.get(this)?.release()
  lentAnswers.delete(this)
}

/**
 * Sends answers that are already JSON (an EncodedJson a handler returns) as they are: no
 * serializer runs, the content type is JSON in UTF-8; a chunked answer's chunks are written in
 * one go, with its Content-Length. When the bytes are lent they are released once the response
 * is over: when the response has been handed to the kernel (Node emits 'close' after 'finish'),
 * or when its connection closed first (at once, if it closed before the answer was ready). Never
 * earlier: a slow reader's answer is still being written from that memory.
 */
export function sendEncodedAnswers (app: FastifyInstance): void {
  app.addHook('preSerialization', (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    if (!(payload instanceof EncodedJson)) return done(null, payload)
    if (payload.chunks === undefined) reply.serializer(encodedBody as (payload: unknown) => string)
    else {
      reply.header('content-length', payload.chunkBytes)
      reply.serializer(chunkedBody as unknown as (payload: unknown) => string)
    }
    if (payload.lent) {
      if (reply.raw.destroyed) payload.release()
      else {
        lentAnswers.set(reply.raw, payload)
        reply.raw.on('close', releaseOnClose)
      }
    }
    done(null, payload)
  })
}
