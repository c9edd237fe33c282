import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Finding, Report, ReportWorld, Session } from '../../src/schemas/examiner.js'
import { AGENCY, DEMO } from './app.js'

/** Calls of the examiner's control API and vendor requests, for the examiner tests. */

export async function startSession (app: FastifyInstance, body: { name?: string, clientId?: string } = { clientId: 'abc' }): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/_sandbox/sessions', payload: body })
  if (res.statusCode !== 201) throw new Error(`session start answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

export async function reportOf (app: FastifyInstance, id: number): Promise<Report> {
  const res = await app.inject({ method: 'GET', url: `/_sandbox/sessions/${id}/report` })
  if (res.statusCode !== 200) throw new Error(`report answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

export const findingOf = (report: Report, rule: string): Finding | undefined => report.findings.find((f) => f.rule === rule)

/** A vendor request as integration abc (or with the given authorization). */
export async function vendor (app: FastifyInstance, method: 'GET' | 'POST', url: string, options: {
  payload?: unknown
  headers?: Record<string, string>
  authorization?: string
} = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: options.authorization ?? DEMO, ...options.headers }
  return app.inject({ method, url, headers, ...(options.payload === undefined ? {} : { payload: options.payload as string }) })
}

/** Ids of the agency's live clients (a full listing). */
export async function clientIds (app: FastifyInstance, agencyId: number, query = 'version=4.0'): Promise<number[]> {
  const res = await vendor(app, 'GET', `/vendor/agency/${agencyId}/clients?${query}`)
  if (res.statusCode !== 200) throw new Error(`listing answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

/** Reads clients in batches of 200 (4.0). */
export async function readInBatches (app: FastifyInstance, agencyId: number, ids: readonly number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 200) {
    const res = await vendor(app, 'POST', `/vendor/agency/${agencyId}/clients?version=4.0`, { payload: { clientNumbers: ids.slice(i, i + 200) } })
    if (res.statusCode !== 200) throw new Error(`batch answered ${res.statusCode}: ${res.body}`)
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The world an examiner built outside a World names in its reports. */
export const TEST_WORLD: ReportWorld = { id: 'default', name: 'default', tenant: null, startDigest: '0'.repeat(64) }

/** A session of abc with some traffic (an error finding, a sync, coverage), ended; its report as answered (signed when the app has a key). */
export async function endedReport (app: FastifyInstance, prefix = '', authorization = DEMO, name = 'nightly sync'): Promise<{ id: number, body: string, report: Report }> {
  const started = await app.inject({ method: 'POST', url: `/_sandbox${prefix}/sessions`, payload: { name } })
  const { id } = started.json() as { id: number }
  await vendor(app, 'GET', '/vendor/agencies?version=4.0', { authorization })
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { authorization })
  await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { authorization, payload: { clientNumbers: Array.from({ length: 201 }, (_, i) => 1000 + i) } })
  await app.inject({ method: 'POST', url: `/_sandbox${prefix}/sessions/${id}/end` })
  const res = await app.inject({ url: `/_sandbox${prefix}/sessions/${id}/report` })
  if (res.statusCode !== 200) throw new Error(`report answered ${res.statusCode}: ${res.body}`)
  return { id, body: res.body, report: res.json() }
}
