// @ts-check
// Requests: the request journal, newest first, filtered, live (the poller adds new entries).
import { api, query } from './api.js'
import { $, badge, debounce, fail, field, find, h, json, replace, shortTime, targetOf, toast } from './dom.js'

/** @typedef {import('./types.js').JournalEntry} JournalEntry */

/** Rows kept in the table (the newest). */
const MAX_REQUEST_ROWS = 500

/**
 * Same glob as the journal's filter: * within a segment, ** across, ? one character.
 * @param {string} glob
 */
function globToRegExp (glob) {
  let re = ''
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]
    if (ch === '*' && glob[i + 1] === '*') {
      re += '.*'
      i++
    } else if (ch === '*') re += '[^/]*'
    else if (ch === '?') re += '[^/]'
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${re}$`)
}

/** @param {number} s */
const statusClass = (s) => (s >= 500 ? 'bad' : s >= 400 ? 'warn' : s === 202 ? 'info' : 'good')

export const requestsPanel = {
  rows: 0,
  /** Highest journal id in the table (the poller and a reload can overlap). */
  lastShown: 0,
  /** @type {Record<string, string>} */
  filters: {},
  /** @type {(e: JournalEntry) => boolean} */
  matcher: () => true,
  loadSeq: 0,

  init () {
    const form = $('requests-form', HTMLFormElement)
    const reload = debounce(() => this.reload().catch(fail), 250)
    form.addEventListener('input', (e) => {
      if (!(e.target instanceof HTMLInputElement && e.target.name === 'live')) reload()
    })
    // Entries that arrived while paused are loaded again when live resumes.
    $('requests-live').addEventListener('change', (e) => {
      if (targetOf(e, HTMLInputElement).checked) this.reload().catch(fail)
    })
    form.addEventListener('submit', (e) => e.preventDefault())
    $('requests-clear').addEventListener('click', async () => {
      try {
        await api('DELETE', '/requests')
        this.renderEmpty()
        toast('Request journal cleared', 'ok')
      } catch (e) { fail(e) }
    })
  },

  /** @returns {Promise<void>} */
  async show () {
    if (this.rows === 0 && find('requests-table') === null) await this.reload()
  },

  readFilters () {
    const form = $('requests-form', HTMLFormElement)
    const filters = {
      method: field(form, 'method').value,
      path: field(form, 'path').value.trim(),
      status: field(form, 'status').value,
      agencyId: field(form, 'agency').value
    }
    const path = filters.path === '' ? undefined : globToRegExp(filters.path)
    this.filters = filters
    this.matcher = (e) =>
      (filters.method === '' || e.method === filters.method) &&
      (path === undefined || path.test(e.path)) &&
      (filters.status === '' || e.status === Number(filters.status)) &&
      (filters.agencyId === '' || e.agencyId === Number(filters.agencyId))
  },

  /** @returns {Promise<void>} */
  async reload () {
    this.readFilters()
    const seq = ++this.loadSeq
    const entries = await api('GET', `/requests${query({ ...this.filters, limit: MAX_REQUEST_ROWS })}`)
    if (seq !== this.loadSeq) return
    this.renderEmpty()
    this.add(entries, true)
  },

  renderEmpty () {
    this.rows = 0
    this.lastShown = 0
    replace($('requests-table-wrap'), h('table', { class: 'grid requests', testid: 'requests-table' },
      h('thead', {}, h('tr', {}, ['#', 'Time', 'Method', 'Path', 'Ver', 'Integration', 'Agency', 'Status', 'ms', ''].map((c) => h('th', {}, c)))),
      h('tbody', { testid: 'requests-body' })))
    this.updateCount()
  },

  updateCount () {
    $('requests-count').textContent = this.rows === 0
      ? 'No vendor requests yet (or none match the filters). New requests appear here within a second.'
      : `${this.rows} request${this.rows === 1 ? '' : 's'} shown, newest first${this.rows >= MAX_REQUEST_ROWS ? ` (the newest ${MAX_REQUEST_ROWS})` : ''}. Click a row for its query, body and warnings.`
  },

  /**
   * Adds journal entries (oldest first) at the top of the table.
   * @param {JournalEntry[]} entries
   * @param {boolean} [alreadyFiltered] entries the server filtered (a reload)
   */
  add (entries, alreadyFiltered = false) {
    const body = find('requests-body')
    if (!body) return // not shown yet: the first show loads the journal
    if (!alreadyFiltered && !$('requests-live', HTMLInputElement).checked) return
    for (const e of entries) {
      if (e.id <= this.lastShown || (!alreadyFiltered && !this.matcher(e))) continue
      this.lastShown = e.id
      const [row, detail] = this.row(e)
      body.prepend(row, detail) // newest on top, each row followed by its detail
      this.rows++
    }
    while (this.rows > MAX_REQUEST_ROWS && body.lastElementChild) {
      body.lastElementChild.remove()
      body.lastElementChild?.remove()
      this.rows--
    }
    this.updateCount()
  },

  /**
   * A row and its detail row (hidden until the row is clicked).
   * @param {JournalEntry} e
   * @returns {[HTMLElement, HTMLElement]}
   */
  row (e) {
    const notes = []
    if (e.warnings.length > 0) notes.push(badge(`${e.warnings.length} warning${e.warnings.length === 1 ? '' : 's'}`, 'warn'))
    if (e.fault) notes.push(badge(e.fault, 'bad'))
    if (e.answerLost) notes.push(badge(e.answerLost === 'dropped' ? 'answer dropped' : 'client left', 'bad'))
    if (e.body !== undefined) notes.push(badge('body', 'info'))
    const detail = h('tr', { class: 'detail', testid: `request-detail-${e.id}`, hidden: true },
      h('td', { colspan: '10' },
        h('div', { class: 'detail-grid' },
          h('div', {}, h('h4', {}, 'Query'), h('pre', { class: 'json' }, json(e.query))),
          h('div', {}, h('h4', {}, 'Warnings'), e.warnings.length === 0
            ? h('p', { class: 'muted small' }, 'none')
            : h('ul', { class: 'warnings' }, e.warnings.map((w) => h('li', {}, w)))),
          e.fault ? h('div', {}, h('h4', {}, 'Fault'), h('p', {}, `Answered by fault rule ${e.fault}`)) : null),
        e.body === undefined ? null : h('div', {}, h('h4', {}, 'Body as sent'), h('pre', { class: 'json', testid: `request-body-${e.id}` }, json(e.body)))))
    const row = h('tr', {
      class: 'clickable',
      testid: `request-row-${e.id}`,
      dataset: { path: e.path, status: String(e.status), method: e.method },
      onclick: () => { detail.hidden = !detail.hidden }
    },
    h('td', { class: 'num muted' }, String(e.id)),
    h('td', { class: 'mono small', title: e.time }, shortTime(e.time)),
    h('td', {}, h('span', { class: `method m-${e.method.toLowerCase()}` }, e.method)),
    h('td', { class: 'mono path' }, e.path, Object.keys(e.query).length > 0
      ? h('span', { class: 'muted' }, '?' + Object.entries(e.query).map(([k, v]) => `${k}=${v}`).join('&'))
      : null),
    h('td', {}, e.version),
    h('td', {}, e.integration ?? h('span', { class: 'muted' }, '—')),
    h('td', { class: 'num' }, e.agencyId === null ? h('span', { class: 'muted' }, '—') : String(e.agencyId)),
    h('td', {}, badge(String(e.status), statusClass(e.status))),
    h('td', { class: 'num muted' }, e.durationMs.toFixed(1)),
    h('td', {}, notes))
    return [row, detail]
  }
}
