import type { FastifyReply } from 'fastify'
import { drainTimeUp, toResponse } from '../errors.js'

/**
 * The requests in flight, and the drain after a stop signal (src/server.ts): from its start, new
 * requests are refused (503 with Retry-After, the connection closed: the operations hook asks
 * `refusing`); those in flight get `boundMs` to be answered; those left then are answered 503 with
 * Retry-After (drainTimeUp). A request is tracked from its first hook to its completion (the
 * request log's hook); a request whose connection broke first is dropped when the slots are swept.
 */
declare module 'fastify' {
  interface FastifyReply {
    /** Where the reply is among the requests in flight (drain.ts), -1 once it is not. */
    drainSlot: number
  }
}

export class Drain {
  /** The replies in flight, each in its slot (a free slot is undefined): cheaper on every request than a Set. */
  private readonly slots: Array<FastifyReply | undefined> = []
  private readonly free: number[] = []
  private count = 0
  private started = false
  private drained: (() => void) | undefined

  /** True once the drain has begun: a new request is refused. */
  get refusing (): boolean {
    return this.started
  }

  /** Requests in flight now. */
  get size (): number {
    return this.count
  }

  track (reply: FastifyReply): void {
    // requests whose connection broke never complete: swept now and then, so the slots stay few
    if (this.free.length === 0 && this.slots.length >= SWEEP_ABOVE && this.slots.length >= 2 * this.sweptTo) this.sweep()
    const slot = this.free.pop() ?? this.slots.length
    this.slots[slot] = reply
    reply.drainSlot = slot
    this.count++
  }

  done (reply: FastifyReply): void {
    const slot = reply.drainSlot
    if (slot < 0 || this.slots[slot] !== reply) return
    this.slots[slot] = undefined
    reply.drainSlot = -1
    this.free.push(slot)
    this.count--
    if (this.started && this.count === 0) this.drained?.()
  }

  /** Refuses new requests from now on; those in flight close their connection once answered. */
  begin (): void {
    this.started = true
    this.sweep()
    for (const reply of this.inFlight()) if (!reply.raw.headersSent) reply.header('connection', 'close')
  }

  /** Waits until the requests in flight are answered or `boundMs` has passed; answers how many were left then. */
  async drain (boundMs: number): Promise<number> {
    this.begin()
    if (this.count > 0) {
      let timer: NodeJS.Timeout | undefined
      await new Promise<void>((resolve) => {
        this.drained = resolve
        timer = setTimeout(resolve, boundMs)
      })
      clearTimeout(timer)
    }
    return this.count
  }

  /** Answers every request still in flight 503 with Retry-After (the drain's time is up). */
  answerLate (boundSeconds: number): void {
    const answer = toResponse(drainTimeUp(boundSeconds))
    for (const reply of this.inFlight()) {
      this.done(reply)
      if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) continue
      reply.code(answer.status).headers(answer.headers).type(answer.contentType).send(answer.body)
    }
  }

  private sweptTo = 0

  private inFlight (): FastifyReply[] {
    return this.slots.filter((reply): reply is FastifyReply => reply !== undefined)
  }

  /** Forgets the replies whose connection ended without their completion. */
  private sweep (): void {
    for (const reply of this.inFlight()) if (reply.raw.writableFinished || reply.raw.destroyed) this.done(reply)
    this.sweptTo = this.count
  }
}

/** The slots are swept once there are more than this (and twice what the last sweep left in flight). */
const SWEEP_ABOVE = 4096
