import type { FastifyInstance } from 'fastify'
import { buildApp, type AppOptions } from './app.js'
import type { Config } from './config.js'

export interface RunningServer {
  app: FastifyInstance
  url: string
  /** Stops accepting, lets in-flight requests finish, closes the database. */
  close(): Promise<void>
}

/** Builds the app and listens on config.host:config.port. */
export async function startServer (config: Config, options: AppOptions = {}): Promise<RunningServer> {
  const app = await buildApp(config, options)
  try {
    await app.listen({ port: config.port, host: config.host })
  } catch (e) {
    await app.close()
    throw e
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : config.port
  const host = config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host
  let closing: Promise<void> | undefined
  return { app, url: `http://${host}:${port}`, close: () => (closing ??= app.close()) }
}

/**
 * How long a signal lets in-flight requests finish before the sandbox closes anyway: with the
 * closing itself (writing examiner recordings, closing the database), the process ends within 2 s
 * of the signal, whatever is running (long work runs in turns or on a worker, so the event loop
 * is free to hear the signal and this timer).
 */
export const SHUTDOWN_GRACE_MS = 1500

/**
 * SIGINT/SIGTERM: graceful close (new requests 503, work in progress stopped, in-flight requests
 * finish); past SHUTDOWN_GRACE_MS the rest is cut short and the database closed at once; exit 0
 * when the database closed cleanly. A second signal exits at once. Answers the same stop for
 * other reasons to stop (standard input closed, with serve --exit-on-stdin-close).
 */
export function closeOnSignals (server: RunningServer, exit: (code: number) => void): (reason: string) => void {
  let stopping = false
  const stop = (reason: string) => {
    stopping = true
    server.app.log.info({ signal: reason }, 'shutting down: finishing in-flight requests')
    const timer = setTimeout(() => {
      server.app.log.warn(`requests still in flight after ${SHUTDOWN_GRACE_MS} ms: closing now`)
      try {
        server.app.closeNow()
        exit(0)
      } catch (err) {
        server.app.log.error({ err }, 'shutdown failed')
        exit(1)
      }
    }, SHUTDOWN_GRACE_MS)
    timer.unref()
    server.close().then(
      () => exit(0),
      (err: unknown) => {
        server.app.log.error({ err }, 'shutdown failed')
        exit(1)
      }
    )
  }
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) return stop(signal)
    server.app.log.warn({ signal }, 'second signal: exiting now')
    exit(1)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return (reason) => { if (!stopping) stop(reason) }
}
