import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { useJsonBodies } from '../../src/http/json-body.js'
import { plainIntegers } from '../../src/plugins/plain-integers.js'
import agencyControl from './agencies.js'
import clientControl from './clients.js'
import timeAndTraffic from './traffic.js'
import sessionControl from './sessions.js'
import signingKeyRoute from './signing-key.js'
import worldControl from './world.js'
import worldsControl from './worlds.js'
import tenantsControl from './tenants.js'
import consoleUi from './ui.js'
import operationsControl from './operations.js'
import { controlTokens, isConsolePage, worldScope } from './tokens.js'
import { grantConsoleCookie, wantsConsoleCookie } from '../../src/plugins/console-cookie.js'
import type { ControlOptions } from './options.js'

export type { ControlOptions } from './options.js'

/**
 * The control plane under /_sandbox: its own scope, outside vendor auth and rate limits. The
 * routes of one world are registered twice: unprefixed for the default world, and under
 * /_sandbox/worlds/{worldId} for any world. With SANDBOX_CONTROL_TOKEN set, every call but health
 * needs `Authorization: Bearer <token>`: the sandbox's token opens everything, a world's token
 * opens that world's routes. A tenant's token, set or not, creates worlds and opens those alone.
 */
export default async function controlPlane (fastify: FastifyInstance, options: ControlOptions) {
  const { config, worlds } = options
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  // Control calls such as POST /reset are often sent with a JSON content type and no body.
  useJsonBodies(app, { emptyIsAbsent: true })
  const tokens = controlTokens(config.controlToken, worlds.tokens)

  // the console's cookie, to the sandbox's administrator only (console-cookie.ts): its page, or its first call the token authorizes
  app.addHook('onSend', (request, reply, payload, done) => {
    if (wantsConsoleCookie(request, isConsolePage(request)) && tokens.administers(request)) grantConsoleCookie(reply)
    done(null, payload)
  })

  // health (no token) and metrics (the administrator's), of the instance itself
  await app.register(operationsControl, { worlds, config, tokens })

  // the public key reports are signed with: no secret, so no token either
  await app.register(signingKeyRoute, { worlds, config })

  // Ids, limits and statuses in paths and queries: plain digits in range, or 400 (not Ajv's coercion).
  app.addHook('preValidation', plainIntegers)

  // Children inherit the /_sandbox prefix; pass only the dependencies on (options holds the prefix too).
  const deps: ControlOptions = { worlds, config }
  await app.register(worldsControl, { ...deps, tokens })
  await app.register(tenantsControl, { ...deps, tokens })
  // the console's page and the sandbox's constants (/meta): no world's data, so a tenant may read them too
  await app.register(async function console (scope) {
    scope.addHook('onRequest', tokens.administratorOrTenant)
    await scope.register(consoleUi, deps)
  })
  await app.register(async function defaultWorld (scope) {
    scope.addHook('onRequest', tokens.sandboxOnly)
    await registerWorldRoutes(scope, deps)
  })
  await app.register(async function anyWorld (scope) {
    worldScope(scope, worlds, tokens)
    await registerWorldRoutes(scope, deps)
  }, { prefix: '/worlds/:worldId' })
}

/**
 * The control routes of one world (the request's: see worldScope). Hosted mode answers them at the
 * world's owner (src/plugins/world-of-request.ts finds them by their URLs under /worlds/{worldId}).
 */
async function registerWorldRoutes (app: FastifyInstance, options: ControlOptions): Promise<void> {
  await app.register(worldControl, options)
  await app.register(agencyControl, options)
  await app.register(clientControl, options)
  await app.register(timeAndTraffic, options)
  await app.register(sessionControl, options)
}
