import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { gunzipSync } from 'node:zlib'

/**
 * A small client of the vendor API for the import and compare commands: Basic auth, a timeout
 * per attempt, retries with exponential backoff for dropped connections, timeouts and (for
 * the import) 5xx answers, and 429 honoured with its Retry-After. It speaks to an instance
 * only over HTTP, as a partner's integration would.
 */

export type ApiVersion = '4.0' | '3.0' | '1'

/** An answer's headers by name, any case (the part of WHATWG Headers callers use). */
export interface AnswerHeaders { get(name: string): string | null }

export interface Answer {
  status: number
  headers: AnswerHeaders
  text: string
}

class ReceivedHeaders implements AnswerHeaders {
  constructor (private readonly received: IncomingHttpHeaders) {}
  get (name: string): string | null {
    const value = this.received[name.toLowerCase()]
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
  }
}

/**
 * One exchange over node:http(s) with a keep-alive agent, the body read whole. fetch's layers
 * (Request, Response, Headers, web streams, AbortSignal) were a third of the import's CPU time
 * over 25,000 small listings, and their garbage grew its heap by 40 MB.
 */
function exchange (agent: HttpAgent, url: URL, method: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const sentHeaders = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }
    const req = send(url, { method, headers: sentHeaders, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', fail)
      // a connection dropped in the middle of the body ends without 'end'
      res.on('close', () => { if (!res.complete) fail(Object.assign(new Error('connection closed before the end of the answer'), { code: 'ECONNRESET' })) })
      res.on('end', () => {
        clearTimeout(timer)
        try {
          const bytes = Buffer.concat(chunks)
          const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8')
          resolve({ status: res.statusCode ?? 0, headers: new ReceivedHeaders(res.headers), text })
        } catch (e) {
          reject(e)
        }
      })
    })
    // past the timeout, whatever error the destroyed connection then raises is reported as the timeout
    let timedOut = false
    function fail (e: Error): void {
      clearTimeout(timer)
      req.destroy()
      reject(timedOut ? new DOMException('timed out', 'TimeoutError') : e)
    }
    const timer = setTimeout(() => {
      timedOut = true
      req.destroy()
    }, timeoutMs)
    req.on('error', fail)
    req.end(body)
  })
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
  /** Per attempt, connection and body together. */
  timeoutMs?: number
  /** Attempts after the first for dropped connections, timeouts and retried statuses. */
  retries?: number
  /** First backoff; it doubles on each attempt up to maxBackoffMs. */
  backoffMs?: number
  maxBackoffMs?: number
  /** Statuses retried with backoff besides 429 (the import: every 5xx; compare: none). */
  retryServerErrors?: boolean
  /** Longest Retry-After honoured; a longer one gives up. */
  maxRetryAfterMs?: number
  onRetry?: (notice: RetryNotice) => void
}

/** The instance kept failing (or asked to wait too long): the caller stops or resumes later. */
export class GiveUpError extends Error {
  constructor (readonly what: string, readonly reason: string, readonly attempts: number) {
    super(`${what}: ${reason} (gave up after ${attempts} attempt${attempts === 1 ? '' : 's'})`)
    this.name = 'GiveUpError'
  }
}

/** 429s do not use up the retries (the instance asked to slow down, it did not fail); this many in a row do. */
const MAX_RATE_LIMITED = 100

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

export class VendorClient {
  readonly base: string
  private readonly auth: string
  private readonly timeoutMs: number
  private readonly retries: number
  private readonly backoffMs: number
  private readonly maxBackoffMs: number
  private readonly retryServerErrors: boolean
  private readonly maxRetryAfterMs: number
  private readonly agent: HttpAgent
  /** Requests answered (whatever the status), for the summary. */
  requests = 0
  retried = 0

  constructor (private readonly options: VendorClientOptions) {
    const url = new URL(options.baseUrl)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${options.baseUrl} is not an http(s) URL`)
    this.base = url.href.replace(/\/+$/, '')
    // idle sockets of a keep-alive agent do not keep the process alive
    this.agent = url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true })
    this.auth = 'Basic ' + Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')
    this.timeoutMs = options.timeoutMs ?? 60_000
    this.retries = options.retries ?? 6
    this.backoffMs = options.backoffMs ?? 250
    this.maxBackoffMs = options.maxBackoffMs ?? 8_000
    this.retryServerErrors = options.retryServerErrors ?? true
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 300_000
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

  expectJson<T>(method: string, pathAndQuery: string, answer: Answer): T {
    if (answer.status !== 200) {
      throw new UnexpectedAnswer(`${method} ${pathAndQuery} answered ${answer.status}: ${answer.text.slice(0, 300)}`, answer)
    }
    try {
      return JSON.parse(answer.text) as T
    } catch {
      throw new UnexpectedAnswer(`${method} ${pathAndQuery} answered 200 with a body that is not JSON: ${answer.text.slice(0, 120)}`, answer)
    }
  }

  /** Sends one request, retrying as configured; resolves with the final answer. */
  async send (method: string, pathAndQuery: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
    const what = `${method} ${pathAndQuery}`
    let failures = 0
    let rateLimited = 0
    for (;;) {
      let reason: string
      let waitMs: number | undefined
      try {
        const res = await exchange(this.agent, new URL(this.base + pathAndQuery), method, {
          authorization: this.auth,
          accept: 'application/json',
          'accept-encoding': 'gzip',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers
        }, body, this.timeoutMs)
        this.requests++
        if (res.status === 429) {
          rateLimited++
          const after = retryAfterMs(res.headers.get('retry-after'))
          if (after !== undefined && after > this.maxRetryAfterMs) {
            throw new GiveUpError(what, `answered 429 with Retry-After ${res.headers.get('retry-after')}, longer than ${this.maxRetryAfterMs / 1000} s`, failures + rateLimited)
          }
          if (rateLimited > MAX_RATE_LIMITED) throw new GiveUpError(what, 'answered 429 too many times in a row', failures + rateLimited)
          this.notify({ attempt: rateLimited, of: MAX_RATE_LIMITED, waitMs: after ?? this.backoff(rateLimited), reason: 'answered 429', what })
          await sleep(after ?? this.backoff(rateLimited))
          continue
        }
        if (!(this.retryServerErrors && res.status >= 500)) return res
        reason = `answered ${res.status}`
        waitMs = retryAfterMs(res.headers.get('retry-after'))
      } catch (e) {
        if (e instanceof GiveUpError) throw e
        reason = describeFailure(e)
      }
      failures++
      if (failures > this.retries) throw new GiveUpError(what, reason, failures + rateLimited)
      const wait = Math.min(waitMs ?? this.backoff(failures), this.maxRetryAfterMs)
      this.notify({ attempt: failures, of: this.retries, waitMs: wait, reason, what })
      await sleep(wait)
    }
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

/** A request got an answer the caller cannot use (a 403, a 404, a body that is not JSON). */
export class UnexpectedAnswer extends Error {
  constructor (message: string, readonly answer: Answer) {
    super(message)
    this.name = 'UnexpectedAnswer'
  }
}
