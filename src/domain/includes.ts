import { badRequest } from '../errors.js'
import { CLIENT_GROUPS, DEFAULT_GROUPS, type ClientGroup, type IncludeMode } from '../schemas/client.js'
import type { Grant } from './access.js'

export interface IncludeResult {
  /** Groups to populate, in read-model order. */
  readonly groups: readonly ClientGroup[]
  /** Groups requested (or due) but not granted: the `Denied` header. */
  readonly denied: readonly ClientGroup[]
}

const BY_NAME = new Map<string, ClientGroup>(CLIENT_GROUPS.map((g) => [g.toLowerCase(), g]))
BY_NAME.set('polcies', 'Policies') // the spec spells it this way in one place

/** Parses `include`: case-insensitive, comma-delimited, spaces trimmed, `Polcies` = `Policies`. */
export function parseInclude (include: string | undefined): ClientGroup[] | undefined {
  // An empty value binds as absent (the live service's model binding turns "" into null).
  if (include === undefined || include.trim() === '') return undefined
  const items = include.split(',').map((s) => s.trim()).filter((s) => s !== '')
  const unknown = items.filter((s) => !BY_NAME.has(s.toLowerCase()))
  if (unknown.length > 0) {
    const message = `unknown item ${unknown.map((u) => `'${u}'`).join(', ')}; valid items are ${CLIENT_GROUPS.join(', ')}`
    throw badRequest(`include: ${message}`, [{ field: 'include', message }])
  }
  const wanted = new Set(items.map((s) => BY_NAME.get(s.toLowerCase()) as ClientGroup))
  return CLIENT_GROUPS.filter((g) => wanted.has(g))
}

/**
 * The groups an `include` names, unknown items skipped: what a request asked of an agency that
 * does not take `include` (its answer does not depend on it, so nothing there is refused).
 */
export function namedGroups (include: string | undefined): ClientGroup[] | undefined {
  if (include === undefined || include.trim() === '') return undefined
  const named = new Set(include.split(',').map((s) => BY_NAME.get(s.trim().toLowerCase())))
  return CLIENT_GROUPS.filter((g) => named.has(g))
}

/**
 * Which groups a read returns. `requested` undefined means the default groups; `all` returns
 * every granted group whatever was requested (version 3.0 agencies without include support).
 * `denied` names only groups the request asked for (explicitly or by the default list) and did
 * not get: a group nobody asked for is never reported as withheld.
 */
export function resolveGroups (requested: ClientGroup[] | undefined, invoiceOptIn: boolean, all = false): IncludeResult {
  if (requested === undefined) return DEFAULT_RESULTS[(invoiceOptIn ? 1 : 0) + (all ? 2 : 0)]
  return resolve(requested, invoiceOptIn, all)
}

function resolve (requested: readonly ClientGroup[] | undefined, invoiceOptIn: boolean, all: boolean): IncludeResult {
  const asked = requested ?? [...DEFAULT_GROUPS]
  const granted = (g: ClientGroup) => g !== 'Invoices' || invoiceOptIn
  const served = all ? [...CLIENT_GROUPS] : asked
  return { groups: served.filter(granted), denied: asked.filter((g) => !granted(g)) }
}

/** What the default groups resolve to, made once (most reads ask for them): by opt-in (+1) and `all` (+2). */
const DEFAULT_RESULTS: readonly IncludeResult[] = [0, 1, 2, 3].map((i) => {
  const { groups, denied } = resolve(undefined, (i & 1) === 1, (i & 2) === 2)
  return Object.freeze({ groups: Object.freeze(groups), denied: Object.freeze(denied) })
})

/** The groups a read returns, for a version that reads `include` this way, and those withheld (`Denied`). */
export function includeGroups (mode: IncludeMode, grant: Grant, include: string | undefined): IncludeResult {
  const optIn = grant.scopes.has('invoice-read')
  if (mode === 'none') return resolveGroups(undefined, optIn)
  if (mode === 'preview' && !grant.agency.supportsIncludes) return resolveGroups(namedGroups(include), optIn, true)
  return resolveGroups(parseInclude(include), optIn)
}
