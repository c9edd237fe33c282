import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** The first and last instants an HTTP date can name (its year has four digits). */
const FIRST_HTTP_DATE_MS = new Date(0).setUTCFullYear(0, 0, 1)
const LAST_HTTP_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59)

/**
 * An instant in HTTP's date format (RFC 9110 IMF-fixdate, `Thu, 02 Jan 2031 03:04:05 GMT`).
 * The clock can be moved past year 9999 by repeated advances, and the format has room for four
 * digits only: such instants read as the last second of 9999 (or the first of year 0) rather
 * than as a header no client parses.
 */
export function httpDate (ms: number): string {
  const second = Math.floor(Math.min(LAST_HTTP_DATE_MS, Math.max(FIRST_HTTP_DATE_MS, ms)) / 1000)
  // every answer asks; the text changes once a second (per clock, but most answers come from one)
  if (second !== lastSecond) {
    lastSecond = second
    lastText = new Date(second * 1000).toUTCString()
  }
  return lastText
}
let lastSecond = NaN
let lastText = ''

/** The default world's clock in HTTP's date format: for answers written before a request has a world. */
export function sandboxDate (app: FastifyInstance): string {
  return httpDate(app.worlds.default.clock.nowMs())
}

/**
 * Every answer sent through Fastify (vendor, control, errors, fault answers, 404s) carries the
 * time of its world's clock as `Date`, so a partner that takes its next `asOf` from the service's
 * `Date` stays consistent with a moved clock. Node would otherwise stamp real time. A `Date` a
 * fault rule sets on purpose is left as it is. Answers the HTTP parser refuses before any
 * request exists are written by clientErrorHandler (src/plugins/errors.ts) with the same date.
 */
export function stampDate (app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): void {
  // the request's world's clock (a world of its own for a partner of that world); the default world's before routing
  if (!reply.hasHeader('date')) reply.header('date', httpDate((request.world ?? app.worlds.default).clock.nowMs()))
}
