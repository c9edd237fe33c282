import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { performance } from 'node:perf_hooks'
import { createGunzip } from 'node:zlib'
import { ApiError } from '../errors.js'
import { BYTES_PER_VALUE, MAX_JSON_DEPTH, parseJsonDocument } from '../http/json-body.js'

/**
 * A small client of the vendor API for the import and compare commands: Basic auth, a timeout
 * per attempt, retries with exponential backoff for dropped connections, timeouts and (for
 * the import) 5xx answers, and 429 honoured with its Retry-After. It speaks to an instance
 * only over HTTP, as a partner's integration would, and trusts nothing it answers: every
 * answer is read as it arrives and counted against a byte limit (as sent and once
 * decompressed), and its JSON is checked for depth and size before it is parsed.
 */

export type ApiVersion = '4.0' | '3.0' | '1'

/**
 * The most an answer may hold, as received and once decompressed. The largest batch read of a
 * generated 4,000-client agency (its 200 largest clients, every group) is 0.91 MiB, 6.6 times
 * less; an average batch, 0.55 MiB. Reading stops at the limit, so a gzip bomb or an endless
 * body costs at most this much. The importer's peak RSS with four answers at the limit, each of
 * the most values, in flight at once (the default --concurrency) was 146-159 MB; at 8 MiB it was
 * 208-224 MB (before the collection after large answers), above the 200 MB the sandbox's
 * processes aim to stay under.
 */
export const MAX_ANSWER_BYTES = 6 * 1024 * 1024
/** Values (objects, arrays, items) an answer's JSON may hold: one per 16 bytes of the limit, as the sandbox's own bodies (1,048,576). */
export const MAX_ANSWER_VALUES = MAX_ANSWER_BYTES / BYTES_PER_VALUE
/** The longest wait between two attempts, Retry-After included; a longer one gives up at once. */
export const MAX_WAIT_MS = 60_000

/**
 * A number from an answer's value (a JSON number, or digits in a string), NaN for anything else:
 * Number() of an object would call its `valueOf` and `toString` keys, and throw when neither is a function.
 */
export const numberIn = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN)

/** An answer's headers by name, any case (the part of WHATWG Headers callers use). */
export interface AnswerHeaders { get(name: string): string | null }

export interface Answer {
  status: number
  headers: AnswerHeaders
  /** The body, decompressed. */
  readonly body: Buffer
  /** The body as UTF-8 text. */
  readonly text: string
}

class ReceivedHeaders implements AnswerHeaders {
  constructor (private readonly received: IncomingHttpHeaders) {}
  get (name: string): string | null {
    const value = this.received[name.toLowerCase()]
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
  }
}

class ReceivedAnswer implements Answer {
  private decoded: string | undefined
  constructor (readonly status: number, readonly headers: AnswerHeaders, readonly body: Buffer) {}
  get text (): string {
    return (this.decoded ??= this.body.toString('utf8'))
  }
}

/** The answer cannot be used, whatever an attempt more would bring (too large, not gzip): never retried. */
class UnusableBody extends Error {}

const mib = (bytes: number) => `${bytes / (1024 * 1024)} MiB`

/**
 * One exchange over node:http(s) with a keep-alive agent. The body is read as it arrives,
 * gunzipped as a stream when it is gzip, and the exchange stops as soon as either count passes
 * `maxBytes`. fetch's layers (Request, Response, Headers, web streams, AbortSignal) were a third
 * of the import's CPU time over 25,000 small listings, and their garbage grew its heap by 40 MB.
 */
function exchange (agent: HttpAgent, url: URL, method: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number, maxBytes: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const sentHeaders = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }
    let settled = false
    const req = send(url, { method, headers: sentHeaders, agent }, (res) => {
      const declared = Number(res.headers['content-length'])
      if (declared > maxBytes) return fail(new UnusableBody(`the answer is ${declared.toLocaleString('en-US')} bytes, more than ${mib(maxBytes)} (the most an answer may hold)`))
      const gzip = /^\s*(x-)?gzip\s*$/i.test(res.headers['content-encoding'] ?? '')
      // a body of a declared size is copied into one buffer as it comes, rather than held twice (its pieces, then their sum)
      const whole = !gzip && declared >= 0 ? Buffer.allocUnsafe(declared) : undefined
      const chunks: Buffer[] = []
      let received = 0
      let kept = 0
      const keep = (chunk: Buffer) => {
        if (kept + chunk.length > maxBytes || (whole !== undefined && kept + chunk.length > whole.length)) {
          return fail(new UnusableBody(`the answer is more than ${mib(maxBytes)}${gzip ? ' once decompressed' : ''} (the most an answer may hold)`))
        }
        if (whole !== undefined) chunk.copy(whole, kept)
        else chunks.push(chunk)
        kept += chunk.length
      }
      const done = () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        const body = whole === undefined ? Buffer.concat(chunks, kept) : whole.subarray(0, kept)
        resolve(new ReceivedAnswer(res.statusCode ?? 0, new ReceivedHeaders(res.headers), body))
      }
      const gunzip = gzip ? createGunzip() : undefined
      if (gunzip !== undefined) {
        gunzip.on('data', keep)
        gunzip.on('error', (e) => fail(new UnusableBody(`the gzip body cannot be decompressed (${e.message})`)))
        gunzip.on('end', done)
        // the inflated side sets the pace: a bomb is never inflated faster than it is counted
        gunzip.on('drain', () => res.resume())
      }
      res.on('data', (chunk: Buffer) => {
        received += chunk.length
        if (received > maxBytes) return fail(new UnusableBody(`the answer is more than ${mib(maxBytes)} (the most an answer may hold)`))
        if (gunzip === undefined) keep(chunk)
        else if (!gunzip.write(chunk)) res.pause()
      })
      res.on('error', fail)
      // a connection dropped in the middle of the body ends without 'end'
      res.on('close', () => { if (!res.complete) fail(Object.assign(new Error('connection closed before the end of the answer'), { code: 'ECONNRESET' })) })
      res.on('end', () => (gunzip === undefined ? done() : gunzip.end()))
      cleanups.push(() => gunzip?.destroy())
    })
    const cleanups: Array<() => void> = []
    // past the timeout, whatever error the destroyed connection then raises is reported as the timeout
    let timedOut = false
    function fail (e: Error): void {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.destroy()
      for (const cleanup of cleanups) cleanup()
      reject(timedOut ? new DOMException('timed out', 'TimeoutError') : e)
    }
    const timer = setTimeout(() => {
      timedOut = true
      fail(new Error('timed out'))
    }, timeoutMs)
    req.on('error', fail)
    req.end(body)
  })
}

/**
 * One GET outside the vendor API (the report command's), read as the vendor client reads: at
 * most `maxBytes` as received and once decompressed, within `timeoutMs`. Throws the connection's
 * error, a TimeoutError, or an UnexpectedAnswer naming the request when the body cannot be used.
 */
export async function getBounded (url: string, headers: Record<string, string>, timeoutMs: number, maxBytes = MAX_ANSWER_BYTES): Promise<Answer> {
  const target = new URL(url)
  const agent = target.protocol === 'https:' ? new HttpsAgent() : new HttpAgent()
  try {
    return await exchange(agent, target, 'GET', { 'accept-encoding': 'gzip', ...headers }, undefined, timeoutMs, maxBytes)
  } catch (e) {
    if (e instanceof UnusableBody) throw new UnexpectedAnswer(`GET ${url}: ${e.message}`)
    throw e
  } finally {
    agent.destroy()
  }
}

export interface RetryNotice {
  attempt: number
  of: number
  waitMs: number
  reason: string
  what: string
}

export interface VendorClientOptions {
  baseUrl: string
  clientId: string
  clientSecret: string
  /** Per attempt, connection and body together. A request, its retries and waits included, ends within timeoutMs × (retries + 1). */
  timeoutMs?: number
  /** Attempts after the first for dropped connections, timeouts, 429 and retried statuses. */
  retries?: number
  /** First backoff; it doubles on each attempt up to maxBackoffMs. */
  backoffMs?: number
  maxBackoffMs?: number
  /** Statuses retried with backoff besides 429 (the import: every 5xx; compare: none). */
  retryServerErrors?: boolean
  /** The most an answer may hold (MAX_ANSWER_BYTES). */
  maxAnswerBytes?: number
  onRetry?: (notice: RetryNotice) => void
}

/** The instance kept failing (or asked to wait too long): the caller stops, and may resume later. */
export class GiveUpError extends Error {
  constructor (readonly what: string, readonly reason: string, readonly attempts: number) {
    super(`${what}: ${reason} (gave up after ${attempts} attempt${attempts === 1 ? '' : 's'})`)
    this.name = 'GiveUpError'
  }
}

/** A request got an answer the caller cannot use (a 403, a body too large, not JSON, nested too deep, of the wrong shape). */
export class UnexpectedAnswer extends Error {
  constructor (message: string, readonly status?: number) {
    super(message)
    this.name = 'UnexpectedAnswer'
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs (value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

function describeFailure (e: unknown): string {
  if (!(e instanceof Error)) return String(e)
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out'
  const code = (e as Error & { code?: string }).code
  if (code !== undefined) return `connection failed (${code})`
  const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause
  if (cause?.code !== undefined) return `connection failed (${cause.code})`
  return cause?.message ?? e.message
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`
/** The start of a body, for a message (printed through printable by the command). */
const excerpt = (text: string, n = 300) => (text.length > n ? `${text.slice(0, n)}…` : text)
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1)

export class VendorClient {
  /** The instance's URL, without credentials and trailing slashes: requests are named by it. */
  readonly base: string
  private readonly auth: string
  private readonly timeoutMs: number
  private readonly retries: number
  private readonly backoffMs: number
  private readonly maxBackoffMs: number
  private readonly retryServerErrors: boolean
  private readonly maxAnswerBytes: number
  private readonly agent: HttpAgent
  /** Requests answered (whatever the status), for the summary. */
  requests = 0
  retried = 0

  constructor (private readonly options: VendorClientOptions) {
    const url = new URL(options.baseUrl)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${options.baseUrl} is not an http(s) URL`)
    url.username = ''
    url.password = ''
    url.search = ''
    url.hash = ''
    this.base = url.href.replace(/\/+$/, '')
    // idle sockets of a keep-alive agent do not keep the process alive
    this.agent = url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true })
    this.auth = 'Basic ' + Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')
    this.timeoutMs = options.timeoutMs ?? 60_000
    this.retries = options.retries ?? 6
    this.backoffMs = options.backoffMs ?? 250
    this.maxBackoffMs = options.maxBackoffMs ?? 8_000
    this.retryServerErrors = options.retryServerErrors ?? true
    this.maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES
  }

  /** `/vendor/agency/1/clients` with the version parameter (none for version 1) and the rest of the query. */
  static path (path: string, version: ApiVersion, query: Record<string, string | undefined> = {}): string {
    const params = new URLSearchParams()
    if (version !== '1') params.set('version', version)
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v)
    // commas and colons need no escaping in a query (include lists and times read as written)
    const q = params.toString().replace(/%2C/gi, ',').replace(/%3A/gi, ':')
    return q === '' ? path : `${path}?${q}`
  }

  /** `GET https://staging.example.com/vendor/agencies?version=4.0`: how messages name a request. */
  describe (method: string, pathAndQuery: string): string {
    return `${method} ${this.base}${pathAndQuery}`
  }

  get (pathAndQuery: string): Promise<Answer> {
    return this.send('GET', pathAndQuery)
  }

  post (pathAndQuery: string, body: unknown): Promise<Answer> {
    return this.send('POST', pathAndQuery, JSON.stringify(body))
  }

  /** A GET whose answer must be 200 JSON; anything else is an error naming the request. */
  async getJson<T>(pathAndQuery: string): Promise<T> {
    return this.expectJson<T>('GET', pathAndQuery, await this.get(pathAndQuery))
  }

  /** A GET whose answer must be a 200 JSON array. */
  async getJsonArray (pathAndQuery: string): Promise<unknown[]> {
    return this.expectArray('GET', pathAndQuery, await this.get(pathAndQuery))
  }

  expectJson<T>(method: string, pathAndQuery: string, answer: Answer): T {
    if (answer.status !== 200) {
      throw new UnexpectedAnswer(`${this.describe(method, pathAndQuery)} answered ${answer.status}: ${excerpt(answer.text)}`, answer.status)
    }
    return this.parse(method, pathAndQuery, answer) as T
  }

  expectArray (method: string, pathAndQuery: string, answer: Answer): unknown[] {
    const value = this.expectJson<unknown>(method, pathAndQuery, answer)
    if (!Array.isArray(value)) {
      throw new UnexpectedAnswer(`${this.describe(method, pathAndQuery)} answered 200 with ${value === null ? 'null' : `a JSON ${typeof value}`} where a JSON array is due`, answer.status)
    }
    return value
  }

  /**
   * The answer's JSON, its nesting (at most 64 levels, as the API reads bodies) and its number
   * of values checked before it is parsed, by the sandbox's own body parser. `__proto__` keys
   * stay data, as there; whoever copies the value reports or drops them.
   */
  parse (method: string, pathAndQuery: string, answer: Answer): unknown {
    try {
      return parseJsonDocument(answer.body, MAX_ANSWER_VALUES).value
    } catch (e) {
      if (!(e instanceof ApiError)) throw e
      const reason = /nests/.test(e.detail)
        ? `JSON nested more than ${MAX_JSON_DEPTH} levels deep (the most the API reads)`
        : /values/.test(e.detail)
          ? `JSON of more than ${MAX_ANSWER_VALUES.toLocaleString('en-US')} values (the most an answer may hold)`
          : `a body that is not JSON (${lowerFirst(e.detail.replace(/^The body is not valid JSON: /, ''))}): ${excerpt(answer.text, 120)}`
      throw new UnexpectedAnswer(`${this.describe(method, pathAndQuery)} answered ${answer.status} with ${reason}`, answer.status)
    }
  }

  /**
   * Sends one request, retrying as configured; resolves with the final answer. The request,
   * its retries and waits included, ends within timeoutMs × (retries + 1): each attempt gets
   * what is left of it, and a wait (backoff or Retry-After) longer than MAX_WAIT_MS or than
   * what is left gives up at once. 429 answers count against the retries like any other.
   */
  async send (method: string, pathAndQuery: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
    const what = this.describe(method, pathAndQuery)
    const budgetMs = this.timeoutMs * (this.retries + 1)
    const deadline = performance.now() + budgetMs
    for (let attempt = 1; ; attempt++) {
      let reason: string
      let asked: { ms: number; header: string } | undefined
      try {
        const res = await exchange(this.agent, new URL(this.base + pathAndQuery), method, {
          authorization: this.auth,
          accept: 'application/json',
          'accept-encoding': 'gzip',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers
        }, body, Math.max(1, Math.min(this.timeoutMs, deadline - performance.now())), this.maxAnswerBytes)
        this.requests++
        if (res.status !== 429 && !(this.retryServerErrors && res.status >= 500)) return res
        reason = `answered ${res.status}`
        const header = res.headers.get('retry-after')
        const ms = retryAfterMs(header)
        if (ms !== undefined) asked = { ms, header: header! }
      } catch (e) {
        if (e instanceof UnusableBody) throw new UnexpectedAnswer(`${what}: ${e.message}`)
        reason = describeFailure(e)
      }
      if (attempt > this.retries) throw new GiveUpError(what, reason, attempt)
      const wait = asked?.ms ?? this.backoff(attempt)
      if (wait > MAX_WAIT_MS) throw new GiveUpError(what, `${reason} with Retry-After: ${asked?.header}, longer than the ${seconds(MAX_WAIT_MS)} a wait may last`, attempt)
      if (performance.now() + wait >= deadline) {
        throw new GiveUpError(what, `${reason}${asked === undefined ? '' : ` with Retry-After: ${asked.header}`}; the next attempt would start after the ${seconds(budgetMs)} a request may take (--timeout × (--retries + 1))`, attempt)
      }
      this.notify({ attempt, of: this.retries, waitMs: wait, reason, what: `${method} ${pathAndQuery}` })
      await sleep(wait)
    }
  }

  /** Ends every connection, those of requests still under way included. */
  close (): void {
    this.agent.destroy()
  }

  /** Exponential backoff with a little jitter (so parallel requests do not retry in step). */
  private backoff (attempt: number): number {
    const base = Math.min(this.backoffMs * 2 ** (attempt - 1), this.maxBackoffMs)
    return Math.round(base * (0.8 + Math.random() * 0.4))
  }

  private notify (notice: RetryNotice): void {
    this.retried++
    this.options.onRetry?.(notice)
  }
}
