import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect } from 'node:net'
import { performance } from 'node:perf_hooks'

/**
 * The attack's three ways of talking to the sandbox: an ordinary HTTP request (keep-alive agent,
 * bounded time and answer size), a request whose body is generated chunk by chunk (never held in
 * memory whole), and a raw socket for what a well-behaved client cannot send (dot segments left
 * as they are, oversized headers).
 */

export interface Answer {
  /** 0 when no answer came (connection error, timeout). */
  status: number
  headers: IncomingHttpHeaders
  /** The answer's bytes, up to the call's maxBody. */
  body: Buffer
  ms: number
  /** Why there is no answer, or why the answer was cut. */
  error?: string
}

export interface Call {
  method?: string
  /** Path and query string. */
  path: string
  headers?: Record<string, string>
  body?: string | Buffer
  timeoutMs: number
  agent?: Agent
  /** Answer bytes kept (the rest is read and dropped). */
  maxBody?: number
}

const DEFAULT_MAX_BODY = 16 * 1024 * 1024

export const text = (a: Answer): string => a.body.toString('utf8')

/** One request; never throws (a failure is status 0 with `error`). */
export function send (origin: string, call: Call): Promise<Answer> {
  const started = performance.now()
  return new Promise((resolve) => {
    const url = new URL(call.path, origin)
    let settled = false
    const done = (a: Omit<Answer, 'ms'>) => {
      if (settled) return
      settled = true
      resolve({ ...a, ms: performance.now() - started })
    }
    const headers: Record<string, string> = { ...(call.headers ?? {}) }
    if (call.body !== undefined) headers['content-length'] = String(Buffer.byteLength(call.body))
    const req = httpRequest({
      host: url.hostname, port: url.port, path: url.pathname + url.search, method: call.method ?? 'GET', headers, agent: call.agent ?? false
    }, (res) => {
      const chunks: Buffer[] = []
      let kept = 0
      const max = call.maxBody ?? DEFAULT_MAX_BODY
      res.on('data', (c: Buffer) => {
        if (kept < max) {
          chunks.push(c.subarray(0, max - kept))
          kept += Math.min(c.length, max - kept)
        }
      })
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', (e) => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error: e.message }))
    })
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${call.timeoutMs} ms`))
    }, call.timeoutMs)
    req.on('close', () => clearTimeout(timer))
    req.on('error', (e) => done({ status: 0, headers: {}, body: Buffer.alloc(0), error: (e as NodeJS.ErrnoException).code ?? e.message }))
    req.end(call.body)
  })
}

export interface StreamCall {
  method: string
  path: string
  headers: Record<string, string>
  /** Bytes before the generated run, the pattern repeated in it and its length, bytes after it. */
  head: Buffer
  fill: Buffer
  fillBytes: number
  tail: Buffer
  /** true: Transfer-Encoding chunked; false: Content-Length of the whole body. */
  chunked: boolean
  /**
   * false: after the fill, neither the tail nor the body's end is sent; the answer is awaited.
   * A server that refuses a body closes the connection, and a client still writing then meets
   * EPIPE, which can come before the answer it was sent is read: a body only as long as the
   * server must read before it refuses leaves nothing to write when it does.
   */
  endBody?: boolean
  timeoutMs: number
}

const CHUNK = 1024 * 1024

/**
 * Sends head + fillBytes × fill + tail, 1 MiB at a time with back-pressure, and stops writing as
 * soon as the server answers (a 413 comes before the body ends). Resolves with the answer and the
 * bytes actually written.
 */
export function sendGenerated (origin: string, call: StreamCall): Promise<Answer & { written: number }> {
  const started = performance.now()
  const total = call.head.length + call.fillBytes + call.tail.length
  return new Promise((resolve) => {
    const url = new URL(call.path, origin)
    let written = 0
    let settled = false
    // Set by the answer's callback while the body is still being written.
    const state = { answered: false }
    const done = (a: Omit<Answer, 'ms'>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ ...a, ms: performance.now() - started, written })
    }
    const headers = { ...call.headers, ...(call.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(total) }) }
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: call.method, headers, agent: false }, (res) => {
      state.answered = true
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })
        req.destroy()
      })
      res.on('error', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${call.timeoutMs} ms`)), call.timeoutMs)
    req.on('error', (e) => done({ status: 0, headers: {}, body: Buffer.alloc(0), error: (e as NodeJS.ErrnoException).code ?? e.message }))
    // About 1 MiB of whole patterns, written again and again.
    const block = Buffer.alloc(Math.max(1, Math.floor(CHUNK / call.fill.length)) * call.fill.length, call.fill)
    const pump = async () => {
      const write = (b: Buffer) => {
        written += b.length
        if (req.write(b)) return Promise.resolve()
        return new Promise<void>((resolve) => {
          const go = () => {
            req.off('drain', go)
            req.off('close', go)
            resolve()
          }
          req.on('drain', go)
          req.on('close', go)
        })
      }
      await write(call.head)
      let left = call.fillBytes
      while (left > 0 && !state.answered && !req.destroyed) {
        const n = Math.min(block.length, left)
        await write(n === block.length ? block : block.subarray(0, n))
        left -= n
      }
      if (call.endBody !== false && !state.answered && !req.destroyed) {
        written += call.tail.length
        req.end(call.tail)
      }
    }
    pump().catch((e: Error) => req.destroy(e))
  })
}

export interface RawAnswer {
  status: number
  /** The status line and headers, as sent. */
  head: string
  body: Buffer
  ms: number
  error?: string
}

/** Writes `request` on a fresh socket exactly as given and reads until the server closes (or maxBytes, or the timeout). */
export function raw (origin: string, request: string | Buffer, timeoutMs: number, maxBytes = DEFAULT_MAX_BODY): Promise<RawAnswer> {
  const started = performance.now()
  const url = new URL(origin)
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    let error: string | undefined
    const socket = connect(Number(url.port), url.hostname, () => socket.write(request))
    const timer = setTimeout(() => {
      error = `no end within ${timeoutMs} ms`
      socket.destroy()
    }, timeoutMs)
    socket.on('data', (c: Buffer) => {
      if (size < maxBytes) chunks.push(c)
      size += c.length
      if (size >= maxBytes) socket.destroy()
    })
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message
    })
    socket.on('close', () => {
      clearTimeout(timer)
      const all = Buffer.concat(chunks)
      const split = all.indexOf('\r\n\r\n')
      const head = (split === -1 ? all : all.subarray(0, split)).toString('latin1')
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head)
      resolve({ status: m === null ? 0 : Number(m[1]), head, body: split === -1 ? Buffer.alloc(0) : all.subarray(split + 4), ms: performance.now() - started, error })
    })
  })
}

/** A header of a raw answer's head (first occurrence), lower-cased name. */
export function rawHeader (head: string, name: string): string | undefined {
  for (const line of head.split('\r\n').slice(1)) {
    const i = line.indexOf(':')
    if (i > 0 && line.slice(0, i).trim().toLowerCase() === name) return line.slice(i + 1).trim()
  }
  return undefined
}

/** A keep-alive agent for one phase's traffic. */
export const keepAlive = (sockets: number) => new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets })
