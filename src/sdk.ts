import { loadConfig, type Config } from './config.js'
import type { Fixture } from './fixture/schema.js'
import { controlClient, type Control } from './sdk/control-client.js'
import { createWorld, type SandboxWorld, type WorldOptions } from './sdk/world.js'
import { startServer } from './server.js'

export {
  controlClient, ControlError, type Control, type ReportFormat, type ResetOptions, type ResetPart, type Sessions, type WriteView,
  type TenantCreated, type Tenants, type TenantView, type WorldCreated, type Worlds, type WorldView, type WorldWithSecrets
} from './sdk/control-client.js'
export { createWorld, type SandboxWorld, type WorldOptions } from './sdk/world.js'
export type { Finding, JudgedBy, Mirror, Report, ReportSignature, ReportSummary, ReportWorld, Session, SessionStart, Signer, SigningKeysView, SigningKeyView } from './schemas/examiner.js'
export { InvalidKeyError, type SignedReport } from './domain/examiner/signature.js'
export { verifyReport, type ReportVerification, type VerificationFailure, type VerifyingKeys } from './domain/examiner/verify-report.js'

/**
 * Programmatic start for partners' own test suites:
 *
 *   const sandbox = await startSandbox()
 *   // point the integration at sandbox.url, then:
 *   await sandbox.control.agencies.patch(1004, { connected: true })
 *   await sandbox.close()
 *
 * Defaults: a free port on 127.0.0.1, an in-memory database, the demo fixture, no logs.
 */
export interface StartOptions {
  /** A fixture document, or the path of a fixture file. */
  fixture?: Fixture | string
  port?: number
  host?: string
  /** SQLite file; default ':memory:'. */
  db?: string
  logLevel?: string
  controlToken?: string
  /** Host names the control API answers besides localhost and IP addresses (SANDBOX_ALLOWED_HOSTS). */
  allowedHosts?: string[]
  journalSize?: number
  /** Bytes the request journal may hold (default 16 MiB). */
  journalBytes?: number
  /** Sign ended sessions' reports with this Ed25519 private key: a PEM file's path, or the PEM text (SANDBOX_SIGNING_KEY). */
  signingKey?: string
}

export interface StartedSandbox {
  /** Base URL of the vendor API, e.g. http://127.0.0.1:53124 */
  url: string
  /** The control client of the default world. */
  control: Control
  /**
   * A new world of this sandbox (POST /_sandbox/worlds): its own data, clock, faults, journal and
   * sessions, reached by its own credentials, so tests can run in parallel against one sandbox.
   */
  world(options?: WorldOptions): Promise<SandboxWorld>
  close(): Promise<void>
}

/**
 * A fixture document given in memory is validated as a file is (it may come from JSON, written
 * for an earlier format): values of that format are converted, with their warnings logged, and
 * an invalid one throws FixtureError with its errors grouped.
 */
async function validated (fixture: Fixture): Promise<{ fixture: Fixture; fixtureWarnings: string[] }> {
  const { FixtureError, validateFixture } = await import('./fixture/validate.js')
  const result = validateFixture(fixture, { countLimit: Number.POSITIVE_INFINITY })
  if (!result.ok) throw new FixtureError('(given to startSandbox)', result.errors, result.report)
  return { fixture: result.fixture, fixtureWarnings: result.warnings }
}

/** Starts a sandbox in this process on a free port with an in-memory database. */
export async function startSandbox (options: StartOptions = {}): Promise<StartedSandbox> {
  const env: Record<string, string | undefined> = { SANDBOX_DB: ':memory:', LOG_LEVEL: 'silent', LOG_PRETTY: 'false', PORT: '0' }
  if (typeof options.fixture === 'string') env.SANDBOX_FIXTURES = options.fixture
  if (options.signingKey !== undefined) env.SANDBOX_SIGNING_KEY = options.signingKey
  const overrides: Partial<Config> = {}
  if (options.port !== undefined) overrides.port = options.port
  if (options.host !== undefined) overrides.host = options.host
  if (options.db !== undefined) overrides.db = options.db
  if (options.logLevel !== undefined) overrides.logLevel = options.logLevel
  if (options.controlToken !== undefined) overrides.controlToken = options.controlToken
  if (options.allowedHosts !== undefined) overrides.allowedHosts = options.allowedHosts.map((name) => name.toLowerCase())
  if (options.journalSize !== undefined) overrides.journalSize = options.journalSize
  if (options.journalBytes !== undefined) overrides.journalBytes = options.journalBytes
  const config = loadConfig(env, overrides)
  const server = await startServer(config, typeof options.fixture === 'object' ? await validated(options.fixture) : {})
  return {
    url: server.url,
    control: controlClient(server.url, options.controlToken),
    world: (worldOptions) => createWorld(server.url, worldOptions, options.controlToken),
    close: server.close
  }
}
