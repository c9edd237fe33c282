import type { FastifyReply } from 'fastify'
import { drainTimeUp, toResponse } from '../errors.js'

/**
 * The requests in flight, and the drain after a stop signal (src/server.ts): from its start, new
 * requests are refused (503 with Retry-After, the connection closed: the operations hook asks
 * `refusing`); those in flight get `boundMs` to be answered; those left then are answered 503 with
 * Retry-After (drainTimeUp). A request is tracked from its first hook to its completion (the
 * request log's hook); a request whose connection broke first is dropped when the set is swept.
 */
export class Drain {
  private readonly inFlight = new Set<FastifyReply>()
  private started = false
  private drained: (() => void) | undefined

  /** True once the drain has begun: a new request is refused. */
  get refusing (): boolean {
    return this.started
  }

  /** Requests in flight now. */
  get size (): number {
    return this.inFlight.size
  }

  track (reply: FastifyReply): void {
    this.inFlight.add(reply)
    // requests whose connection broke never complete: swept now and then, so the set stays small
    if (this.inFlight.size > SWEEP_ABOVE && this.inFlight.size > 2 * this.sweptTo) this.sweep()
  }

  done (reply: FastifyReply): void {
    if (this.inFlight.delete(reply) && this.started && this.inFlight.size === 0) this.drained?.()
  }

  /** Refuses new requests from now on; those in flight close their connection once answered. */
  begin (): void {
    this.started = true
    this.sweep()
    for (const reply of this.inFlight) if (!reply.raw.headersSent) reply.header('connection', 'close')
  }

  /** Waits until the requests in flight are answered or `boundMs` has passed; answers how many were left then. */
  async drain (boundMs: number): Promise<number> {
    this.begin()
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined
      await new Promise<void>((resolve) => {
        this.drained = resolve
        timer = setTimeout(resolve, boundMs)
      })
      clearTimeout(timer)
    }
    return this.inFlight.size
  }

  /** Answers every request still in flight 503 with Retry-After (the drain's time is up). */
  answerLate (boundSeconds: number): void {
    const answer = toResponse(drainTimeUp(boundSeconds))
    for (const reply of [...this.inFlight]) {
      this.inFlight.delete(reply)
      if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) continue
      reply.code(answer.status).headers(answer.headers).type(answer.contentType).send(answer.body)
    }
  }

  private sweptTo = 0

  private sweep (): void {
    for (const reply of this.inFlight) if (reply.raw.writableFinished || reply.raw.destroyed) this.inFlight.delete(reply)
    this.sweptTo = this.inFlight.size
  }
}

/** The set is swept once it holds more than this (and twice what the last sweep left). */
const SWEEP_ABOVE = 4096
