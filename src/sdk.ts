import { loadConfig, type Config } from './config.js'
import type { AgencyPatch } from './domain/sandbox.js'
import type { FaultInput, FaultRule } from './domain/faults.js'
import type { JournalEntry, JournalFilter } from './domain/journal.js'
import type { ClockState } from './domain/clock.js'
import type { Fixture, FixtureClient } from './fixture/schema.js'
import { startServer } from './server.js'

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
  journalSize?: number
}

export class ControlError extends Error {
  constructor(readonly status: number, readonly body: unknown, method: string, path: string) {
    super(`${method} ${path} answered ${status}: ${typeof body === 'string' ? body : JSON.stringify(body)}`)
    this.name = 'ControlError'
  }
}

export interface Control {
  health(): Promise<{ status: string; version: string }>
  info(): Promise<Record<string, unknown>>
  reset(fixture?: Fixture): Promise<unknown>
  state(): Promise<Fixture>
  clock: {
    get(): Promise<ClockState>
    set(now: string | Date, frozen?: boolean): Promise<ClockState>
    freeze(): Promise<ClockState>
    advance(seconds: number): Promise<ClockState>
  }
  faults: {
    add(rule: FaultInput): Promise<FaultRule>
    list(): Promise<FaultRule[]>
    remove(id: string): Promise<void>
    clear(): Promise<void>
  }
  requests: {
    list(filter?: JournalFilter): Promise<JournalEntry[]>
    clear(): Promise<void>
  }
  agencies: {
    patch(agencyId: number, patch: AgencyPatch): Promise<Record<string, unknown>>
    writes(agencyId: number, filter?: { kind?: string; status?: string; clientNumber?: number }): Promise<Record<string, unknown>[]>
    subscription(clientId: string, agencyId: number, patch: { scopes?: string[]; optedOut?: boolean }): Promise<unknown>
  }
  clients: {
    get(agencyId: number, clientNumber: number): Promise<FixtureClient>
    put(agencyId: number, clientNumber: number, client: unknown): Promise<FixtureClient>
    patch(agencyId: number, clientNumber: number, patch: unknown): Promise<FixtureClient>
    delete(agencyId: number, clientNumber: number): Promise<FixtureClient>
  }
}

/** A typed client of the control API of a running sandbox. */
export function controlClient(baseUrl: string, token?: string): Control {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {}
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(baseUrl + '/_sandbox' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    const parsed: unknown = text === '' ? undefined : /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text
    if (!res.ok) throw new ControlError(res.status, parsed, method, path)
    return parsed as T
  }
  const qs = (q: object) => {
    const entries = Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)])
    return entries.length === 0 ? '' : '?' + new URLSearchParams(entries).toString()
  }
  return {
    health: () => call('GET', '/health'),
    info: () => call('GET', '/info'),
    reset: (fixture) => call('POST', '/reset', fixture),
    state: () => call('GET', '/state'),
    clock: {
      get: () => call('GET', '/clock'),
      set: (now, frozen) => call('PUT', '/clock', { now: now instanceof Date ? now.toISOString() : now, ...(frozen === undefined ? {} : { frozen }) }),
      freeze: () => call('PUT', '/clock', { frozen: true }),
      advance: (seconds) => call('POST', '/clock/advance', { seconds })
    },
    faults: {
      add: (rule) => call('POST', '/faults', rule),
      list: () => call('GET', '/faults'),
      remove: (id) => call('DELETE', `/faults/${encodeURIComponent(id)}`),
      clear: () => call('DELETE', '/faults')
    },
    requests: {
      list: (filter = {}) => call('GET', '/requests' + qs(filter)),
      clear: () => call('DELETE', '/requests')
    },
    agencies: {
      patch: (agencyId, patch) => call('PATCH', `/agencies/${agencyId}`, patch),
      writes: (agencyId, filter = {}) => call('GET', `/agencies/${agencyId}/writes` + qs(filter)),
      subscription: (clientId, agencyId, patch) => call('PATCH', `/integrations/${encodeURIComponent(clientId)}/agencies/${agencyId}`, patch)
    },
    clients: {
      get: (agencyId, n) => call('GET', `/agencies/${agencyId}/clients/${n}`),
      put: (agencyId, n, client) => call('PUT', `/agencies/${agencyId}/clients/${n}`, client),
      patch: (agencyId, n, patch) => call('PATCH', `/agencies/${agencyId}/clients/${n}`, patch),
      delete: (agencyId, n) => call('DELETE', `/agencies/${agencyId}/clients/${n}`)
    }
  }
}

export interface StartedSandbox {
  /** Base URL of the vendor API, e.g. http://127.0.0.1:53124 */
  url: string
  control: Control
  close(): Promise<void>
}

/** Starts a sandbox in this process on a free port with an in-memory database. */
export async function startSandbox(options: StartOptions = {}): Promise<StartedSandbox> {
  const env: Record<string, string | undefined> = { SANDBOX_DB: ':memory:', LOG_LEVEL: 'silent', LOG_PRETTY: 'false', PORT: '0' }
  if (typeof options.fixture === 'string') env.SANDBOX_FIXTURES = options.fixture
  const overrides: Partial<Config> = {}
  if (options.port !== undefined) overrides.port = options.port
  if (options.host !== undefined) overrides.host = options.host
  if (options.db !== undefined) overrides.db = options.db
  if (options.logLevel !== undefined) overrides.logLevel = options.logLevel
  if (options.controlToken !== undefined) overrides.controlToken = options.controlToken
  if (options.journalSize !== undefined) overrides.journalSize = options.journalSize
  const config = loadConfig(env, overrides)
  const server = await startServer(config, typeof options.fixture === 'object' ? { fixture: options.fixture } : {})
  return { url: server.url, control: controlClient(server.url, options.controlToken), close: server.close }
}
