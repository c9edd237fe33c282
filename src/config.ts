import { FileTooLarge, readFileBounded } from './bounded-file.js'
import { InvalidKeyError, signingKeyOf, type SigningKey } from './domain/examiner/signature.js'
import { publicKeyEntry, verifyingKeysOf } from './domain/examiner/verify-report.js'
import { join, resolve } from 'node:path'
import { DEFAULT_JOURNAL_BYTES } from './domain/journal.js'
import { DEFAULT_HEAP_GROWTH_PERCENT, MAX_HEAP_GROWTH_PERCENT } from './heap-growth.js'
import { DEFAULT_LOG_BUFFER_BYTES, MAX_LOG_BUFFER_BYTES, MIN_LOG_BUFFER_BYTES } from './log-stream.js'
import { MAX_MAX_WORLDS, MAX_WORLD_TTL_SECONDS, MAX_WORLDS_BYTES } from './schemas/worlds.js'
import { MAX_REQUESTS_IN_PROGRESS, REQUESTS_IN_PROGRESS } from './domain/worlds/request-turns.js'
import { PACKAGE_VERSION, ROOT } from './package-root.js'

/**
 * Settings of the sandbox. This is the only module that reads the environment
 * (`loadConfig(process.env)` in the entry points); everything else receives a Config.
 */

export interface Config {
  port: number
  host: string
  /** SQLite file, or ':memory:'. */
  db: string
  /** Fixture file that seeds an empty database and that reset returns to. */
  fixtures: string
  /** Seed from the fixture at every start, even over existing data. */
  resetOnStart: boolean
  logLevel: string
  /** Pretty, human-readable logs (default: when stdout is a terminal). */
  prettyLogs: boolean
  /** What log lines waiting for standard output may take (log-stream.ts). */
  logBufferBytes: number
  migrationsDir: string
  version: string
  /** When set, every control call but health needs `Authorization: Bearer <token>`. */
  controlToken: string | undefined
  /**
   * Host names the control plane answers besides loopback names, IP addresses and `host`
   * (lower-case; `.example.com` also takes its subdomains; `*` any name). See src/plugins/control-guard.ts.
   */
  allowedHosts: string[]
  /** Entries the request journal keeps. */
  journalSize: number
  /** Bytes the request journal may hold (its accounted memory); the oldest entries are dropped first. */
  journalBytes: number
  /**
   * How far the JavaScript heap may grow past its live size before a full collection, in percent
   * (0: V8's own choice). Applied by the `serve` command only: it is process-wide.
   */
  heapGrowthPercent: number
  /** Start the activity simulator at start-up (real time): changes per minute and seed. */
  simulator: { ratePerMinute: number; seed: number } | undefined
  /**
   * Worlds created besides the default one: how many at once, the memory they may take together,
   * each one's bound unless it asks for another (worldMaxBytes; at most maxBytes), their idle time to live.
   */
  worlds: { max: number, maxBytes: number, worldMaxBytes: number, ttlSeconds: number, requestsInProgress?: number }
  /** The Ed25519 key ended sessions' reports are signed with (SANDBOX_SIGNING_KEY); none: unsigned. */
  signingKey: SigningKey | undefined
  /** Who holds the signing key, as signed reports name their signer (SANDBOX_SIGNER_NAME). */
  signerName: string
  /** Public keys that signed reports before the current one (SANDBOX_SIGNING_KEYS_PREVIOUS), published beside it for rotation. */
  previousSigningKeys: PublishedKey[]
  /** PostgreSQL's URL (SANDBOX_DATABASE_URL): hosted mode, the default world's data kept there for every instance. */
  databaseUrl: string | undefined
  /** Hosted mode: how the other instances reach this one (SANDBOX_INSTANCE_URL; default: the address it listens on). */
  instanceUrl: string | undefined
  /** Hosted mode: how long an instance's lease on a world it owns lasts unless renewed (SANDBOX_HOSTED_LEASE_MS). */
  hostedLeaseMs: number
  /** Hosted mode: idle seconds after which an instance gives up a world it owns (SANDBOX_HOSTED_IDLE_RELEASE_SECONDS; 0: kept). */
  hostedIdleReleaseSeconds: number
  /** Hosted mode: how long PostgreSQL may take (SANDBOX_PG_STATEMENT_TIMEOUT_MS, SANDBOX_PG_CONNECT_TIMEOUT_MS) and wait at start (SANDBOX_PG_START_WAIT_SECONDS). */
  postgres: { statementTimeoutMs: number, connectTimeoutMs: number, startWaitSeconds: number }
  /** After SIGTERM or SIGINT, how long requests in flight may take before they are answered 503 (SANDBOX_DRAIN_SECONDS). */
  drainSeconds: number
}

export class ConfigError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

export { PACKAGE_VERSION, ROOT } from './package-root.js'

/** Largest SANDBOX_JOURNAL_BYTES accepted: 1 GiB. */
const MAX_JOURNAL_BYTES = 1024 * 1024 * 1024
/** Default bound on the memory of the worlds created: 1 GiB (at most 64 GiB). */
const DEFAULT_WORLDS_BYTES = 1024 * 1024 * 1024
/** Default bound on one world's data (and, in hosted mode, the default world's): 64 MiB, never above the bound on them all. */
const DEFAULT_WORLD_BYTES = 64 * 1024 * 1024
/** Worlds at once by default (the default world not counted). */
const DEFAULT_MAX_WORLDS = 100
/** A created world's default idle time to live (the longest allowed is 30 days). */
const DEFAULT_WORLD_TTL_SECONDS = 3600
/** A world given up is taken again in milliseconds (a demo-sized world): ten idle minutes keep a partner's test run on one owner. */
const DEFAULT_HOSTED_IDLE_RELEASE_SECONDS = 600
const MAX_HOSTED_IDLE_RELEASE_SECONDS = 86_400
/** An owner that stops (kill -9) leaves its worlds to the next request's instance within this lease. */
const DEFAULT_HOSTED_LEASE_MS = 2000
const MAX_HOSTED_LEASE_MS = 60_000
const MIN_HOSTED_LEASE_MS = 500

/** What signed reports name as their signer when SANDBOX_SIGNER_NAME is not set. */
export const UNNAMED_SIGNER = 'unnamed (SANDBOX_SIGNER_NAME not set)'
/** PostgreSQL's bounds: a statement or a lock wait, a new connection, the wait for it at start. */
const DEFAULT_PG_STATEMENT_TIMEOUT_MS = 5000
const MAX_PG_STATEMENT_TIMEOUT_MS = 600_000
const DEFAULT_PG_CONNECT_TIMEOUT_MS = 3000
const MAX_PG_CONNECT_TIMEOUT_MS = 60_000
const DEFAULT_PG_START_WAIT_SECONDS = 60
const MAX_PG_START_WAIT_SECONDS = 3600
/** In-flight requests' time after a stop signal. */
const DEFAULT_DRAIN_SECONDS = 10
const MAX_DRAIN_SECONDS = 600

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** Documented settings: environment name, default, meaning (also printed by `--help`). */
export const SETTINGS = [
  { env: 'PORT', default: '8080', meaning: 'TCP port to listen on (0 picks a free port)' },
  { env: 'HOST', default: '127.0.0.1', meaning: 'address to bind; 0.0.0.0 in containers' },
  { env: 'SANDBOX_DB', default: './data/sandbox.db', meaning: 'SQLite database file, or :memory:' },
  { env: 'SANDBOX_FIXTURES', default: '<package>/fixtures/demo.json', meaning: 'fixture that seeds an empty database and that reset returns to' },
  { env: 'SANDBOX_RESET_ON_START', default: 'false', meaning: 'true: seed from the fixture at every start, even over existing data' },
  { env: 'LOG_LEVEL', default: 'info', meaning: `one of ${LOG_LEVELS.join(', ')}` },
  { env: 'LOG_PRETTY', default: 'when stdout is a terminal', meaning: 'true: readable logs; false: JSON lines' },
  { env: 'LOG_BUFFER_BYTES', default: String(DEFAULT_LOG_BUFFER_BYTES), meaning: `JSON log lines that may wait in memory while standard output is not read, in bytes (${MIN_LOG_BUFFER_BYTES} to ${MAX_LOG_BUFFER_BYTES}); past it lines are dropped and counted` },
  { env: 'SANDBOX_CONTROL_TOKEN', default: '(none)', meaning: 'when set, control calls need Authorization: Bearer <token>' },
  { env: 'SANDBOX_ALLOWED_HOSTS', default: '(none)', meaning: 'host names the control API answers besides localhost and IP addresses (comma-separated; .example.com: its subdomains too; *: any)' },
  { env: 'SANDBOX_JOURNAL_SIZE', default: '1000', meaning: 'request journal entries kept (oldest dropped)' },
  { env: 'SANDBOX_JOURNAL_BYTES', default: String(DEFAULT_JOURNAL_BYTES), meaning: 'memory the request journal may hold, in bytes (oldest dropped)' },
  { env: 'SANDBOX_HEAP_GROWTH_PERCENT', default: String(DEFAULT_HEAP_GROWTH_PERCENT), meaning: `how far the heap grows past its live size before a full collection (0: V8's own choice; at most ${MAX_HEAP_GROWTH_PERCENT})` },
  { env: 'SANDBOX_MAX_WORLDS', default: String(DEFAULT_MAX_WORLDS), meaning: `worlds POST /_sandbox/worlds may create, at once (at most ${MAX_MAX_WORLDS})` },
  { env: 'SANDBOX_WORLDS_MAX_BYTES', default: String(DEFAULT_WORLDS_BYTES), meaning: 'memory the created worlds (and, in hosted mode, the default world) may take together, in bytes; a write past it answers 507' },
  { env: 'SANDBOX_WORLD_MAX_BYTES', default: String(DEFAULT_WORLD_BYTES), meaning: 'memory one world\'s data may take, in bytes, unless POST /_sandbox/worlds asks for another maxBytes (at most SANDBOX_WORLDS_MAX_BYTES; hosted mode bounds the default world so too); a write past it answers 507' },
  { env: 'SANDBOX_WORLD_REQUESTS', default: String(REQUESTS_IN_PROGRESS), meaning: 'requests of one world in progress at once (the default world\'s too), and started per turn of the event loop (four times as many without a body while no other world has started one for a second); more wait their turn, so that one world at full speed does not starve the others (0: unbounded)' },
  { env: 'SANDBOX_WORLD_TTL_SECONDS', default: String(DEFAULT_WORLD_TTL_SECONDS), meaning: 'idle seconds after which a created world is deleted, unless it asks otherwise (0: kept)' },
  { env: 'SANDBOX_SIGNING_KEY', default: '(none: reports unsigned)', meaning: 'an Ed25519 private key file (PEM), or the PEM text itself: ended sessions\' reports are signed with it' },
  { env: 'SANDBOX_SIGNER_NAME', default: UNNAMED_SIGNER, meaning: 'who holds the signing key (a partner programme, a partner team): signed reports name it as their signer' },
  { env: 'SANDBOX_SIGNING_KEYS_PREVIOUS', default: '(none)', meaning: 'a PEM file (or the PEM text) of the public keys that signed reports before the current key: published by GET /_sandbox/signing-keys, so those reports still verify' },
  { env: 'SANDBOX_DATABASE_URL', default: '(none: SQLite only)', meaning: 'postgres://user:password@host:port/database: hosted mode, any number of instances keep every world there, each world owned by one of them at a time' },
  { env: 'SANDBOX_INSTANCE_URL', default: 'http://<host>:<port> listened on', meaning: 'hosted mode: the URL the other instances forward a world\'s requests to this one by (0.0.0.0: the machine\'s host name)' },
  { env: 'SANDBOX_HOSTED_LEASE_MS', default: String(DEFAULT_HOSTED_LEASE_MS), meaning: `hosted mode: how long an owner holds its worlds without renewing (${MIN_HOSTED_LEASE_MS} to ${MAX_HOSTED_LEASE_MS}): a stopped owner's worlds are taken over within it` },
  { env: 'SANDBOX_HOSTED_IDLE_RELEASE_SECONDS', default: String(DEFAULT_HOSTED_IDLE_RELEASE_SECONDS), meaning: 'hosted mode: idle seconds after which an instance gives up a world it owns, freeing its memory (0: kept)' },
  { env: 'SANDBOX_PG_STATEMENT_TIMEOUT_MS', default: String(DEFAULT_PG_STATEMENT_TIMEOUT_MS), meaning: 'hosted mode: the longest a PostgreSQL statement or lock wait may take before the request answers 503 (statement_timeout and lock_timeout; the client gives up 500 ms later)' },
  { env: 'SANDBOX_PG_CONNECT_TIMEOUT_MS', default: String(DEFAULT_PG_CONNECT_TIMEOUT_MS), meaning: 'hosted mode: the longest a new PostgreSQL connection, or the wait for a free one, may take' },
  { env: 'SANDBOX_PG_START_WAIT_SECONDS', default: String(DEFAULT_PG_START_WAIT_SECONDS), meaning: 'hosted mode: how long a start waits for PostgreSQL to answer (tries again with backoff, a line each), then exits 1' },
  { env: 'SANDBOX_DRAIN_SECONDS', default: String(DEFAULT_DRAIN_SECONDS), meaning: 'after SIGTERM or SIGINT: new requests are refused (503 with Retry-After), requests in flight get this long, then those left are answered 503 with Retry-After' },
  { env: 'SANDBOX_SIMULATOR_RATE', default: '(off)', meaning: 'start the agency activity simulator: changes per minute' },
  { env: 'SANDBOX_SIMULATOR_SEED', default: '1', meaning: 'seed of the simulator started by SANDBOX_SIMULATOR_RATE' }
] as const

function parseBool (name: string, value: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true
  if (/^(0|false|no|off)$/i.test(value)) return false
  throw new ConfigError(`${name}=${value} is not a boolean; use true or false`)
}

export type Env = Record<string, string | undefined>

/** A setting that is a whole number from 0 to `max`; the error names the setting and `range`. */
function wholeNumber (env: Env, name: string, fallback: number, max: number, range = `from 0 to ${max}`): number {
  const text = env[name] ?? String(fallback)
  if (!/^\d+$/.test(text) || Number(text) > max) throw new ConfigError(`${name}=${text} is not a whole number ${range}`)
  return Number(text)
}

/** A setting that is a whole number from 1 to `max` (0 would mean no bound at all, which these settings never allow). */
function positive (env: Env, name: string, fallback: number, max: number, unit: string): number {
  const value = wholeNumber(env, name, fallback, max, `${unit} from 1 to ${max}`)
  if (value === 0) throw new ConfigError(`${name}=0 is not a whole number ${unit} from 1 to ${max}`)
  return value
}

/** A name in SANDBOX_ALLOWED_HOSTS: `*`, a host name, or `.domain` for the domain and its subdomains. */
const HOST_NAME = /^\.?[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*\.?$/

function allowedHostsOf (text: string | undefined): string[] {
  const names = (text ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')
  for (const name of names) {
    if (name !== '*' && !HOST_NAME.test(name)) {
      throw new ConfigError(`SANDBOX_ALLOWED_HOSTS: '${name}' is not a host name; list names without scheme or port, separated by commas (sandbox.example.com,.team.example or *)`)
    }
  }
  return names.map((name) => (name.length > 1 && name.endsWith('.') ? name.slice(0, -1) : name))
}

/** A PEM key file is some 120 bytes; anything past this is not one (a file of previous keys holds a few hundred). */
const MAX_KEY_FILE_BYTES = 64 * 1024

/** A public key published for checking reports, by its id (GET /_sandbox/signing-keys). */
export interface PublishedKey {
  keyId: string
  publicKeyPem: string
}

/** The PEM text of a key setting: the text itself when it starts with `-----BEGIN`, else the file it names; `kind` says what it holds. */
function pemOf (name: string, text: string, kind: string): { pem: string, what: string } {
  if (text.trimStart().startsWith('-----BEGIN')) return { pem: text.replace(/\\n/g, '\n'), what: 'the PEM text given' }
  try {
    return { pem: readFileBounded(resolve(text), MAX_KEY_FILE_BYTES).toString('utf8'), what: text }
  } catch (e) {
    if (e instanceof FileTooLarge) throw new ConfigError(`${name}: ${text} is larger than ${MAX_KEY_FILE_BYTES / 1024} KiB, which no ${kind} is`)
    throw new ConfigError(`${name}: cannot read ${text} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); give the path of a ${kind}`)
  }
}

/**
 * SANDBOX_SIGNING_KEY: the PEM text itself when it starts with `-----BEGIN` (its line breaks may
 * be written `\n`, as an environment often must), else the path of a PEM file.
 */
function signingKeyFrom (text: string | undefined): SigningKey | undefined {
  if (text === undefined || text.trim() === '') return undefined
  const { pem, what } = pemOf('SANDBOX_SIGNING_KEY', text, 'PEM Ed25519 private key')
  try {
    return signingKeyOf(pem)
  } catch (e) {
    if (!(e instanceof InvalidKeyError)) throw e
    throw new ConfigError(`SANDBOX_SIGNING_KEY: ${what} ${e.message}`)
  }
}

/**
 * SANDBOX_WORLD_MAX_BYTES: one world's bound. Set above the bound on all worlds it is an error
 * naming both; left unset, its default gives way to a smaller SANDBOX_WORLDS_MAX_BYTES.
 */
function worldMaxBytesFrom (env: Env, maxBytes: number): number {
  const given = env.SANDBOX_WORLD_MAX_BYTES
  if (given === undefined || given === '') return Math.min(DEFAULT_WORLD_BYTES, maxBytes)
  const bytes = wholeNumber(env, 'SANDBOX_WORLD_MAX_BYTES', DEFAULT_WORLD_BYTES, MAX_WORLDS_BYTES, `of bytes from 0 to ${MAX_WORLDS_BYTES} (64 GiB)`)
  if (bytes > maxBytes) {
    throw new ConfigError(`SANDBOX_WORLD_MAX_BYTES=${bytes} is above SANDBOX_WORLDS_MAX_BYTES=${maxBytes}, the bytes all the worlds may take together; lower the one or raise the other`)
  }
  return bytes
}

/** SANDBOX_SIGNING_KEYS_PREVIOUS: one or more PEM keys (public, or private: their public keys), as SANDBOX_SIGNING_KEY is given. */
function previousKeysFrom (text: string | undefined, current: SigningKey | undefined): PublishedKey[] {
  if (text === undefined || text.trim() === '') return []
  const { pem, what } = pemOf('SANDBOX_SIGNING_KEYS_PREVIOUS', text, 'PEM file of Ed25519 public keys')
  let keys: PublishedKey[]
  try {
    keys = verifyingKeysOf(pem).map(publicKeyEntry)
  } catch (e) {
    if (!(e instanceof InvalidKeyError)) throw e
    throw new ConfigError(`SANDBOX_SIGNING_KEYS_PREVIOUS: ${what} ${e.message}`)
  }
  return keys.filter((key, i) => key.keyId !== current?.keyId && keys.findIndex((k) => k.keyId === key.keyId) === i)
}

/** A signer's name: one line of printable text, at most 200 characters. */
function signerNameFrom (text: string): string {
  const name = text.trim()
  // eslint-disable-next-line no-control-regex
  if (name.length > 200 || /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) throw new ConfigError('SANDBOX_SIGNER_NAME must be one line of at most 200 characters, without control characters')
  return name
}

function databaseUrlFrom (text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined
  if (!/^postgres(ql)?:\/\//.test(text)) throw new ConfigError('SANDBOX_DATABASE_URL must be a PostgreSQL URL: postgres://user:password@host:port/database')
  return text
}

function instanceUrlFrom (text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ConfigError(`SANDBOX_INSTANCE_URL=${text} is not a URL; give http://host:port, as the other instances reach this one`)
  }
  if (url.protocol !== 'http:' || url.pathname !== '/' || url.search !== '') throw new ConfigError(`SANDBOX_INSTANCE_URL=${text} must be http://host:port, without a path`)
  return url.origin
}

function hostedLeaseFrom (env: Env): number {
  const range = `of milliseconds from ${MIN_HOSTED_LEASE_MS} to ${MAX_HOSTED_LEASE_MS}`
  const ms = wholeNumber(env, 'SANDBOX_HOSTED_LEASE_MS', DEFAULT_HOSTED_LEASE_MS, MAX_HOSTED_LEASE_MS, range)
  if (ms < MIN_HOSTED_LEASE_MS) throw new ConfigError(`SANDBOX_HOSTED_LEASE_MS=${ms} is not a whole number ${range}`)
  return ms
}

function logBufferBytesFrom (env: Env): number {
  const range = `of bytes from ${MIN_LOG_BUFFER_BYTES} to ${MAX_LOG_BUFFER_BYTES} (1 GiB)`
  const bytes = wholeNumber(env, 'LOG_BUFFER_BYTES', DEFAULT_LOG_BUFFER_BYTES, MAX_LOG_BUFFER_BYTES, range)
  if (bytes < MIN_LOG_BUFFER_BYTES) throw new ConfigError(`LOG_BUFFER_BYTES=${bytes} is not a whole number ${range}`)
  return bytes
}

/** Reads the settings from an environment-like object, with defaults; bad values throw ConfigError. */
export function loadConfig (env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const portText = env.PORT ?? '8080'
  const port = Number(portText)
  if (!/^\d+$/.test(portText) || port > 65535) throw new ConfigError(`PORT=${portText} is not a port number (0-65535)`)
  const logLevel = (env.LOG_LEVEL ?? 'info').toLowerCase()
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL=${env.LOG_LEVEL} is not one of ${LOG_LEVELS.join(', ')}`)
  const dbFile = env.SANDBOX_DB ?? './data/sandbox.db'
  const journalSize = wholeNumber(env, 'SANDBOX_JOURNAL_SIZE', 1000, 1_000_000)
  const journalBytes = wholeNumber(env, 'SANDBOX_JOURNAL_BYTES', DEFAULT_JOURNAL_BYTES, MAX_JOURNAL_BYTES, `of bytes from 0 to ${MAX_JOURNAL_BYTES} (1 GiB)`)
  const heapGrowthPercent = wholeNumber(env, 'SANDBOX_HEAP_GROWTH_PERCENT', DEFAULT_HEAP_GROWTH_PERCENT, MAX_HEAP_GROWTH_PERCENT)
  const maxBytes = wholeNumber(env, 'SANDBOX_WORLDS_MAX_BYTES', DEFAULT_WORLDS_BYTES, MAX_WORLDS_BYTES, `of bytes from 0 to ${MAX_WORLDS_BYTES} (64 GiB)`)
  const worlds = {
    max: wholeNumber(env, 'SANDBOX_MAX_WORLDS', DEFAULT_MAX_WORLDS, MAX_MAX_WORLDS),
    maxBytes,
    worldMaxBytes: worldMaxBytesFrom(env, maxBytes),
    ttlSeconds: wholeNumber(env, 'SANDBOX_WORLD_TTL_SECONDS', DEFAULT_WORLD_TTL_SECONDS, MAX_WORLD_TTL_SECONDS, `of seconds from 0 to ${MAX_WORLD_TTL_SECONDS} (30 days)`),
    requestsInProgress: wholeNumber(env, 'SANDBOX_WORLD_REQUESTS', REQUESTS_IN_PROGRESS, MAX_REQUESTS_IN_PROGRESS)
  }
  const token = env.SANDBOX_CONTROL_TOKEN
  const signingKey = signingKeyFrom(env.SANDBOX_SIGNING_KEY)
  let simulator: Config['simulator']
  if (env.SANDBOX_SIMULATOR_RATE !== undefined && env.SANDBOX_SIMULATOR_RATE !== '') {
    const rate = Number(env.SANDBOX_SIMULATOR_RATE)
    const seed = Number(env.SANDBOX_SIMULATOR_SEED ?? '1')
    if (!(rate > 0 && rate <= 60000)) throw new ConfigError(`SANDBOX_SIMULATOR_RATE=${env.SANDBOX_SIMULATOR_RATE} must be a number of changes per minute above 0 and at most 60000`)
    if (!Number.isInteger(seed)) throw new ConfigError(`SANDBOX_SIMULATOR_SEED=${env.SANDBOX_SIMULATOR_SEED} must be a whole number`)
    simulator = { ratePerMinute: rate, seed }
  }
  return {
    port,
    host: env.HOST ?? '127.0.0.1',
    db: dbFile === ':memory:' ? dbFile : resolve(dbFile),
    fixtures: resolve(env.SANDBOX_FIXTURES ?? join(ROOT, 'fixtures', 'demo.json')),
    resetOnStart: env.SANDBOX_RESET_ON_START === undefined || env.SANDBOX_RESET_ON_START === '' ? false : parseBool('SANDBOX_RESET_ON_START', env.SANDBOX_RESET_ON_START),
    logLevel,
    prettyLogs: env.LOG_PRETTY === undefined ? process.stdout.isTTY === true : parseBool('LOG_PRETTY', env.LOG_PRETTY),
    logBufferBytes: logBufferBytesFrom(env),
    migrationsDir: join(ROOT, 'migrations'),
    version: PACKAGE_VERSION,
    controlToken: token === undefined || token === '' ? undefined : token,
    allowedHosts: allowedHostsOf(env.SANDBOX_ALLOWED_HOSTS),
    journalSize,
    journalBytes,
    heapGrowthPercent,
    simulator,
    worlds,
    signingKey,
    signerName: env.SANDBOX_SIGNER_NAME === undefined || env.SANDBOX_SIGNER_NAME.trim() === '' ? UNNAMED_SIGNER : signerNameFrom(env.SANDBOX_SIGNER_NAME),
    previousSigningKeys: previousKeysFrom(env.SANDBOX_SIGNING_KEYS_PREVIOUS, signingKey),
    databaseUrl: databaseUrlFrom(env.SANDBOX_DATABASE_URL),
    instanceUrl: instanceUrlFrom(env.SANDBOX_INSTANCE_URL),
    hostedLeaseMs: hostedLeaseFrom(env),
    hostedIdleReleaseSeconds: wholeNumber(env, 'SANDBOX_HOSTED_IDLE_RELEASE_SECONDS', DEFAULT_HOSTED_IDLE_RELEASE_SECONDS, MAX_HOSTED_IDLE_RELEASE_SECONDS, `of seconds from 0 to ${MAX_HOSTED_IDLE_RELEASE_SECONDS} (a day)`),
    postgres: {
      statementTimeoutMs: positive(env, 'SANDBOX_PG_STATEMENT_TIMEOUT_MS', DEFAULT_PG_STATEMENT_TIMEOUT_MS, MAX_PG_STATEMENT_TIMEOUT_MS, 'of milliseconds'),
      connectTimeoutMs: positive(env, 'SANDBOX_PG_CONNECT_TIMEOUT_MS', DEFAULT_PG_CONNECT_TIMEOUT_MS, MAX_PG_CONNECT_TIMEOUT_MS, 'of milliseconds'),
      startWaitSeconds: wholeNumber(env, 'SANDBOX_PG_START_WAIT_SECONDS', DEFAULT_PG_START_WAIT_SECONDS, MAX_PG_START_WAIT_SECONDS, `of seconds from 0 to ${MAX_PG_START_WAIT_SECONDS}`)
    },
    drainSeconds: wholeNumber(env, 'SANDBOX_DRAIN_SECONDS', DEFAULT_DRAIN_SECONDS, MAX_DRAIN_SECONDS, `of seconds from 0 to ${MAX_DRAIN_SECONDS}`),
    ...overrides
  }
}
