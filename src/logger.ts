import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions, FastifyChildLoggerFactory } from 'fastify/types/logger.js'
import type { Config } from './config.js'

/** pino options: readable on a terminal, JSON lines otherwise; credentials never logged. */
export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return false
  return {
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["proxy-authorization"]', 'headers.authorization', '*.clientSecret'],
      censor: '[redacted]'
    },
    ...(config.prettyLogs
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {})
  }
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/**
 * A request's logger that makes its child (binding the request id) only when a line is logged.
 * Below the info level most requests log nothing, and making a child for each is a few percent
 * of a read's cost.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger & { isLevelEnabled(level: string): boolean },
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options))
  }

  private log(level: Level, args: unknown[]): void {
    if (!this.parent.isLevelEnabled(level)) return
    ;(this.real()[level] as (...a: unknown[]) => void)(...args)
  }

  get level(): string {
    return this.parent.level
  }

  set level(value: string) {
    this.real().level = value
  }

  fatal = ((...args: unknown[]) => this.log('fatal', args)) as FastifyBaseLogger['fatal']
  error = ((...args: unknown[]) => this.log('error', args)) as FastifyBaseLogger['error']
  warn = ((...args: unknown[]) => this.log('warn', args)) as FastifyBaseLogger['warn']
  info = ((...args: unknown[]) => this.log('info', args)) as FastifyBaseLogger['info']
  debug = ((...args: unknown[]) => this.log('debug', args)) as FastifyBaseLogger['debug']
  trace = ((...args: unknown[]) => this.log('trace', args)) as FastifyBaseLogger['trace']
  silent = (() => undefined) as FastifyBaseLogger['silent']

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options)
  }
}

/** Fastify's childLoggerFactory: a plain child at info and below, a lazy one above. */
export const childLoggerFactory: FastifyChildLoggerFactory = (logger, bindings, options) => {
  const parent = logger as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean }
  if (typeof parent.isLevelEnabled !== 'function' || parent.isLevelEnabled('info')) return logger.child(bindings, options)
  return new LazyRequestLogger(parent as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }, bindings, options)
}
