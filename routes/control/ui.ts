import type { FastifyInstance } from 'fastify'
import type { ControlOptions } from './index.js'

/** The web console at /_sandbox/ui (static files from public/console). */
export default async function consoleUi(_fastify: FastifyInstance, _options: ControlOptions) {}
