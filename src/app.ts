import Fastify, { type FastifyInstance } from 'fastify'
import partnerApiRoutes from '../routes/partner-api/index.js'
import controlPlane from '../routes/control/index.js'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ConfigError, ROOT, type Config } from './config.js'
import { ReportRunner } from './domain/examiner/report-runner.js'
import { FixtureRunner } from './domain/worlds/fixture-runner.js'
import { closeDatabase, openDatabase, type Db } from './db/database.js'
import { Clock } from './domain/clock.js'
import { openDefaultWorld } from './domain/worlds/default-world.js'
import type { HostedWorlds } from './domain/worlds/hosted-worlds.js'
import { UnitOfWork } from './db/index.js'
import { commitBeforeAnswering, shareWorlds, waitForReplica } from './plugins/replication.js'
import { WorldRegistry } from './domain/worlds/registry.js'
import type { Fixture } from './fixture/schema.js'
import { quickStamp, stampOf } from './fixture/stamp.js'
import { childLoggerFactory, loggerOptions } from './logger.js'
import { clientErrorHandler, registerErrorHandling, sendError, toApiError } from './plugins/errors.js'
import { vendorPipeline } from './plugins/vendor.js'
import { observeVendorTraffic } from './plugins/observe.js'
import { buildRequestContext } from './plugins/request-context.js'
import { takeWorldTurns } from './plugins/world-turns.js'
import { OneLineRequestLog } from './plugins/request-log.js'
import { lazySerializerFactory, lazyValidatorFactory, VALIDATOR_OPTIONS } from './plugins/lazy-validators.js'
import { API_VERSIONS, apiVersionConstraint } from './versions/index.js'
import { serveDocuments, type DescribeScope } from './plugins/openapi.js'
import { JSON_BODY_LIMIT, useJsonBodies } from './http/json-body.js'
import { BodyBytesCollector, exposedCollection, releaseBodyBuffers } from './http/body-buffers.js'

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
    /** Every world of the process; `worlds.default` is the one the unprefixed control routes and the demo credentials reach. */
    worlds: WorldRegistry
    /** Every route registered: method, URL and API version (vendor routes). */
    routeTable: RegisteredRoute[]
    /** What the start-up fixture held in an earlier format and was converted, one line per field (empty: nothing). */
    fixtureWarnings: string[]
    /**
     * Ends everything at once, without waiting for requests in flight: what examiner sessions hold
     * is written and the database closed (a shutdown whose graceful close takes too long).
     */
    closeNow: () => void
  }
}

/**
 * A created world keeps a sixteenth of the journal memory the default world may (1 MiB by
 * default) and 1 MiB of cached answers of each kind: a hundred worlds stay within the memory of a
 * few default ones, and a world's reads are answered as fast (a demo-sized world fits whole).
 */
const CREATED_WORLD_SHARE = 16
const CREATED_WORLD_CACHE_BYTES = 1024 * 1024

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
  if (config.databaseUrl !== undefined && config.simulator !== undefined) {
    // every instance would start it again at its own start, resetting the one the instances share
    throw new ConfigError('SANDBOX_SIMULATOR_RATE: in hosted mode (SANDBOX_DATABASE_URL) the instances share one simulator per world; start it once with POST /_sandbox/simulator')
  }
  // The fixture file may be read before the logger exists (seeding at start) or later (the first
  // reset): its warnings are kept for the banner and logged once the logger is there.
  const fixtureWarnings: string[] = [...(options.fixtureWarnings ?? [])]
  const logged: { warn?: (line: string) => void } = {}
  // the same for hosted mode's connections to PostgreSQL (a dropped one is worth a line)
  const storageLog: { warn?: (line: string) => void } = {}
  const onFixtureWarning = (line: string) => {
    fixtureWarnings.push(line)
    logged.warn?.(line)
  }
  // Hosted mode: the worlds' data comes from PostgreSQL, into databases in memory (replica.ts, hosted-worlds.ts).
  const hosting = config.databaseUrl === undefined
    ? undefined
    // loaded only in hosted mode: the PostgreSQL client stays out of every other start
    : await (await import('./domain/worlds/hosting.js')).openHosting({
      url: config.databaseUrl,
      reads: config.hostedReads,
      copyIdleMs: config.hostedCopyIdleSeconds * 1000,
      onError: (line) => storageLog.warn?.(line),
      // one signing key per programme: an instance with another refuses to start
      agreed: (await import('./domain/worlds/agreed-settings.js')).instanceSettings(config.signingKey?.keyId),
      refuse: (message) => new ConfigError(message),
      migrationsDir: config.migrationsDir,
      postgresMigrationsDir: join(config.migrationsDir, 'postgres')
    })
  const db = hosting?.db ?? openDatabase({ file: config.db, migrationsDir: config.migrationsDir })
  // Hosted mode shares examiner sessions in PostgreSQL (shared-sessions.ts); until then a world's own
  // examiner keeps its rows here, beside the replica, never in the database whose commits are logged.
  const records = hosting === undefined ? undefined : openDatabase({ file: ':memory:', migrationsDir: config.migrationsDir })
  let worlds: WorldRegistry
  let hosted: HostedWorlds | undefined
  try {
    worlds = await openWorlds(db, config, options, onFixtureWarning, records)
    hosted = await hosting?.attach(worlds)
  } catch (e) {
    await hosting?.abandon().catch(() => undefined)
    await hosting?.close()
    closeDatabase(db)
    if (records !== undefined) closeDatabase(records)
    throw e
  }
  const closeStorage = async () => {
    closeDatabase(db)
    if (records !== undefined) closeDatabase(records)
    await hosting?.close()
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
  app.decorate('worlds', worlds)
  app.decorate('fixtureWarnings', fixtureWarnings)
  const fixtureName = options.fixture === undefined ? config.fixtures : '(given at start)'
  logged.warn = (line) => app.log.warn(`fixture ${fixtureName}: ${line}`)
  storageLog.warn = (line) => app.log.warn(line)
  for (const line of fixtureWarnings) logged.warn(line)
  const routeTable: RegisteredRoute[] = []
  app.decorate('routeTable', routeTable)
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const version = (route.constraints as { apiVersion?: string } | undefined)?.apiVersion
    for (const method of methods) routeTable.push({ method: String(method), url: route.url, version })
  })
  if (config.simulator !== undefined) await worlds.default.simulator.start(config.simulator)
  // Work a request may wait on (a simulator's catch-up, a report) stops first, so that request is answered.
  app.addHook('preClose', async () => worlds.stopWork())
  app.addHook('onClose', async () => {
    // Requests recorded by examiner sessions and not yet written go in before the database closes.
    await worlds.close()
    await closeStorage()
  })
  app.decorate('closeNow', () => {
    worlds.closeNow()
    closeStorage().catch(() => undefined)
  })
  registerErrorHandling(app)
  if (hosted !== undefined) commitBeforeAnswering(app)
  if (hosted !== undefined) shareWorlds(app, hosted)
  takeWorldTurns(app)
  buildRequestContext(app, worlds, config, hosted === undefined ? 'here' : 'after-replica')
  if (hosted !== undefined) waitForReplica(app, hosted)
  useJsonBodies(app, { emptyIsAbsent: false })
  if (options.collectBodyBuffers === true) releaseBodyBuffers(app)
  // The root leads to the console, where everything else is linked.
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/_sandbox/ui/'))
  app.get('/_sandbox', { schema: { hide: true } }, (_request, reply) => reply.redirect('/_sandbox/ui/'))
  observeVendorTraffic(app)

  serveDocuments(app, config.version, (docsApp, describe) => registerApi(docsApp, worlds, config, describe))
  await registerApi(app, worlds, config)

  return app
}

/**
 * A worker process's module (the examiner's reports, fixture bodies), as compiled JavaScript:
 * beside this module when it runs from dist/src, else in the package's dist/src (this module is
 * in the bundled CLI, or is a source file under a TypeScript loader, which a worker should not
 * have to load: `npm run build` made it).
 */
function workerFile (path: string): URL {
  const beside = new URL(`./${path}`, import.meta.url)
  return existsSync(fileURLToPath(beside)) ? beside : pathToFileURL(join(ROOT, 'dist', 'src', ...path.split('/')))
}

/** The default world over the process's database, and the registry of the worlds created beside it. */
async function openWorlds (db: Db, config: Config, options: AppOptions, onFixtureWarning: (line: string) => void, records?: Db): Promise<WorldRegistry> {
  const reports = new ReportRunner({ workerFile: workerFile('domain/examiner/report-worker.js') })
  // the pieces of state documents, like request bodies, are freed by a scavenge per 8 MiB of them
  // (src/http/body-buffers.ts): left to V8, 30 MB of them waited for a full collection of 100 ms
  const collect = options.collectBodyBuffers === true ? exposedCollection() : undefined
  const pieces = collect === undefined ? undefined : new BodyBytesCollector(collect)
  const fixtures = new FixtureRunner({ workerFile: workerFile('domain/worlds/fixture-worker.js'), migrationsDir: config.migrationsDir, countBytes: pieces === undefined ? undefined : (bytes) => pieces.count(bytes) })
  const loadFaker = async (seed: number) => {
    const { createFaker, generateClient } = await import('./fixture/generate.js')
    return { faker: createFaker(seed), generateClient }
  }
  // Read (and validated) only when the database is empty or on reset: starts stay fast. At start
  // here, where nothing is answered yet; once requests are, on the fixture worker.
  let answering = false
  const { world, startFixture, seededNow, fixtureMismatch } = await openDefaultWorld({
    db,
    records: records === undefined ? undefined : new UnitOfWork(records),
    fixture: options.fixture ?? (async () => answering
      ? await fixtures.fixtureFile(config.fixtures, onFixtureWarning)
      : (await import('./fixture/validate.js')).loadFixtureFile(config.fixtures, onFixtureWarning)),
    fixtureSource: options.fixture === undefined ? config.fixtures : '(given at start)',
    fixtureFile: options.fixture === undefined ? { quick: () => quickStamp(config.fixtures), stamp: () => stampOf(config.fixtures) } : undefined,
    reseed: config.resetOnStart,
    clock: options.clock ?? new Clock(),
    journalSize: config.journalSize,
    journalBytes: config.journalBytes,
    loadFaker,
    reports,
    requestsInProgress: config.worlds.requestsInProgress,
    checkpoint: (file) => fixtures.checkpoint(file)
  })
  answering = true
  return new WorldRegistry(world, {
    limits: {
      maxWorlds: config.worlds.max,
      maxBytes: config.worlds.maxBytes,
      worldMaxBytes: config.worlds.worldMaxBytes,
      defaultTtlSeconds: config.worlds.ttlSeconds,
      journalSize: config.journalSize,
      journalBytes: Math.ceil(config.journalBytes / CREATED_WORLD_SHARE),
      readModel: { batchCacheBytes: CREATED_WORLD_CACHE_BYTES, listingCacheBytes: CREATED_WORLD_CACHE_BYTES, answerCacheBytes: CREATED_WORLD_CACHE_BYTES },
      requestsInProgress: config.worlds.requestsInProgress
    },
    migrationsDir: config.migrationsDir,
    startFixture,
    loadFaker,
    reports,
    fixtures,
    startUp: { seededNow, fixtureMismatch }
  })
}

/**
 * The control plane and the vendor API (one scope per version), in this order. The OpenAPI
 * documents register the same routes on their own instance, with `describe` adding the
 * generator to each scope.
 */
async function registerApi (app: FastifyInstance, worlds: WorldRegistry, config: Config, describe?: DescribeScope): Promise<void> {
  await app.register(async function control (scope) {
    if (describe !== undefined) await describe(scope, 'control')
    await scope.register(controlPlane, { prefix: '/_sandbox', worlds, config })
  })
  for (const version of API_VERSIONS) {
    await app.register(async function vendorApi (vendor) {
      if (describe !== undefined) await describe(vendor, version)
      await vendorPipeline(vendor)
      // every operation the version has (src/versions/operations.ts), with its handler
      await vendor.register(partnerApiRoutes, { version })
    })
  }
}
