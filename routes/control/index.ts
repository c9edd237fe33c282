import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { createHash, timingSafeEqual } from 'node:crypto'
import { ApiError } from '../../src/errors.js'
import { useJsonBodies } from '../../src/http/json-body.js'
import { plainIntegers } from '../../src/plugins/plain-integers.js'
import agencyControl from './agencies.js'
import clientControl from './clients.js'
import timeAndTraffic from './traffic.js'
import sessionControl from './sessions.js'
import worldControl from './world.js'
import consoleUi from './ui.js'
import type { ControlOptions } from './options.js'

export type { ControlOptions } from './options.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

/**
 * The control plane under /_sandbox: its own scope, outside vendor auth and rate limits.
 * With SANDBOX_CONTROL_TOKEN set, every call but health needs `Authorization: Bearer <token>`.
 */
export default async function controlPlane (fastify: FastifyInstance, options: ControlOptions) {
  const { config } = options
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  // Control calls such as POST /reset are often sent with a JSON content type and no body.
  useJsonBodies(app, { emptyIsAbsent: true })

  if (config.controlToken !== undefined) {
    const expected = digest(`Bearer ${config.controlToken}`)
    app.addHook('onRequest', async (request) => {
      // Health stays open for container health checks; the console page loads and then asks for the token.
      const path = request.url.split('?')[0]
      if (path === '/_sandbox/health' || (request.method === 'GET' && (path === '/_sandbox/ui' || path.startsWith('/_sandbox/ui/')))) return
      const given = request.headers.authorization
      if (typeof given !== 'string' || !timingSafeEqual(digest(given.trim()), expected)) {
        throw new ApiError(401, 'control-token', 'Unauthorized',
          'This sandbox protects its control API: send Authorization: Bearer <SANDBOX_CONTROL_TOKEN>', undefined, false,
          { 'www-authenticate': 'Bearer realm="agency-sandbox control"' })
      }
    })
  }

  app.route({
    method: 'GET',
    url: '/health',
    schema: {
      summary: 'Liveness: 200 once the sandbox serves (never needs the control token)',
      response: { 200: Type.Object({ status: Type.Literal('ok'), version: Type.String() }) }
    },
    handler: () => ({ status: 'ok' as const, version: config.version })
  })

  // Ids, limits and statuses in paths and queries: plain digits in range, or 400 (not Ajv's coercion).
  app.addHook('preValidation', plainIntegers)

  // Children inherit the /_sandbox prefix; pass only the dependencies on.
  const deps: ControlOptions = { sandbox: options.sandbox, config }
  await app.register(worldControl, deps)
  await app.register(agencyControl, deps)
  await app.register(clientControl, deps)
  await app.register(timeAndTraffic, deps)
  await app.register(sessionControl, deps)
  await app.register(consoleUi, deps)
}
