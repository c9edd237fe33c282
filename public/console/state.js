// @ts-check
// What the panels share: the server's constants, agencies and integrations, vendor secrets, the
// clock, and which tab is open.
import { api } from './api.js'
import { $, h, replace, toast } from './dom.js'

/** @typedef {import('./types.js').Agency} Agency */
/** @typedef {import('./types.js').Integration} Integration */

export const world = {
  /** @type {import('./types.js').SandboxMeta} the server's constants (empty lists until loaded) */
  meta: {
    versions: [], unversioned: '', scopes: [], scopeLabels: {}, clientReadScope: '', clientGroups: [], writeKinds: [], writeKindLabels: {}
  },
  /** @type {Agency[]} */
  agencies: [],
  /** @type {Integration[]} */
  integrations: [],
  /** @type {Map<string, string> | undefined} clientId → secret, from /_sandbox/state (loaded when a vendor read first needs it) */
  secrets: undefined,
  /** @type {import('./types.js').Info | undefined} */
  info: undefined,
  /** @type {import('./types.js').Clock | undefined} */
  clock: undefined,
  clockFetchedAt: 0
}

/** The open tab (set by the tab switcher). */
export const nav = { activeTab: '' }

/** @type {Promise<import('./types.js').SandboxMeta> | undefined} */
let metaLoad

/** The server's constants from GET /_sandbox/meta: loaded once (again after a failure). */
export function loadMeta () {
  metaLoad ??= api('GET', '/meta').then((meta) => {
    world.meta = meta
    return meta
  }, (e) => {
    metaLoad = undefined
    throw e
  })
  return metaLoad
}

/** @param {number | string} id */
export const agencyById = (id) => world.agencies.find((a) => a.agencyId === Number(id))

export async function loadWorld () {
  const [agencies, integrations] = await Promise.all([api('GET', '/agencies'), api('GET', '/integrations')])
  world.agencies = /** @type {Agency[]} */ (agencies).sort((a, b) => a.agencyId - b.agencyId)
  world.integrations = integrations
  fillAgencySelects()
}

function fillAgencySelects () {
  for (const testid of ['clients-agency', 'writes-agency']) {
    const select = $(testid, HTMLSelectElement)
    const current = select.value
    replace(select, world.agencies.map((a) => h('option', { value: String(a.agencyId) }, `${a.agencyId} · ${a.name}`)))
    if (current !== '' && agencyById(current)) select.value = current
  }
}

/**
 * @param {boolean} [force] load again (a secret may have changed)
 * @returns {Promise<Map<string, string>>}
 */
export async function loadSecrets (force = false) {
  if (world.secrets !== undefined && !force) return world.secrets
  /** @type {{ integrations?: { clientId: string, clientSecret: string }[] }} */
  const state = await api('GET', '/state')
  world.secrets = new Map((state.integrations ?? []).map((i) => [i.clientId, i.clientSecret]))
  return world.secrets
}

/**
 * Integrations that can read clients of the agency through the partner API.
 * @param {number} agencyId
 */
export function readersOf (agencyId) {
  const agency = agencyById(agencyId)
  if (agency === undefined || !agency.active) return []
  const scope = world.meta.clientReadScope
  return world.integrations.filter((i) => i.agencies.some((s) => s.agencyId === agency.agencyId && !s.optedOut && s.scopes.includes(scope)))
}

/**
 * PATCH an agency's flags, say what changed, and load the agencies again.
 * @param {number} agencyId
 * @param {Record<string, unknown>} patch
 * @returns {Promise<{ appliedPendingWrites: number }>}
 */
export async function patchAgency (agencyId, patch) {
  const result = await api('PATCH', `/agencies/${agencyId}`, patch)
  const what = Object.entries(patch).map(([k, v]) => `${k} ${v}`).join(', ')
  let text = `Agency ${agencyId}: ${what}`
  if (patch.connected === true) text += ` · ${result.appliedPendingWrites} pending write${result.appliedPendingWrites === 1 ? '' : 's'} applied`
  toast(text, 'ok')
  await loadWorld()
  return result
}

export async function loadClock () {
  world.clock = await api('GET', '/clock')
  world.clockFetchedAt = Date.now()
  renderClockText()
}

/** The sandbox clock now: the last answer moved on by the wall clock unless frozen. */
function clockNow () {
  if (world.clock === undefined) return undefined
  const base = Date.parse(world.clock.now)
  return new Date(world.clock.frozen ? base : base + (Date.now() - world.clockFetchedAt))
}

export function renderClockText () {
  const now = clockNow()
  if (now === undefined || world.clock === undefined) return
  const text = now.toISOString().replace(/\.\d+Z$/, 'Z')
  const header = $('header-clock')
  header.textContent = `${text.replace('T', ' ')}${world.clock.frozen ? ' · frozen' : ''}`
  header.classList.toggle('frozen', world.clock.frozen)
  const big = $('clock-now')
  big.textContent = text
}
