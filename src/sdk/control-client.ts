import type { Static } from '@sinclair/typebox'
import type { ClockState } from '../domain/clock.js'
import type { CatchUp } from '../domain/simulator.js'
import type { FaultRule } from '../domain/faults.js'
import type { JournalEntry } from '../domain/journal.js'
import type { ResetPart } from '../domain/worlds/world.js'
import type { SimulatorStatus } from '../domain/simulator.js'
import type { Fixture, FixtureAgency, FixtureClient, FixtureIntegration, FixtureOffice, FixtureUser } from '../fixture/schema.js'
import type { Mirror, Report, ReportSummary, Session, SessionStart, SigningKeysView, SigningKeyView } from '../schemas/examiner.js'
import type {
  AgencyPatchBody, AgencyStateSchema, ClientPatchBody, FaultInputBody, RequestsQuery, SimulatorBody, SubscriptionPatchBody,
  WritesQuery, WriteViewSchema
} from '../schemas/control.js'
import type { TenantCreateBody, TenantCreatedSchema, TenantListSchema, TenantPatchBody, TenantSchema, TenantTokenSchema } from '../schemas/tenants.js'
import type { WorldCreateBody, WorldCreatedSchema, WorldListSchema, WorldSchema, WorldWithSecretsSchema } from '../schemas/worlds.js'

/**
 * A typed client of the whole control API (/_sandbox) of a running sandbox, for partners' test
 * suites. Request and answer types come from the schemas the control routes validate with.
 */

export class ControlError extends Error {
  constructor (readonly status: number, readonly body: unknown, method: string, path: string) {
    super(`${method} ${path} answered ${status}: ${typeof body === 'string' ? body : JSON.stringify(body)}`)
    this.name = 'ControlError'
  }
}

/** Parts of the sandbox a reset can keep (everything else returns to the start). */
export type { ResetPart } from '../domain/worlds/world.js'

export interface ResetOptions {
  /** Reset to this fixture instead of the start-up one. */
  fixture?: Fixture
  /** Parts to leave as they are. */
  keep?: ResetPart[]
}

export type WriteView = Static<typeof WriteViewSchema>

/** The forms of an examiner report: JSON (the Report), JUnit XML, or an HTML page. */
export type ReportFormat = 'json' | 'junit' | 'html'

export interface Sessions {
  /** Starts recording the vendor requests of `clientId` (of every integration when absent). */
  start(options?: SessionStart): Promise<Session>
  list(): Promise<Session[]>
  get(id: number): Promise<Session>
  /** Declares what the integration stored for an agency after its sync (compared in the report). */
  mirror(id: number, mirror: Mirror): Promise<{ agencyId: number; clients: number }>
  /** Stops recording; the report is computed now and kept; answers the verdict and the findings without examples. */
  end(id: number): Promise<ReportSummary>
  /** Deletes a session, open or ended, with its report and mirrors. */
  delete(id: number): Promise<void>
  /** The report: the Report object by default, or the JUnit XML or HTML page as text. */
  report(id: number, format?: 'json'): Promise<Report>
  report(id: number, format: 'junit' | 'html'): Promise<string>
  report(id: number, format?: ReportFormat): Promise<Report | string>
  /**
   * The report an ended session kept, as the sandbox serves it: its JSON text, signed when the
   * sandbox has a key (the file to hand over; verifyReport checks it byte for byte). A ControlError
   * 409 while the session is open.
   */
  finalReport(id: number): Promise<string>
  /** Deletes a session, open or ended, with its recorded requests, mirrors and report. */
  delete(id: number): Promise<void>
}

export interface Control {
  health(): Promise<{ status: string; version: string }>
  info(): Promise<Record<string, unknown>>
  /** The versions, scopes, client groups and write kinds this sandbox knows. */
  meta(): Promise<Record<string, unknown>>
  /** The public key ended sessions' reports are signed with (a ControlError 404 when the sandbox signs none). */
  signingKey(): Promise<SigningKeyView>
  /** Every public key this sandbox's reports may be signed with: the current one and the previous ones (rotation). */
  signingKeys(): Promise<SigningKeysView>
  /** A clean slate: data, pending writes, journal, faults, clock, simulator and rate windows return to the start. */
  reset(options?: ResetOptions | Fixture): Promise<unknown>
  state(): Promise<Fixture>
  clock: {
    get(): Promise<ClockState>
    set(now: string | Date, frozen?: boolean): Promise<ClockState>
    freeze(): Promise<ClockState>
    /** With a clock-time simulator, `simulator` says what the advance's catch-up made and skipped. */
    advance(seconds: number): Promise<ClockState & { simulator?: CatchUp }>
    /** Back to real time, running. */
    real(): Promise<ClockState>
  }
  faults: {
    add(rule: Static<typeof FaultInputBody>): Promise<FaultRule>
    list(): Promise<FaultRule[]>
    remove(id: string): Promise<void>
    clear(): Promise<void>
  }
  requests: {
    list(filter?: Static<typeof RequestsQuery>): Promise<JournalEntry[]>
    clear(): Promise<void>
  }
  simulator: {
    start(settings: Static<typeof SimulatorBody>): Promise<SimulatorStatus>
    status(): Promise<SimulatorStatus>
    stop(): Promise<SimulatorStatus>
  }
  integrations: {
    list(): Promise<Record<string, unknown>[]>
    add(integration: FixtureIntegration): Promise<unknown>
    remove(clientId: string): Promise<unknown>
    /** Change or create the integration's subscription to an agency. */
    subscribe(clientId: string, agencyId: number, patch: Static<typeof SubscriptionPatchBody>): Promise<unknown>
    unsubscribe(clientId: string, agencyId: number): Promise<unknown>
  }
  agencies: {
    list(): Promise<Record<string, unknown>[]>
    add(agency: FixtureAgency): Promise<unknown>
    remove(agencyId: number): Promise<unknown>
    patch(agencyId: number, patch: Static<typeof AgencyPatchBody>): Promise<Static<typeof AgencyStateSchema>>
    writes(agencyId: number, filter?: Static<typeof WritesQuery>): Promise<WriteView[]>
    /** The stored bytes of an attachment. */
    attachment(agencyId: number, refId: string): Promise<{ contentType: string; bytes: Buffer }>
    /** Kept for existing suites: the same as integrations.subscribe. */
    subscription(clientId: string, agencyId: number, patch: Static<typeof SubscriptionPatchBody>): Promise<unknown>
  }
  offices: {
    add(agencyId: number, office: FixtureOffice): Promise<unknown>
    remove(agencyId: number, officeId: number): Promise<unknown>
  }
  users: {
    add(agencyId: number, user: FixtureUser): Promise<unknown>
    remove(agencyId: number, userId: number): Promise<unknown>
  }
  clients: {
    search(agencyId: number, q?: string, limit?: number): Promise<FixtureClient[]>
    get(agencyId: number, clientNumber: number): Promise<FixtureClient>
    put(agencyId: number, clientNumber: number, client: unknown): Promise<FixtureClient>
    patch(agencyId: number, clientNumber: number, patch: Static<typeof ClientPatchBody>): Promise<FixtureClient>
    delete(agencyId: number, clientNumber: number): Promise<FixtureClient>
  }
  /** Examiner sessions: record a test run of an integration and judge it rule by rule. */
  sessions: Sessions
  /**
   * The worlds of the sandbox (each call of this object is about the process, whichever world this client controls); with a
   * tenant's token, the tenant's worlds.
   */
  worlds: Worlds
  /** The tenants of a partner programme (the sandbox's control token only). */
  tenants: Tenants
  /** The same client for another world's control routes (/_sandbox/worlds/{id}/...), with that world's token if the sandbox has a control token. */
  world(id: string, token?: string): Control
}

export type WorldCreated = Static<typeof WorldCreatedSchema>
export type WorldView = Static<typeof WorldSchema>
/** One world as `worlds.get` answers it: with its integrations' secrets (`credentials`). */
export type WorldWithSecrets = Static<typeof WorldWithSecretsSchema>

export interface Worlds {
  /** A new world: of the start-up fixture, of a fixture document (`fixture`), or a copy of a world as it stands (`from`). */
  create(options?: Static<typeof WorldCreateBody>): Promise<WorldCreated>
  list(): Promise<Static<typeof WorldListSchema>>
  /** One world, with its integrations' secrets (the create answer's). */
  get(id: string): Promise<WorldWithSecrets>
  delete(id: string): Promise<void>
}

export type TenantCreated = Static<typeof TenantCreatedSchema>
export type TenantView = Static<typeof TenantSchema>

export interface Tenants {
  /** A new tenant: its `token` (given this once) creates worlds up to `maxWorlds` and controls them alone. */
  create(options?: Static<typeof TenantCreateBody>): Promise<TenantCreated>
  list(): Promise<Static<typeof TenantListSchema>>
  get(id: string): Promise<TenantView>
  /** Changes the tenant's name or quota (maxWorlds). */
  update(id: string, changes: Static<typeof TenantPatchBody>): Promise<TenantView>
  /** A new token for the tenant: the old one opens nothing from then on, on every instance. */
  newToken(id: string): Promise<Static<typeof TenantTokenSchema>>
  /** Deletes the tenant with its worlds; its token opens nothing from then on. */
  delete(id: string): Promise<void>
}

const query = (q: object): string => {
  const entries = Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)])
  return entries.length === 0 ? '' : '?' + new URLSearchParams(entries).toString()
}

const isFixture = (value: ResetOptions | Fixture): value is Fixture => 'agencies' in value || 'integrations' in value

/**
 * A typed client of the control API of a sandbox that runs at `baseUrl` (a container, another
 * process): of its default world, or of the world `world` names.
 */
export function controlClient (baseUrl: string, token?: string, world?: string): Control {
  // The world's routes are under its prefix; the process's (health, meta, worlds) under /_sandbox alone.
  const worldPrefix = world === undefined ? '/_sandbox' : `/_sandbox/worlds/${encodeURIComponent(world)}`
  async function send (method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {}
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    return fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  }
  async function request<T> (method: string, path: string, body?: unknown): Promise<T> {
    const res = await send(method, path, body)
    const text = await res.text()
    const parsed: unknown = text === '' ? undefined : /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text
    if (!res.ok) throw new ControlError(res.status, parsed, method, path)
    return parsed as T
  }
  /** A route of the world this client controls. */
  const call = <T>(method: string, path: string, body?: unknown): Promise<T> => request<T>(method, worldPrefix + path, body)
  /** A route of the process. */
  const callSandbox = <T>(method: string, path: string, body?: unknown): Promise<T> => request<T>(method, '/_sandbox' + path, body)
  const id = (value: string) => encodeURIComponent(value)
  const subscribe = (clientId: string, agencyId: number, patch: unknown) => call('PATCH', `/integrations/${id(clientId)}/agencies/${agencyId}`, patch)
  const sessions: Sessions = {
    start: (options = {}) => call('POST', '/sessions', options),
    list: () => call('GET', '/sessions'),
    get: (sessionId) => call('GET', `/sessions/${sessionId}`),
    mirror: (sessionId, mirror) => call('POST', `/sessions/${sessionId}/mirror`, mirror),
    end: (sessionId) => call('POST', `/sessions/${sessionId}/end`),
    delete: (sessionId) => call('DELETE', `/sessions/${sessionId}`),
    report: ((sessionId: number, format?: ReportFormat) =>
      call('GET', `/sessions/${sessionId}/report` + query({ format: format === 'json' ? undefined : format }))) as Sessions['report'],
    finalReport: async (sessionId) => {
      const path = `${worldPrefix}/sessions/${sessionId}/report?final=true`
      const res = await send('GET', path)
      const text = await res.text()
      if (!res.ok) throw new ControlError(res.status, /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text, 'GET', path)
      return text
    }
  }
  return {
    health: () => callSandbox('GET', '/health'),
    info: () => call('GET', '/info'),
    meta: () => callSandbox('GET', '/meta'),
    signingKey: () => callSandbox('GET', '/signing-key'),
    signingKeys: () => callSandbox('GET', '/signing-keys'),
    reset: (options) => {
      if (options === undefined) return call('POST', '/reset')
      if (isFixture(options)) return call('POST', '/reset', options)
      const { fixture, keep } = options
      return call('POST', '/reset', fixture === undefined ? { keep } : { ...fixture, ...(keep === undefined ? {} : { keep }) })
    },
    state: () => call('GET', '/state'),
    clock: {
      get: () => call('GET', '/clock'),
      set: (now, frozen) => call('PUT', '/clock', { now: now instanceof Date ? now.toISOString() : now, ...(frozen === undefined ? {} : { frozen }) }),
      freeze: () => call('PUT', '/clock', { frozen: true }),
      advance: (seconds) => call('POST', '/clock/advance', { seconds }),
      real: () => call('DELETE', '/clock')
    },
    faults: {
      add: (rule) => call('POST', '/faults', rule),
      list: () => call('GET', '/faults'),
      remove: (faultId) => call('DELETE', `/faults/${id(faultId)}`),
      clear: () => call('DELETE', '/faults')
    },
    requests: {
      list: (filter = {}) => call('GET', '/requests' + query(filter)),
      clear: () => call('DELETE', '/requests')
    },
    simulator: {
      start: (settings) => call('POST', '/simulator', settings),
      status: () => call('GET', '/simulator'),
      stop: () => call('DELETE', '/simulator')
    },
    integrations: {
      list: () => call('GET', '/integrations'),
      add: (integration) => call('POST', '/integrations', integration),
      remove: (clientId) => call('DELETE', `/integrations/${id(clientId)}`),
      subscribe,
      unsubscribe: (clientId, agencyId) => call('DELETE', `/integrations/${id(clientId)}/agencies/${agencyId}`)
    },
    agencies: {
      list: () => call('GET', '/agencies'),
      add: (agency) => call('POST', '/agencies', agency),
      remove: (agencyId) => call('DELETE', `/agencies/${agencyId}`),
      patch: (agencyId, patch) => call('PATCH', `/agencies/${agencyId}`, patch),
      writes: (agencyId, filter = {}) => call('GET', `/agencies/${agencyId}/writes` + query(filter)),
      attachment: async (agencyId, refId) => {
        const path = `${worldPrefix}/agencies/${agencyId}/attachments/${id(refId)}/content`
        const res = await send('GET', path)
        if (!res.ok) throw new ControlError(res.status, await res.text(), 'GET', path)
        return { contentType: res.headers.get('content-type') ?? '', bytes: Buffer.from(await res.arrayBuffer()) }
      },
      subscription: subscribe
    },
    offices: {
      add: (agencyId, office) => call('POST', `/agencies/${agencyId}/offices`, office),
      remove: (agencyId, officeId) => call('DELETE', `/agencies/${agencyId}/offices/${officeId}`)
    },
    users: {
      add: (agencyId, user) => call('POST', `/agencies/${agencyId}/users`, user),
      remove: (agencyId, userId) => call('DELETE', `/agencies/${agencyId}/users/${userId}`)
    },
    clients: {
      search: (agencyId, q, limit) => call('GET', `/agencies/${agencyId}/clients` + query({ q, limit })),
      get: (agencyId, n) => call('GET', `/agencies/${agencyId}/clients/${n}`),
      put: (agencyId, n, client) => call('PUT', `/agencies/${agencyId}/clients/${n}`, client),
      patch: (agencyId, n, patch) => call('PATCH', `/agencies/${agencyId}/clients/${n}`, patch),
      delete: (agencyId, n) => call('DELETE', `/agencies/${agencyId}/clients/${n}`)
    },
    sessions,
    worlds: {
      create: (options = {}) => callSandbox('POST', '/worlds', options),
      list: () => callSandbox('GET', '/worlds'),
      get: (worldId) => callSandbox('GET', `/worlds/${id(worldId)}`),
      delete: (worldId) => callSandbox('DELETE', `/worlds/${id(worldId)}`)
    },
    tenants: {
      create: (options = {}) => callSandbox('POST', '/tenants', options),
      list: () => callSandbox('GET', '/tenants'),
      get: (tenantId) => callSandbox('GET', `/tenants/${id(tenantId)}`),
      update: (tenantId, changes) => callSandbox('PATCH', `/tenants/${id(tenantId)}`, changes),
      newToken: (tenantId) => callSandbox('POST', `/tenants/${id(tenantId)}/token`),
      delete: (tenantId) => callSandbox('DELETE', `/tenants/${id(tenantId)}`)
    },
    world: (worldId, worldToken) => controlClient(baseUrl, worldToken ?? token, worldId)
  }
}
