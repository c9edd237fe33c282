/**
 * The part of autocannon 8's programmatic API the benchmark uses (the package ships no types).
 * See node_modules/autocannon/README.md.
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    interface Request {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
      /** Called before every request built from this entry; returns the request to send. */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request
    }

    interface Options {
      url: string
      connections?: number
      pipelining?: number
      /** Seconds; ignored when amount is set. */
      duration?: number
      /** Total number of requests, instead of a duration. */
      amount?: number
      /** Milliseconds between autocannon's samples; it also checks whether to stop only then (default 1000). */
      sampleInt?: number
      /** Seconds before a request times out. */
      timeout?: number
      method?: string
      headers?: Record<string, string>
      body?: string | Buffer
      requests?: Request[]
    }

    interface Result {
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      statusCodeStats: Record<string, { count: number }>
      requests: { total: number; average: number }
      latency: { p50: number; p99: number; average: number }
    }

    interface Instance extends EventEmitter {
      stop(): void
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this
      on(event: 'done', listener: (result: Result) => void): this
      on(event: string, listener: (...args: unknown[]) => void): this
    }
  }

  function autocannon (options: autocannon.Options, callback: (error: Error | null, result: autocannon.Result) => void): autocannon.Instance

  export = autocannon
}
