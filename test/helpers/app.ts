import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { loadConfig, ROOT, type Config } from '../../src/config.js'
import type { Clock } from '../../src/domain/clock.js'
import type { Fixture } from '../../src/fixture/schema.js'
import { validateFixture } from '../../src/fixture/validate.js'

export interface Teardown {
  teardown(fn: () => unknown): void
}

let demo: Fixture | undefined

/** The committed demo fixture, validated (a fresh copy each call). */
export function demoFixture (): Fixture {
  if (demo === undefined) {
    const result = validateFixture(JSON.parse(readFileSync(join(ROOT, 'fixtures', 'demo.json'), 'utf8')))
    if (!result.ok) throw new Error('demo fixture invalid: ' + JSON.stringify(result.errors.slice(0, 5)))
    demo = result.fixture
  }
  return structuredClone(demo)
}

/**
 * The demo fixture with its main agency's clients copied under new numbers (each copy 10,000 above
 * the last) until `grown` says it is large enough: by its JSON's length, or by its clients.
 */
export function grownDemoFixture (grown: (fixture: Fixture, clients: number) => boolean): Fixture {
  const fixture = demoFixture()
  const agency = fixture.agencies.find((a) => a.agencyId === AGENCY.main)!
  const originals = agency.clients.slice()
  for (let copy = 1; !grown(fixture, agency.clients.length); copy++) {
    for (const c of originals) agency.clients.push({ ...structuredClone(c), clientNumber: c.clientNumber + copy * 10_000 })
  }
  return fixture
}

export function testConfig (overrides: Partial<Config> = {}): Config {
  return loadConfig({ SANDBOX_DB: ':memory:', LOG_LEVEL: 'silent', LOG_PRETTY: 'false' }, overrides)
}

/**
 * With SANDBOX_TEST_DATABASE_URL (test/postgres.ts sets it), each app runs in hosted mode over a
 * PostgreSQL database of its own, created here and dropped after its test.
 */
const overPostgresRun = (process.env.SANDBOX_TEST_DATABASE_URL ?? '') !== ''

/** Why a test of the SQLite file itself (a restart over the same file) is skipped in a run over PostgreSQL. */
export const overPostgres: string | false = overPostgresRun && 'a test of the SQLite file (each app over PostgreSQL has a database of its own)'

async function hostedDatabase (t: Teardown): Promise<Partial<Config>> {
  const server = process.env.SANDBOX_TEST_DATABASE_URL
  if (server === undefined || server === '') return {}
  const name = `sandbox_test_${process.pid}_${++databases}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  // counted by test/hosted/suite-on-postgres.test.ts: proof that the apps ran in hosted mode
  // IF NOT EXISTS is no lock: two test processes creating it at once, one fails on PostgreSQL's catalogue (23505), and it is there
  await admin.query('CREATE TABLE IF NOT EXISTS hosted_test_apps (name text)').catch((e: unknown) => {
    if ((e as { code?: string }).code !== '23505' && (e as { code?: string }).code !== '42P07') throw e
  })
  await admin.query('INSERT INTO hosted_test_apps (name) VALUES ($1)', [name])
  await admin.end()
  t.teardown(async () => {
    const again = new pg.Client({ connectionString: server })
    await again.connect()
    await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await again.end()
  })
  const url = new URL(server)
  url.pathname = `/${name}`
  return { databaseUrl: url.toString() }
}
let databases = 0

/** An app on an in-memory database seeded with the demo fixture (or the given one). */
export async function build (t: Teardown, options: {
  fixture?: Fixture
  config?: Partial<Config>
  clock?: Clock
  collectBodyBuffers?: boolean
  /** Runs before the app is ready: a test adds the hooks it needs to act at a given point of a request. */
  beforeReady?: (app: FastifyInstance) => void
} = {}): Promise<FastifyInstance> {
  const hosted = await hostedDatabase(t)
  const app = await buildApp(testConfig({ ...hosted, ...options.config }), { fixture: options.fixture ?? demoFixture(), clock: options.clock, collectBodyBuffers: options.collectBodyBuffers })
  t.teardown(() => app.close())
  options.beforeReady?.(app)
  await app.ready()
  if (hosted.databaseUrl !== undefined) {
    databaseUrls.set(app, hosted.databaseUrl)
    // hosted mode loads the default world on its first request (its owner takes it then): taken
    // now, so a test that reads app.worlds.default directly finds its data as one process holds it
    await app.inject({ url: '/_sandbox/clock' })
  }
  return app
}

const databaseUrls = new WeakMap<FastifyInstance, string>()

/** One value a query reads from the PostgreSQL database of an app built in a run over PostgreSQL (undefined: the app is on SQLite). */
export async function queryHosted (app: FastifyInstance, sql: string): Promise<unknown> {
  const url = databaseUrls.get(app)
  if (url === undefined) return undefined
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<Record<string, unknown>>(sql)
    return Object.values(rows[0] ?? {})[0]
  } finally {
    await client.end()
  }
}

export const basic = (clientId: string, secret: string) =>
  'Basic ' + Buffer.from(`${clientId}:${secret}`, 'utf8').toString('base64')

/** Demo credentials (README). */
export const DEMO = basic('abc', '123')
export const NORTHWIND = basic('northwind-crm', 'nw-sandbox-secret')
export const IDLE = basic('idle-vendor', 'idle-secret')

/** Demo agencies of integration abc. */
export const AGENCY = { main: 1001, limited: 1002, optedOut: 1003, disconnected: 1004, inactive: 1005, northwindOnly: 2001 } as const

const compiled = new Map<TSchema, ReturnType<typeof TypeCompiler.Compile>>()

/** Errors of `value` against `schema` ([] when valid), as `path: message` lines. */
export function schemaErrors (schema: TSchema, value: unknown): string[] {
  let check = compiled.get(schema)
  if (check === undefined) {
    check = TypeCompiler.Compile(schema)
    compiled.set(schema, check)
  }
  return [...check.Errors(value)].slice(0, 10).map((e) => `${e.path}: ${e.message}`)
}
