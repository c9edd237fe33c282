// @ts-check
// Writes: what partners wrote to an agency, pending or applied; disconnect and reconnect it.
import { api, query } from './api.js'
import { $, badge, fail, field, fillOptions, fmtTime, h, json, replace } from './dom.js'
import { clientsPanel } from './panel-clients.js'
import { agencyById, loadMeta, loadWorld, patchAgency, world } from './state.js'
import { writeSummary } from './write-views.js'

/** @typedef {import('./types.js').WriteView} WriteView */

export const writesPanel = {
  /** @type {Set<string>} RefIds of the rows whose detail is open */
  open: new Set(),

  init () {
    const form = $('writes-form', HTMLFormElement)
    form.addEventListener('change', () => this.refresh().catch(fail))
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      this.refresh().catch(fail)
    })
    $('writes-refresh').addEventListener('click', () => this.show().catch(fail))
  },

  /** @returns {Promise<void>} */
  async show () {
    await Promise.all([loadMeta(), loadWorld()])
    fillOptions($('writes-kind', HTMLSelectElement), world.meta.writeKinds, world.meta.writeKindLabels)
    await this.refresh()
  },

  /** @returns {Promise<void>} */
  async refresh () {
    const agencyId = Number($('writes-agency', HTMLSelectElement).value)
    if (!agencyId) return
    const form = $('writes-form', HTMLFormElement)
    const filters = { kind: field(form, 'kind').value, status: field(form, 'status').value, clientNumber: field(form, 'client').value }
    /** @type {[WriteView[], WriteView[]]} */
    const [writes, pending] = await Promise.all([
      api('GET', `/agencies/${agencyId}/writes${query(filters)}`),
      api('GET', `/agencies/${agencyId}/writes?status=pending`)
    ])
    this.renderBar(agencyId, pending.length)
    this.renderTable(agencyId, writes)
  },

  /**
   * The agency's state with a button to disconnect or reconnect it.
   * @param {number} agencyId
   * @param {number} pendingCount
   */
  renderBar (agencyId, pendingCount) {
    const a = agencyById(agencyId)
    if (!a) return
    const bar = $('writes-agency-bar')
    /** @param {string} text */
    const say = (text) => {
      const msg = $('writes-message')
      msg.hidden = false
      msg.textContent = text
    }
    const reconnect = h('button', {
      type: 'button',
      testid: 'writes-reconnect',
      class: 'primary',
      onclick: async () => {
        try {
          const result = await patchAgency(agencyId, { connected: true })
          say(`Agency ${agencyId} reconnected: ${result.appliedPendingWrites} pending write${result.appliedPendingWrites === 1 ? '' : 's'} applied.`)
          await this.refresh()
        } catch (e) { fail(e) }
      }
    }, pendingCount > 0 ? `Reconnect agency (applies ${pendingCount} pending)` : 'Reconnect agency')
    const disconnect = h('button', {
      type: 'button',
      testid: 'writes-disconnect',
      class: 'secondary',
      onclick: async () => {
        try {
          await patchAgency(agencyId, { connected: false })
          say(`Agency ${agencyId} disconnected: writes are now saved as pending (202) until it reconnects.`)
          await this.refresh()
        } catch (e) { fail(e) }
      }
    }, 'Disconnect')
    replace(bar,
      h('strong', {}, `${a.agencyId} · ${a.name}`), ' ',
      a.connected ? badge('connected', 'good', 'writes-agency-state') : badge('disconnected', 'warn', 'writes-agency-state'),
      a.active ? null : badge('inactive', 'bad'), ' ',
      h('span', { class: 'muted', testid: 'writes-pending-count' }, `${pendingCount} pending`),
      h('span', { class: 'spacer' }),
      a.connected ? disconnect : reconnect)
  },

  /**
   * Newest first; a click on a row shows its decoded fields.
   * @param {number} agencyId
   * @param {WriteView[]} writes
   */
  renderTable (agencyId, writes) {
    const wrap = $('writes-table-wrap')
    if (writes.length === 0) {
      replace(wrap, h('p', { class: 'muted empty', testid: 'writes-empty' }, 'No writes match. Partners\' log notes, attachments, receipts and created clients appear here.'))
      return
    }
    const rows = []
    for (const w of [...writes].reverse()) {
      const detail = h('tr', { class: 'detail', testid: `write-detail-${w.refId}`, hidden: !this.open.has(w.refId) },
        h('td', { colspan: '9' }, h('pre', { class: 'json' }, json({ refId: w.refId, ...w.data }))))
      rows.push(h('tr', {
        testid: `write-row-${w.refId}`,
        class: 'clickable',
        dataset: { status: w.status, kind: w.kind },
        onclick: (e) => {
          if (e.target instanceof Element && e.target.closest('a, button')) return
          detail.hidden = !detail.hidden
          if (detail.hidden) this.open.delete(w.refId)
          else this.open.add(w.refId)
        }
      },
      h('td', { class: 'num' }, String(w.seq)),
      h('td', { class: 'mono small' }, fmtTime(w.receivedAt)),
      h('td', {}, w.kind),
      h('td', {}, badge(w.status, w.status === 'pending' ? 'warn' : 'good', `write-status-${w.refId}`)),
      h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => clientsPanel.open(agencyId, w.clientNumber).catch(fail) }, String(w.clientNumber))),
      h('td', {}, w.integration),
      h('td', {}, w.version),
      h('td', { class: 'mono small' }, w.appliedAt ? fmtTime(w.appliedAt) : '—'),
      h('td', { class: 'summary' }, writeSummary(agencyId, w))), detail)
    }
    replace(wrap, h('table', { class: 'grid', testid: 'writes-table' },
      h('thead', {}, h('tr', {}, ['#', 'Received', 'Kind', 'Status', 'Client', 'Integration', 'Ver', 'Applied', 'Content'].map((c) => h('th', {}, c)))),
      h('tbody', {}, rows)))
  }
}
