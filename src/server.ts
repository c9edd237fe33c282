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
 * How long the closing itself may take once the drain is over (work stopped, examiner recordings
 * written, the databases closed): past it, the rest is cut short and the process exits.
 */
export const CLOSE_GRACE_MS = 1500

/** A moment for work stopped at the drain's end (a report, a fixture) to answer 503 itself. */
const STOPPED_WORK_ANSWERS_MS = 100

/**
 * SIGINT/SIGTERM: the drain, then the close (drainAndClose); exit 0 when the database closed
 * cleanly. A second signal exits at once. Answers the same stop for other reasons to stop
 * (standard input closed, with serve --exit-on-stdin-close).
 */
export function closeOnSignals (server: RunningServer, exit: (code: number) => void, drainSeconds: number): (reason: string) => void {
  let stopping = false
  const stop = (reason: string) => {
    stopping = true
    server.app.log.info({ signal: reason, drainSeconds }, `shutting down: new requests refused, requests in flight get ${drainSeconds} s`)
    drainAndClose(server, drainSeconds).then(exit, (err: unknown) => {
      server.app.log.error({ err }, 'shutdown failed')
      exit(1)
    })
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

/**
 * The drain, then the close; answers the exit code. New connections are refused (the server
 * stops listening) and requests arriving on open ones answered 503 with Retry-After and
 * `Connection: close`; the requests in flight get `drainSeconds`; then work still running (a
 * report, a fixture, a simulator's catch-up) is stopped and every request left is answered 503
 * with Retry-After; then what the instance holds for others is handed over (hosted mode's world
 * leases, what each world holds written to its log first); last, the app closes, cut short past
 * CLOSE_GRACE_MS.
 */
export async function drainAndClose (server: RunningServer, drainSeconds: number): Promise<number> {
  const { app } = server
  const { drain } = app.operations
  drain.begin()
  app.server.close()
  app.server.closeIdleConnections()
  const left = await drain.drain(drainSeconds * 1000)
  if (left > 0) {
    app.log.warn(`${left} request${left === 1 ? '' : 's'} still in flight after ${drainSeconds} s: answered 503`)
    await app.worlds.stopWork().catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, STOPPED_WORK_ANSWERS_MS))
    drain.answerLate(drainSeconds)
  }
  // once no request here uses them: the others take them at once
  await app.operations.handOver().catch((err: unknown) => app.log.warn({ err }, 'handing over failed'))
  let timer: NodeJS.Timeout | undefined
  const cutShort = new Promise<number>((resolve) => {
    timer = setTimeout(() => {
      app.log.warn(`still closing after ${CLOSE_GRACE_MS} ms: closing now`)
      try {
        app.closeNow()
        resolve(0)
      } catch (err) {
        app.log.error({ err }, 'shutdown failed')
        resolve(1)
      }
    }, CLOSE_GRACE_MS)
    timer.unref()
  })
  const closed = server.close().then(() => 0)
  const code = await Promise.race([closed, cutShort])
  clearTimeout(timer)
  return code
}
