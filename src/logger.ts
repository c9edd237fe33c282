import type { FastifyServerOptions } from 'fastify'
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
