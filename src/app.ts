import Fastify, { type FastifyInstance } from 'fastify'
import partnerApiRoutes from '../routes/partner-api/index.js'
import controlPlane from '../routes/control/index.js'
import { existsSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ConfigError, ROOT, type Config } from './config.js'
import { ReportRunner } from './domain/examiner/report-runner.js'
import { FixtureRunner } from './domain/worlds/fixture-runner.js'
import { closeDatabase, openDatabase, type Db } from './db/database.js'
import { checkpointAside } from './db/checkpoints.js'
import { Clock } from './domain/clock.js'
import { openDefaultWorld } from './domain/worlds/default-world.js'
import type { Hosting } from './domain/worlds/hosting.js'
import { StartupError } from './startup-error.js'
import { UnitOfWork } from './db/index.js'
import { WorldRegistry } from './domain/worlds/registry.js'
import type { Fixture } from './fixture/schema.js'
import { quickStamp, stampOf } from './fixture/stamp.js'
import { childLoggerFactory, loggerOptions, startupWarnings } from './logger.js'
import { logLinesDropped } from './log-stream.js'
import { clientErrorHandler, registerErrorHandling, sendError, toApiError } from './plugins/errors.js'
import { vendorPipeline } from './plugins/vendor.js'
import { observeVendorTraffic } from './plugins/observe.js'
import { buildRequestContext } from './plugins/request-context.js'
import { takeWorldTurns } from './plugins/world-turns.js'
import { OneLineRequestLog } from './plugins/request-log.js'
import { observeOperations, type Operations } from './plugins/operations.js'
import { Drain } from './plugins/drain.js'
import { requestIdOf } from './http/request-id.js'
import { SandboxMetrics, storageMetrics, worldMetrics } from './metrics/registry.js'
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
  /**
   * Add the process's own figures (CPU, memory, event-loop delay, garbage collection) to
   * /_sandbox/metrics: process-wide observers, so only `serve` turns them on.
   */
  processMetrics?: boolean
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
    // every instance would start it again at its own start, resetting the one the world's owner runs
    throw new ConfigError('SANDBOX_SIMULATOR_RATE: in hosted mode (SANDBOX_DATABASE_URL) each world\'s simulator runs at the world\'s owner; start it once with POST /_sandbox/simulator')
  }
  // The fixture file may be read before the logger exists (seeding at start) or later (the first
  // reset): its warnings are kept for the banner and logged once the logger is there.
  const fixtureWarnings: string[] = [...(options.fixtureWarnings ?? [])]
  const logged: { warn?: (line: string) => void } = {}
  // the same for hosted mode's connections to PostgreSQL (a dropped one is worth a line)
  const storageLog: { warn?: (line: string) => void, info?: (line: string) => void } = {}
  const onFixtureWarning = (line: string) => {
    fixtureWarnings.push(line)
    logged.warn?.(line)
  }
  // Hosted mode: every world kept in PostgreSQL, each served by its owner (ownership.ts, plugins/owner-routing.ts).
  const hosting = config.databaseUrl === undefined ? undefined : await openStorage(config, config.databaseUrl, storageLog)
  const db = hosting?.db ?? openDatabase({ file: config.db, migrationsDir: config.migrationsDir })
  let worlds: WorldRegistry
  let attached: Awaited<ReturnType<Hosting['attach']>> | undefined
  try {
    worlds = await openWorlds(db, config, options, onFixtureWarning, hosting?.records)
    attached = await hosting?.attach(worlds)
  } catch (e) {
    await hosting?.close()
    closeDatabase(db)
    if (hosting !== undefined) closeDatabase(hosting.records)
    throw e
  }
  // the file database's checkpoints run beside the event loop once it is written (db/checkpoints.ts)
  const checkpoints = checkpointAside(db, workerFile('db/checkpoint-worker.js'), {
    started: () => storageLog.info?.(`${config.db}: its log is copied into it on a thread of its own from now on`),
    failed: (reason) => storageLog.warn?.(`${config.db}: ${reason}; its log is copied on the event loop again`)
  })
  const closeStorage = async () => {
    await checkpoints.stop()
    closeDatabase(db)
    await hosting?.close()
  }

  const requestLog = new OneLineRequestLog()
  const app = Fastify({
    logger: loggerOptions(config),
    logController: requestLog,
    genReqId: requestIdOf,
    childLoggerFactory,
    bodyLimit: JSON_BODY_LIMIT,
    connectionTimeout: 60_000,
    requestTimeout: 60_000,
    keepAliveTimeout: 65_000,
    // a request that arrives while the instance drains is answered by the operations hook (503 with Retry-After)
    return503OnClosing: false,
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
  storageLog.info = (line) => app.log.info(line)
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
    // hosted mode: every world held is given back, what it holds written to its log, for the next request's instance
    await hosting?.releaseAll()
    // Requests recorded by examiner sessions and not yet written go in before the database closes.
    await worlds.close()
    await closeStorage()
  })
  app.decorate('closeNow', () => {
    worlds.closeNow()
    closeStorage().catch(() => undefined)
  })
  // the request id, the requests in flight, the drain, the metrics: first thing in the request
  // context's hook, or in one of their own before the hosted hooks (which may wait for PostgreSQL)
  const admit = observeOperations(app, operationsOf(worlds, hosting, attached, options), requestLog, hosting !== undefined)
  registerErrorHandling(app)
  if (hosting !== undefined && attached !== undefined) {
    const { ownership } = attached
    // loaded only here: forwarding (reply-from and its undici) is a tenth of a file-backed start-up
    const { routeToOwners } = await import('./plugins/owner-routing.js')
    await routeToOwners(app, attached.hosted, ownership, hosting.instance)
    app.addHook('onListen', (done) => {
      ownership.address = config.instanceUrl ?? addressOf(app, config.host)
      done()
    })
  }
  takeWorldTurns(app)
  buildRequestContext(app, worlds, config, hosting === undefined ? admit : undefined)
  useJsonBodies(app, { emptyIsAbsent: false })
  if (options.collectBodyBuffers === true) releaseBodyBuffers(app)
  // The root leads to the console, where everything else is linked.
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/_sandbox/ui/'))
  app.get('/_sandbox', { schema: { hide: true } }, (_request, reply) => reply.redirect('/_sandbox/ui/'))
  observeVendorTraffic(app, requestLog)

  serveDocuments(app, config.version, (docsApp, describe) => registerApi(docsApp, worlds, config, describe))
  await registerApi(app, worlds, config)

  return app
}

/** The operator's view of the instance (src/plugins/operations.ts): its metrics, its health, its drain. */
function operationsOf (worlds: WorldRegistry, hosting: Hosting | undefined, attached: Awaited<ReturnType<Hosting['attach']>> | undefined, options: AppOptions): Operations {
  const metrics = new SandboxMetrics()
  worldMetrics(metrics, {
    worlds: () => [worlds.default, ...worlds.list()],
    tenants: () => worlds.tenants.list().length,
    alive: (id) => id === worlds.default.id || worlds.get(id) !== undefined
  })
  if (hosting !== undefined) storageMetrics(metrics, hosting.storage)
  if (attached !== undefined) metrics.gauge('sandbox_worlds_owned', 'Worlds this instance owns now (hosted mode): their leases held, renewed together', () => [{ value: attached.ownership.count }])
  if (options.processMetrics === true) metrics.withProcessMetrics()
  metrics.counter('sandbox_log_lines_dropped_total', 'Log lines dropped because standard output was not read (LOG_BUFFER_BYTES) or was gone', () => [{ value: logLinesDropped() }])
  return {
    metrics,
    drain: new Drain(),
    async problems () {
      if (hosting === undefined) return []
      const probe = await hosting.storage.probe.check()
      return probe.ok ? [] : [probe.problem]
    },
    // hosted mode: every world held given back, what it holds written to its log, for the next request's instance
    async handOver () {
      await hosting?.releaseAll()
    }
  }
}

/**
 * Hosted mode's storage: PostgreSQL waited for (SANDBOX_PG_START_WAIT_SECONDS, a line per attempt),
 * migrated, and the settings every instance shares agreed (the default world is read from its
 * log by the first request this instance answers for it). A start that fails on PostgreSQL's side says
 * so in one line (StartupError), with no stack trace.
 */
async function openStorage (config: Config, url: string, storageLog: { warn?: (line: string) => void }): Promise<Hosting> {
  // loaded only in hosted mode: the PostgreSQL client stays out of every other start
  const { waitUntilReachable, whereOf } = await import('./db/postgres/probe.js')
  const { openHosting } = await import('./domain/worlds/hosting.js')
  const bounds = { statementTimeoutMs: config.postgres.statementTimeoutMs, connectTimeoutMs: config.postgres.connectTimeoutMs }
  await waitUntilReachable(url, { totalMs: config.postgres.startWaitSeconds * 1000, attemptMs: bounds.connectTimeoutMs, notice: startupWarnings(config) })
  try {
    return await openHosting({
      url,
      leaseMs: config.hostedLeaseMs,
      idleReleaseMs: config.hostedIdleReleaseSeconds * 1000,
      bounds,
      onError: (line) => storageLog.warn?.(line),
      // one signing key per programme: an instance with another refuses to start
      agreed: (await import('./domain/worlds/agreed-settings.js')).instanceSettings(config.signingKey?.keyId),
      refuse: (message) => new ConfigError(message),
      migrationsDir: config.migrationsDir,
      postgresMigrationsDir: join(config.migrationsDir, 'postgres')
    })
  } catch (e) {
    // PostgreSQL's refusals (errors with a code) and lost connections, not this program's faults
    const fromStorage = e instanceof Error && (typeof (e as { code?: unknown }).code === 'string' || /timeout|terminated|connect/i.test(e.message))
    if (e instanceof StartupError || !fromStorage) throw e
    throw new StartupError(`hosted mode could not start over PostgreSQL at ${whereOf(url)}: ${e.message}`)
  }
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

/** How the other instances reach this one (hosted mode): the address it listens on, the machine's name for any address. */
function addressOf (app: FastifyInstance, host: string): string {
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const name = host === '0.0.0.0' || host === '::' ? hostname() : host.includes(':') ? `[${host}]` : host
  return `http://${name}:${port}`
}

/**
 * The default world over the process's database, and the registry of the worlds created beside it
 * (hosted mode: `records` holds its examiner sessions, and its first owner seeds it: ownership.ts).
 */
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
    seed: records === undefined ? 'now' : 'by-owner',
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
