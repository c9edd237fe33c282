// @ts-check
// Clients: search an agency's clients, read one as each partner API version answers it, and see
// what partners wrote to it.
import { api, controlUrl, query } from './api.js'
import { addressLine, clientName, readModelView } from './client-view.js'
import { $, badge, debounce, fail, find, fmtTime, h, plural, replace, targetOf } from './dom.js'
import { loadMeta, loadSecrets, loadWorld, nav, readersOf, world } from './state.js'
import { renderActivity } from './write-views.js'

/** @typedef {import('./types.js').ClientModel} ClientModel */

/** The pseudo-version of the buttons that shows the control plane's read model. */
const CONTROL = 'control'
const PICK_A_CLIENT = 'Pick a client to see its read model and what partners wrote to it.'

export const clientsPanel = {
  /** @type {{ agencyId: number, clientNumber: number } | undefined} */
  selected: undefined,
  /** The version shown (the newest until one is picked). */
  version: '',
  /** Client Id of the integration the partner API is read as ('' when none can). */
  reader: '',
  searchSeq: 0,

  init () {
    const form = $('clients-form', HTMLFormElement)
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      this.search().catch(fail)
    })
    $('clients-search').addEventListener('input', debounce(() => this.search().catch(fail), 250))
    $('clients-agency').addEventListener('change', () => {
      this.selected = undefined
      this.reader = ''
      replace($('client-view'), h('p', { class: 'muted empty' }, PICK_A_CLIENT))
      this.search().catch(fail)
    })
  },

  /** @returns {Promise<void>} */
  async show () {
    if (world.agencies.length === 0) await loadWorld()
    await this.search()
    if (this.selected) await this.refreshActivity()
  },

  /**
   * Opens the tab on a client (from another panel).
   * @param {number} agencyId
   * @param {number} clientNumber
   */
  async open (agencyId, clientNumber) {
    $('clients-agency', HTMLSelectElement).value = String(agencyId)
    if (nav.activeTab !== 'clients') window.location.hash = '#clients'
    await this.select(agencyId, clientNumber)
  },

  /** @returns {Promise<void>} */
  async search () {
    const agencyId = $('clients-agency', HTMLSelectElement).value
    if (agencyId === '') return
    const q = $('clients-search', HTMLInputElement).value.trim()
    const seq = ++this.searchSeq
    /** @type {ClientModel[]} */
    const clients = await api('GET', `/agencies/${agencyId}/clients${query({ q, limit: 100 })}`)
    if (seq !== this.searchSeq) return
    $('clients-count').textContent = `${clients.length}${clients.length === 100 ? '+' : ''} client${clients.length === 1 ? '' : 's'}`
    const needle = q.toLowerCase()
    replace($('clients-results'), clients.length === 0
      ? h('li', { class: 'muted empty' }, 'No client matches.')
      : clients.map((c) => {
        /** @type {string[]} */
        const policies = (c.policies ?? []).map((p) => p.policyNumber).filter(Boolean)
        const matched = needle === '' ? [] : policies.filter((p) => p.toLowerCase().includes(needle))
        const shown = matched.length > 0 ? matched : policies.slice(0, 2)
        const isSelected = this.selected && this.selected.clientNumber === c.clientNumber && this.selected.agencyId === Number(agencyId)
        return h('li', {},
          h('button', {
            type: 'button',
            class: `result${isSelected ? ' selected' : ''}`,
            testid: `client-result-${c.clientNumber}`,
            onclick: () => this.select(Number(agencyId), c.clientNumber).catch(fail)
          },
          h('span', { class: 'result-title' }, h('span', { class: 'num' }, `#${c.clientNumber}`), ' ', clientName(c),
            c.deleted ? badge('deleted', 'bad') : null, c.details?.isCommercial ? badge('commercial') : null),
          h('span', { class: 'result-sub muted' },
            [shown.length > 0 ? shown.join(', ') + (policies.length > shown.length ? ` +${policies.length - shown.length}` : '') : 'no policies',
              addressLine(c.details?.mailingAddress)].filter(Boolean).join(' · '))))
      }))
  },

  /**
   * @param {number} agencyId
   * @param {number} clientNumber
   * @returns {Promise<void>}
   */
  async select (agencyId, clientNumber) {
    this.selected = { agencyId, clientNumber }
    for (const b of document.querySelectorAll('[data-testid^="client-result-"]')) {
      b.classList.toggle('selected', b instanceof HTMLElement && b.dataset.testid === `client-result-${clientNumber}`)
    }
    /** @type {[ClientModel, unknown]} */
    const [control] = await Promise.all([api('GET', `/agencies/${agencyId}/clients/${clientNumber}`), loadMeta()])
    const { versions, unversioned } = world.meta
    if (this.version === '') this.version = versions[0] ?? CONTROL
    const readers = readersOf(agencyId)
    if (!readers.some((r) => r.clientId === this.reader)) this.reader = readers[0]?.clientId ?? ''
    const shown = () => (this.reader === '' ? CONTROL : this.version)

    const view = $('client-view')
    const versionButtons = [...versions, CONTROL].map((v) => h('button', {
      type: 'button',
      testid: `client-version-${v}`,
      class: `seg${v === shown() ? ' on' : ''}`,
      'aria-pressed': String(v === shown()),
      disabled: v !== CONTROL && readers.length === 0,
      title: v === CONTROL
        ? 'The control plane read model (GET /_sandbox/agencies/…/clients/…)'
        : `GET /vendor/…/client/${clientNumber}${v === unversioned ? '' : `?version=${v}`}`,
      onclick: () => {
        this.version = v
        for (const b of view.querySelectorAll('.seg')) {
          if (!(b instanceof HTMLElement)) continue
          b.classList.toggle('on', b.dataset.testid === `client-version-${v}`)
          b.setAttribute('aria-pressed', String(b.dataset.testid === `client-version-${v}`))
        }
        this.renderReadModel(control).catch(fail)
      }
    }, v === CONTROL ? 'control plane' : v === unversioned ? `version ${v}` : v))

    const readerSelect = readers.length === 0
      ? h('span', { class: 'muted small', testid: 'client-integration-none' },
        `No integration can read this agency (${world.meta.clientReadScope}, not opted out, agency active): showing the control-plane read model.`)
      : h('label', { class: 'inline' }, 'read as', h('select', {
        testid: 'client-integration',
        onchange: (e) => {
          this.reader = targetOf(e, HTMLSelectElement).value
          this.renderReadModel(control).catch(fail)
        }
      }, readers.map((r) => h('option', { value: r.clientId, selected: r.clientId === this.reader }, `${r.clientId} (${r.name})`))))

    const d = control.details ?? {}
    replace(view,
      h('div', { class: 'client-head' },
        h('h2', { testid: 'client-title' }, `#${control.clientNumber} `, clientName(control)),
        h('div', { class: 'badges' },
          control.deleted ? badge('deleted', 'bad') : null,
          d.status ? badge(d.status) : null,
          d.clientType ? badge(d.clientType) : null,
          badge(d.isCommercial ? 'commercial' : 'personal'),
          h('span', { class: 'muted small' }, ` agency ${agencyId} · modified ${fmtTime(d.modified)}`))),
      h('p', { class: 'client-facts' }, [
        addressLine(d.mailingAddress),
        d.officeId !== undefined ? `office ${d.officeId}` : null,
        d.producer ? `producer ${d.producer}` : null,
        d.csr ? `CSR ${d.csr}` : null,
        plural((control.policies ?? []).length, 'policy', 'policies'),
        plural((control.claims ?? []).length, 'claim'),
        plural((control.invoices ?? []).length, 'invoice')
      ].filter(Boolean).join(' · ')),
      h('div', { class: 'row' }, h('div', { class: 'segmented', role: 'group', 'aria-label': 'Version' }, versionButtons), readerSelect),
      h('p', { class: 'muted small mono', testid: 'client-read-meta' }),
      h('div', { testid: 'client-json', class: 'client-json' }),
      h('h3', {}, 'Partner writes to this client'),
      h('div', { testid: 'client-activity', class: 'activity' }, h('p', { class: 'muted' }, 'Loading…')))
    await Promise.all([this.renderReadModel(control), this.refreshActivity()])
  },

  /**
   * The read model in the chosen version, read as the chosen integration through the partner API.
   * @param {ClientModel} control the control plane's read model
   * @returns {Promise<void>}
   */
  async renderReadModel (control) {
    if (this.selected === undefined) return
    const { agencyId, clientNumber } = this.selected
    const meta = $('client-read-meta')
    const target = $('client-json')
    if (this.version === CONTROL || this.reader === '') {
      meta.textContent = `GET ${controlUrl(`/agencies/${agencyId}/clients/${clientNumber}`)} (control plane, every group, deleted flag)`
      replace(target, readModelView(control))
      return
    }
    const version = this.version
    const include = world.meta.clientGroups.join(',')
    const path = `/vendor/agency/${agencyId}/client/${clientNumber}${version === world.meta.unversioned ? '' : `?version=${version}&include=${include}`}`
    let secrets = await loadSecrets()
    /** @type {Response | undefined} */
    let res
    for (let attempt = 0; attempt < 2; attempt++) {
      const secret = secrets.get(this.reader) ?? ''
      const basic = btoa(String.fromCharCode(...new TextEncoder().encode(`${this.reader}:${secret}`)))
      // The console's own read: its cookie (sent by the browser, same origin) keeps it out of the journal, fault rules and sessions.
      res = await fetch(path, { headers: { authorization: `Basic ${basic}` }, credentials: 'same-origin', cache: 'no-store' })
      if (res.status !== 401) break
      secrets = await loadSecrets(true) // the secret may have changed since it was loaded
    }
    if (res === undefined || this.version !== version || this.selected?.clientNumber !== clientNumber) return // the user moved on
    const denied = res.headers.get('denied')
    meta.textContent = `GET ${path} as ${this.reader} → ${res.status}${denied ? ` · Denied: ${denied}` : ''}`
    const text = await res.text()
    if (!res.ok) {
      let detail = text
      try { detail = JSON.parse(text).detail ?? text } catch { /* text/plain answer */ }
      replace(target, h('p', { class: 'error', testid: 'client-read-error' }, `The vendor API answered ${res.status}: ${detail}`),
        h('p', { class: 'muted small' }, 'Control-plane read model:'), readModelView(control))
      return
    }
    replace(target, readModelView(JSON.parse(text)))
  },

  /** @returns {Promise<void>} */
  async refreshActivity () {
    if (!this.selected) return
    const { agencyId, clientNumber } = this.selected
    const target = find('client-activity')
    if (!target) return
    const writes = await api('GET', `/agencies/${agencyId}/writes?clientNumber=${clientNumber}`)
    if (this.selected?.clientNumber !== clientNumber || this.selected?.agencyId !== agencyId) return
    renderActivity(target, agencyId, writes)
  }
}
