import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { AGENCY, DEMO, demoFixture } from './app.js'

/**
 * Shared pieces of the fidelity suite (test/fidelity/): each file holds the facts of one kind of
 * evidence, and each test names the row of the sandbox contract it checks, as
 * `[A: <bullet>]` (section A, facts from the public record) or `[B: <question>]` (section B, the
 * "Behaviour where the spec is silent" table of docs/contract.md) or `[Spec: <table>]`.
 */

export const auth = { authorization: DEMO }

/** A live (not deleted) client of the demo agency. */
export const liveClient = (agencyId: number = AGENCY.main, i = 0) =>
  demoFixture().agencies.find((a) => a.agencyId === agencyId)!.clients.filter((c) => !c.deleted)[i]

type Payload = string | object | unknown[]

/** A vendor call: `path` after /vendor/agency/, the query as written (e.g. `version=4.0`). */
export function vendor (
  app: FastifyInstance, method: 'GET' | 'POST', path: string, query: string, payload?: Payload, headers: Record<string, string> = {}
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url: `/vendor/agency/${path}${query === '' ? '' : `?${query}`}`,
    headers: { ...auth, ...(typeof payload === 'string' ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(payload === undefined ? {} : { payload: payload as object })
  })
}

/** The field names of a 400 problem body. */
export const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field)

/** The journal's newest entry for a path starting with `pathPrefix` (its warnings included). */
export async function journaled (app: FastifyInstance, pathPrefix: string): Promise<{ path: string, version: string, status: number, warnings: string[] }> {
  const entries = (await app.inject({ url: '/_sandbox/requests' })).json() as { path: string, version: string, status: number, warnings: string[] }[]
  const found = entries.filter((e) => e.path.startsWith(pathPrefix)).at(-1)
  if (found === undefined) throw new Error(`no journal entry for ${pathPrefix}`)
  return found
}

/** The writes the sandbox recorded for the agency (control API), optionally filtered by a query. */
export const writesOf = async (app: FastifyInstance, agencyId: number, query = '') =>
  (await app.inject({ url: `/_sandbox/agencies/${agencyId}/writes${query}` })).json() as { kind: string, data: Record<string, unknown> }[]
