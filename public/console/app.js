// @ts-check
// agency-sandbox web console: plain ES modules, no framework, no build step. This module wires
// the panels to the tabs, the journal poller and the header; the server's constants (versions,
// scopes, client groups, write kinds) come from GET /_sandbox/meta.
import { TOKEN_KEY, api, tokenAsked } from './api.js'
import { $, fail, toast } from './dom.js'
import { startJournalPoller } from './journal.js'
import { agenciesPanel } from './panel-agencies.js'
import { clientsPanel } from './panel-clients.js'
import { clockPanel } from './panel-clock.js'
import { faultsPanel } from './panel-faults.js'
import { requestsPanel } from './panel-requests.js'
import { sessionsPanel } from './panel-sessions.js'
import { writesPanel } from './panel-writes.js'
import { worldPicker } from './world-picker.js'
import { loadClock, loadMeta, loadWorld, nav, renderClockText, world } from './state.js'

/** @type {Record<string, import('./types.js').Panel>} */
const panels = {
  agencies: agenciesPanel,
  clients: clientsPanel,
  writes: writesPanel,
  requests: requestsPanel,
  faults: faultsPanel,
  sessions: sessionsPanel,
  clock: clockPanel
}

/** @param {string} name */
function showTab (name) {
  if (!(name in panels)) name = 'agencies'
  nav.activeTab = name
  for (const link of document.querySelectorAll('[data-tab]')) {
    if (!(link instanceof HTMLElement)) continue
    const on = link.dataset.tab === name
    link.classList.toggle('active', on)
    if (on) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  }
  for (const section of document.querySelectorAll('[data-panel]')) {
    if (section instanceof HTMLElement) section.hidden = section.dataset.panel !== name
  }
  panels[name].show().catch(fail)
}

/**
 * New journal entries: the requests table takes them; a write refreshes the panel showing its agency.
 * @param {import('./types.js').JournalEntry[]} entries
 */
function onJournalEntries (entries) {
  requestsPanel.add(entries)
  const tab = nav.activeTab
  const writes = entries.filter((e) => e.method !== 'GET' && e.agencyId !== null)
  if (writes.length > 0) {
    const agencies = new Set(writes.map((e) => e.agencyId))
    if (tab === 'writes' && agencies.has(Number($('writes-agency', HTMLSelectElement).value))) writesPanel.refresh().catch(fail)
    if (tab === 'clients' && clientsPanel.selected && agencies.has(clientsPanel.selected.agencyId)) clientsPanel.refreshActivity().catch(fail)
    if (tab === 'agencies') agenciesPanel.show().catch(fail)
  }
  if (tab === 'faults' && entries.some((e) => e.path.startsWith('/vendor/'))) faultsPanel.refresh().catch(fail)
  // recorded counts move while a session is open; the report itself is read on demand
  if (tab === 'sessions') sessionsPanel.refresh().catch(fail)
}

async function start () {
  const forget = $('token-forget')
  forget.hidden = !sessionStorage.getItem(TOKEN_KEY)
  forget.addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY)
    forget.hidden = true
    toast('Control token forgotten for this tab', 'ok')
  })
  for (const panel of Object.values(panels)) panel.init?.()
  worldPicker.init()
  // the world shown must exist before the panels ask it anything
  if (!(await worldPicker.refresh().catch((e) => { fail(e); return true }))) return

  try {
    /** @type {[import('./types.js').Info, ...unknown[]]} */
    const [info] = await Promise.all([api('GET', '/info'), loadMeta(), loadWorld(), loadClock()])
    world.info = info
    $('header-version').textContent = `v${info.version}`
    const pill = $('faults-total')
    pill.hidden = info.counts.faults === 0
    pill.textContent = String(info.counts.faults)
    const pending = $('pending-total')
    pending.hidden = info.counts.writes.pending === 0
    pending.textContent = String(info.counts.writes.pending)
  } catch (e) {
    fail(e)
  }
  setInterval(renderClockText, 1000)
  setInterval(() => {
    if (document.visibilityState !== 'hidden' && !tokenAsked()) loadClock().catch(() => {})
  }, 15_000)

  window.addEventListener('hashchange', () => showTab(window.location.hash.slice(1)))
  showTab(window.location.hash.slice(1) || 'agencies')
  startJournalPoller(onJournalEntries)
  document.body.dataset.ready = 'true'
}

start()
