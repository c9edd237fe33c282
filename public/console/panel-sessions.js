// @ts-check
// Sessions: examiner sessions (one recorded test run of an integration), started and ended from
// here, each with its verdict and report. The verdict and findings are written as text nodes;
// the full report is the server's HTML page (every value escaped, no script, a CSP forbidding
// scripts and loads) shown in an iframe whose empty sandbox attribute also forbids scripts,
// forms, navigation of this page and same-origin access: report data can never act in the console.
import { api } from './api.js'
import { $, badge, fail, field, fmtTime, h, plural, replace, toast } from './dom.js'
import { loadWorld, world } from './state.js'

/** @typedef {import('./types.js').Session} Session */
/** @typedef {import('./types.js').ExaminerReport} ExaminerReport */

/** @type {Record<string, string>} badge kind of each verdict and severity */
const KIND = { pass: 'good', warn: 'warn', fail: 'bad', 'no-evidence': 'bad', error: 'bad', warning: 'warn', info: 'info' }

/** The integrations a session can be limited to (they may change: filled on every show). */
function fillIntegrations () {
  const select = $('session-client', HTMLSelectElement)
  const current = select.value
  const first = select.options[0]
  replace(select, first, world.integrations.map((i) => h('option', { value: i.clientId }, `${i.clientId} · ${i.name}`)))
  if ([...select.options].some((o) => o.value === current)) select.value = current
}

export const sessionsPanel = {
  /** @type {number | undefined} the session whose report is shown */
  selected: undefined,

  init () {
    $('session-form').addEventListener('submit', (e) => {
      e.preventDefault()
      this.start().catch(fail)
    })
    $('sessions-refresh').addEventListener('click', () => this.refresh().catch(fail))
  },

  /** @returns {Promise<void>} */
  async show () {
    await loadWorld()
    fillIntegrations()
    await this.refresh()
  },

  /** The sessions table (newest first); the report shown stays as it is. */
  async refresh () {
    /** @type {Session[]} */
    const sessions = await api('GET', '/sessions')
    sessions.sort((a, b) => b.id - a.id)
    const wrap = $('sessions-table-wrap')
    if (sessions.length === 0) {
      replace(wrap, h('p', { class: 'muted empty', testid: 'sessions-empty' }, 'No sessions yet: start one, run your integration, end it and read its report.'))
      return
    }
    replace(wrap, h('table', { class: 'grid', testid: 'sessions-table' },
      h('thead', {}, h('tr', {}, ['Session', 'Name', 'Integration', 'Started', 'Ended', 'Requests', ''].map((c) => h('th', {}, c)))),
      h('tbody', {}, sessions.map((s) => h('tr', {
        testid: `session-row-${s.id}`,
        class: s.id === this.selected ? 'clickable selected' : 'clickable',
        dataset: { state: s.endedAt === undefined ? 'open' : 'ended' },
        onclick: () => this.showReport(s.id).catch(fail)
      },
      h('td', { class: 'mono' }, String(s.id)),
      h('td', {}, s.name),
      h('td', { class: 'mono' }, s.clientId ?? 'every integration'),
      h('td', { class: 'small' }, fmtTime(s.startedAt)),
      h('td', { class: 'small' }, s.endedAt === undefined ? badge('recording', 'info', `session-open-${s.id}`) : fmtTime(s.endedAt)),
      h('td', { class: 'num', testid: `session-recorded-${s.id}` }, `${s.recorded.toLocaleString('en-US')}${s.capped ? ' (cap reached)' : ''}`),
      h('td', {},
        s.endedAt === undefined
          ? h('button', {
            type: 'button',
            class: 'secondary',
            testid: `session-end-${s.id}`,
            onclick: (/** @type {MouseEvent} */ e) => {
              e.stopPropagation()
              this.end(s.id).catch(fail)
            }
          }, 'End')
          : null,
        ' ',
        h('button', { type: 'button', class: 'link', testid: `session-report-${s.id}` }, 'Report')))))))
  },

  /** Starts a session with the form's name and integration, and shows its (empty) report. */
  async start () {
    const form = $('session-form', HTMLFormElement)
    const name = field(form, 'name').value.trim()
    const clientId = field(form, 'clientId').value
    /** @type {Session} */
    const session = await api('POST', '/sessions', { ...(name === '' ? {} : { name }), ...(clientId === '' ? {} : { clientId }) })
    toast(`Session ${session.id} started: recording ${session.clientId ?? 'every integration'}`, 'ok')
    form.reset()
    this.selected = session.id
    await this.refresh()
    await this.showReport(session.id)
  },

  /** @param {number} id */
  async end (id) {
    /** @type {{ verdict: string, counts: { error: number, warning: number, info: number } }} */
    const summary = await api('POST', `/sessions/${id}/end`)
    toast(`Session ${id} ended: ${summary.verdict} (${plural(summary.counts.error, 'error')}, ${plural(summary.counts.warning, 'warning')})`, 'ok')
    this.selected = id
    await this.refresh()
    await this.showReport(id)
  },

  /**
   * The verdict and findings of a session, and its report page.
   * @param {number} id
   */
  async showReport (id) {
    this.selected = id
    for (const row of document.querySelectorAll('[data-testid^="session-row-"]')) {
      row.classList.toggle('selected', row.getAttribute('data-testid') === `session-row-${id}`)
    }
    /** @type {[ExaminerReport, string]} */
    const [report, page] = await Promise.all([api('GET', `/sessions/${id}/report`), api('GET', `/sessions/${id}/report?format=html`)])
    if (this.selected !== id) return
    const open = report.session.endedAt === undefined
    const frame = h('iframe', { sandbox: '', title: `Report of session ${id}`, class: 'report-frame', testid: 'session-report-frame', referrerpolicy: 'no-referrer' })
    frame.srcdoc = page
    replace($('session-report'),
      h('div', { class: 'panel-head' },
        h('h2', {}, `Session ${id}: `, report.session.name, ' ',
          badge(report.verdict, KIND[report.verdict] ?? '', 'session-verdict'),
          open ? badge('still recording: the report so far', 'info') : null),
        h('p', { class: 'muted', testid: 'session-counts' },
          `${plural(report.findings.filter((f) => f.severity === 'error').length, 'error')}, ` +
          `${plural(report.findings.filter((f) => f.severity === 'warning').length, 'warning')} · ` +
          `${plural(report.session.recorded, 'request')} recorded`),
        h('p', { class: 'row', testid: 'session-findings' },
          report.findings.length === 0
            ? 'No findings.'
            : report.findings.map((f) => h('span', { class: `badge ${KIND[f.severity] ?? ''}`, testid: `session-finding-${f.rule}`, title: f.message }, `${f.rule} ×${f.count}`)),
          h('button', { type: 'button', class: 'secondary', testid: 'session-report-refresh', onclick: () => this.showReport(id).catch(fail) }, 'Refresh report'))),
      frame)
  }
}
