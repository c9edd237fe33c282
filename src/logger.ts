import { createRequire } from 'node:module'
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import { pino } from 'pino'
import type { Bindings, ChildLoggerOptions, FastifyChildLoggerFactory } from 'fastify/types/logger.js'
import type { Config } from './config.js'
import { stdoutLogStream } from './log-stream.js'

/** pino-pretty, loaded only for readable logs: JSON logs never pay for its modules at start-up. */
const loadPretty = () => createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty')

/**
 * Readable lines (LOG_PRETTY), made on the event loop as each line is logged and written through
 * the same bounded writer as JSON lines. In pino's transport worker, as before, they waited in a
 * buffer of the worker's that no setting bounded, and a stalled reader held SIGTERM's exit 10 s.
 */
function prettyLines (): (line: string) => string {
  return loadPretty().prettyFactory({
    translateTime: 'HH:MM:ss.l',
    // The one-line request entry already says what these fields hold (JSON logs keep them as fields).
    ignore: 'pid,hostname,reqId,method,path,status,ms,integration,agency,world,tenant,url'
  })
}

/** Where silent logs go: nowhere (no file descriptor, no buffer). */
const NOWHERE = { write (): void {} }

/**
 * pino options: readable on a terminal, JSON lines otherwise, to standard output bounded by
 * LOG_BUFFER_BYTES (log-stream.ts); credentials never logged. Silent logs are a logger too, at
 * level silent: Fastify tells the request log each completed request only when it has one, and
 * the journal and the metrics are kept there (request-log.ts).
 */
export function loggerOptions (config: Config): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return { level: 'silent', stream: NOWHERE }
  return {
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["proxy-authorization"]', 'headers.authorization', '*.clientSecret'],
      censor: '[redacted]'
    },
    stream: stdoutLogStream(config.logBufferBytes, config.prettyLogs ? prettyLines() : undefined)
  }
}

/**
 * Warnings written before the app's logger exists (hosted mode waiting for PostgreSQL at start):
 * a JSON line like the logger's, or a plain line on a terminal; nothing when logs are silent.
 */
export function startupWarnings (config: Pick<Config, 'logLevel' | 'prettyLogs' | 'logBufferBytes'>): (line: string) => void {
  if (config.logLevel === 'silent') return () => undefined
  if (config.prettyLogs) return (line) => { process.stderr.write(`agency-sandbox: ${line}\n`) }
  const logger = pino({ level: config.logLevel }, stdoutLogStream(config.logBufferBytes))
  return (line) => logger.warn(line)
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type LevelLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean }

/**
 * A request's logger that makes its child (binding the request id) only when a line is logged.
 * Above the info level most requests log nothing, and making a child for each is a few percent
 * of a read's cost. One small object per request: the methods are on the prototype.
 */
class LazyRequestLogger {
  private made: FastifyBaseLogger | undefined

  constructor (
    private readonly parent: LevelLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions
  ) {}

  private real (): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options))
  }

  private log (level: Level, args: unknown[]): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return
    ;(this.real()[level] as (...a: unknown[]) => void)(...args)
  }

  /** As the child would answer: the request log asks before it builds a line (src/plugins/request-log.ts). */
  isLevelEnabled (level: string): boolean {
    // a child without the method (a logger of the partner's own) answers as its parent does
    return (this.made as Partial<LevelLogger> | undefined)?.isLevelEnabled?.(level) ?? this.parent.isLevelEnabled(level)
  }

  get level (): string {
    return this.made?.level ?? this.parent.level
  }

  set level (value: string) {
    this.real().level = value
  }

  fatal (...args: unknown[]): void { this.log('fatal', args) }
  error (...args: unknown[]): void { this.log('error', args) }
  warn (...args: unknown[]): void { this.log('warn', args) }
  info (...args: unknown[]): void { this.log('info', args) }
  debug (...args: unknown[]): void { this.log('debug', args) }
  trace (...args: unknown[]): void { this.log('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options)
  }
}

/** Fastify's childLoggerFactory: a plain child at info and below, a lazy one above. */
export const childLoggerFactory: FastifyChildLoggerFactory = (logger, bindings, options) => {
  const parent = logger as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean }
  if (typeof parent.isLevelEnabled !== 'function' || parent.isLevelEnabled('info')) return logger.child(bindings, options)
  return new LazyRequestLogger(parent as LevelLogger, bindings, options) as unknown as FastifyBaseLogger
}
