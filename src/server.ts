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

/** SIGINT/SIGTERM: graceful close; a second signal, or a close taking over 10 s, exits at once. */
export function closeOnSignals (server: RunningServer, exit: (code: number) => void): void {
  let stopping = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      server.app.log.warn({ signal }, 'second signal: exiting now')
      exit(1)
      return
    }
    stopping = true
    server.app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    const timer = setTimeout(() => {
      server.app.log.error('shutdown took over 10 s: exiting')
      exit(1)
    }, 10_000)
    timer.unref()
    server.close().then(
      () => exit(0),
      (err: unknown) => {
        server.app.log.error({ err }, 'shutdown failed')
        exit(1)
      }
    )
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
}
