// @ts-check
// The world picker: which world of the sandbox the panels show (the page's `?world=`), and the
// credentials of that world's integrations, the ones the console's own vendor reads use.
import { DEFAULT_WORLD, api, shownWorld } from './api.js'
import { $, fail, h, replace, toast } from './dom.js'
import { loadSecrets, world } from './state.js'

/** @typedef {{ id: string, name: string, expiresAt: string | null }} WorldSummary */

/**
 * The page again, showing another world (every panel starts over in it).
 * @param {string} id
 * @param {string} [gone] the world shown before, which no longer exists (the new page says so)
 */
function open (id, gone) {
  const url = new URL(window.location.href)
  if (id === DEFAULT_WORLD) url.searchParams.delete('world')
  else url.searchParams.set('world', id)
  if (gone !== undefined) url.searchParams.set('gone', gone)
  window.location.assign(url)
}

/**
 * The Authorization header of a Client Id and its secret.
 * @param {string} clientId
 * @param {string} secret
 */
const basic = (clientId, secret) => `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${clientId}:${secret}`)))}`

export const worldPicker = {
  init () {
    const select = $('world-picker', HTMLSelectElement)
    select.addEventListener('change', () => open(select.value))
    // worlds come and go: the list is read again whenever the picker is about to open
    select.addEventListener('focus', () => this.refresh().catch(fail))
    const credentials = $('world-credentials', HTMLDetailsElement)
    credentials.addEventListener('toggle', () => {
      if (credentials.open) this.showCredentials().catch(fail)
    })
    // a popover: a click anywhere else closes it
    document.addEventListener('click', (e) => {
      if (credentials.open && e.target instanceof Node && !credentials.contains(e.target)) credentials.open = false
    })
    document.body.classList.toggle('in-world', shownWorld !== DEFAULT_WORLD)
    const url = new URL(window.location.href)
    const gone = url.searchParams.get('gone')
    if (gone !== null) {
      toast(`World ${gone} no longer exists (deleted, or idle past its ttlSeconds): showing the default world`, 'error')
      url.searchParams.delete('gone')
      window.history.replaceState(null, '', url)
    }
  },

  /**
   * Lists GET /_sandbox/worlds in the picker; a world shown that is gone sends the page back to the
   * default world (false: the page is leaving).
   * @returns {Promise<boolean>}
   */
  async refresh () {
    /** @type {{ worlds: WorldSummary[] }} */
    const { worlds } = await api('GET', '/worlds')
    const select = $('world-picker', HTMLSelectElement)
    if (!worlds.some((w) => w.id === shownWorld)) {
      open(DEFAULT_WORLD, shownWorld)
      return false
    }
    replace(select, worlds.map((w) => h('option', { value: w.id, selected: w.id === shownWorld },
      w.id === DEFAULT_WORLD ? 'default' : `${w.name} · ${w.id}`)))
    return true
  },

  /** The credentials of the world's integrations (from its /_sandbox/.../state, as the vendor reads use them). */
  async showCredentials () {
    const secrets = await loadSecrets(true)
    replace($('world-credentials-list'), h('table', { class: 'grid credentials', testid: 'world-credentials-table' },
      h('thead', {}, h('tr', {}, ['Client Id', 'Client Secret', 'Authorization header'].map((c) => h('th', {}, c)))),
      h('tbody', {}, [...secrets].map(([clientId, secret]) => h('tr', { testid: `credentials-${clientId}` },
        h('td', { class: 'mono' }, clientId),
        h('td', { class: 'mono' }, secret),
        h('td', { class: 'mono' }, basic(clientId, secret)))))),
    h('p', { class: 'muted small' }, `The vendor API picks the world from the Client Id: ${world.integrations.length} integration${world.integrations.length === 1 ? '' : 's'} in this world.`))
  }
}
