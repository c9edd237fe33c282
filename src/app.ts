import Fastify, { type FastifyInstance } from 'fastify'
import partnerApiRoutes from '../routes/partner-api/index.js'
import controlPlane from '../routes/control/index.js'
import type { Config } from './config.js'
import { closeDatabase, openDatabase } from './db/database.js'
import { Clock } from './domain/clock.js'
import { createSandbox, type Sandbox } from './domain/sandbox.js'
import type { Fixture } from './fixture/schema.js'
import { quickStamp, stampOf } from './fixture/stamp.js'
import { childLoggerFactory, loggerOptions } from './logger.js'
import { clientErrorHandler, registerErrorHandling, sendError, toApiError } from './plugins/errors.js'
import { vendorPipeline } from './plugins/vendor.js'
import { observeVendorTraffic } from './plugins/observe.js'
import { guardControlPlane, noSniff } from './plugins/control-guard.js'
import { OneLineRequestLog } from './plugins/request-log.js'
import { lazySerializerFactory, lazyValidatorFactory, VALIDATOR_OPTIONS } from './plugins/lazy-validators.js'
import { API_VERSIONS, apiVersionConstraint } from './versions/index.js'
import { serveDocuments, type DescribeScope } from './plugins/openapi.js'
import { JSON_BODY_LIMIT, useJsonBodies } from './http/json-body.js'
import { releaseBodyBuffers } from './http/body-buffers.js'
import { dateFromSandboxClock } from './http/date-header.js'

export interface AppOptions {
  /** Use this fixture instead of reading config.fixtures (tests, programmatic starts). */
  fixture?: Fixture
  /** What validating `fixture` converted from an earlier format, logged like a fixture file's. */
  fixtureWarnings?: readonly string[]
  clock?: Clock
  /**
   * Free the buffers of request bodies with a minor collection per 8 MiB of them
   * (src/http/body-buffers.ts). It sets V8's expose-gc flag, which is process-wide, so it is off
   * by default: only `serve`, whose process is the sandbox's own, turns it on.
   */
  collectBodyBuffers?: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    sandbox: Sandbox
    /** Every route registered: method, URL and API version (vendor routes). */
    routeTable: RegisteredRoute[]
    /** What the start-up fixture held in an earlier format and was converted, one line per field (empty: nothing). */
    fixtureWarnings: string[]
  }
}

export interface RegisteredRoute {
  method: string
  url: string
  version: string | undefined
}

/**
 * Builds the whole sandbox: database, domain, control plane and vendor API, registered
 * explicitly and in this order. Used by the server, the CLI and the tests.
 */
export async function buildApp (config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  const db = openDatabase({ file: config.db, migrationsDir: config.migrationsDir })
  // The fixture file may be read before the logger exists (seeding at start) or later (the first
  // reset): its warnings are kept for the banner and logged once the logger is there.
  const fixtureWarnings: string[] = [...(options.fixtureWarnings ?? [])]
  const logged: { warn?: (line: string) => void } = {}
  const onFixtureWarning = (line: string) => {
    fixtureWarnings.push(line)
    logged.warn?.(line)
  }
  let sandbox: Sandbox
  try {
    sandbox = await createSandbox({
      db,
      // Read (and validated) only when the database is empty or on reset: starts stay fast.
      fixture: options.fixture ?? (async () => (await import('./fixture/validate.js')).loadFixtureFile(config.fixtures, onFixtureWarning)),
      fixtureSource: options.fixture === undefined ? config.fixtures : '(given at start)',
      fixtureFile: options.fixture === undefined ? { quick: () => quickStamp(config.fixtures), stamp: () => stampOf(config.fixtures) } : undefined,
      reseed: config.resetOnStart,
      clock: options.clock ?? new Clock(),
      journalSize: config.journalSize,
      journalBytes: config.journalBytes
    })
  } catch (e) {
    closeDatabase(db)
    throw e
  }

  const app = Fastify({
    logger: loggerOptions(config),
    logController: new OneLineRequestLog(),
    childLoggerFactory,
    bodyLimit: JSON_BODY_LIMIT,
    connectionTimeout: 60_000,
    requestTimeout: 60_000,
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
    // Requests the HTTP parser refuses (431 headers too large, malformed) answer problem bodies too.
    clientErrorHandler,
    // Router-level failures (bad percent-encoding, over-long path parameters) answer problem bodies too.
    frameworkErrors: (error, _request, reply) => {
      void sendError(reply.header('x-content-type-options', 'nosniff'), toApiError(error))
    },
    ajv: { customOptions: VALIDATOR_OPTIONS },
    schemaController: { compilersFactory: { buildValidator: lazyValidatorFactory() as never, buildSerializer: lazySerializerFactory() as never } }
  })
  app.addConstraintStrategy(apiVersionConstraint as unknown as Parameters<typeof app.addConstraintStrategy>[0])
  app.decorate('sandbox', sandbox)
  app.decorate('fixtureWarnings', fixtureWarnings)
  const fixtureName = options.fixture === undefined ? config.fixtures : '(given at start)'
  logged.warn = (line) => app.log.warn(`fixture ${fixtureName}: ${line}`)
  for (const line of fixtureWarnings) logged.warn(line)
  const routeTable: RegisteredRoute[] = []
  app.decorate('routeTable', routeTable)
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const version = (route.constraints as { apiVersion?: string } | undefined)?.apiVersion
    for (const method of methods) routeTable.push({ method: String(method), url: route.url, version })
  })
  if (config.simulator !== undefined) await sandbox.simulator.start(config.simulator)
  app.addHook('onClose', async () => {
    sandbox.simulator.stop()
    // Requests recorded by examiner sessions and not yet written go in before the database closes.
    sandbox.examiner.close()
    closeDatabase(db)
  })
  registerErrorHandling(app)
  noSniff(app)
  guardControlPlane(app, config)
  dateFromSandboxClock(app)
  useJsonBodies(app, { emptyIsAbsent: false })
  if (options.collectBodyBuffers === true) releaseBodyBuffers(app)
  // The root leads to the console, where everything else is linked.
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/_sandbox/ui/'))
  app.get('/_sandbox', { schema: { hide: true } }, (_request, reply) => reply.redirect('/_sandbox/ui/'))
  observeVendorTraffic(app, sandbox)

  serveDocuments(app, config.version, (docsApp, describe) => registerApi(docsApp, sandbox, config, describe))
  await registerApi(app, sandbox, config)

  return app
}

/**
 * The control plane and the vendor API (one scope per version), in this order. The OpenAPI
 * documents register the same routes on their own instance, with `describe` adding the
 * generator to each scope.
 */
async function registerApi (app: FastifyInstance, sandbox: Sandbox, config: Config, describe?: DescribeScope): Promise<void> {
  await app.register(async function control (scope) {
    if (describe !== undefined) await describe(scope, 'control')
    await scope.register(controlPlane, { prefix: '/_sandbox', sandbox, config })
  })
  for (const version of API_VERSIONS) {
    await app.register(async function vendorApi (vendor) {
      if (describe !== undefined) await describe(vendor, version)
      await vendorPipeline(vendor, { sandbox })
      // every operation the version has (src/versions/operations.ts), with its handler
      await vendor.register(partnerApiRoutes, { sandbox, version })
    })
  }
}
