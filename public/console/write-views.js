// @ts-check
// How partner writes are shown: download links, one-line summaries, a client's activity.
import { TOKEN_KEY, api, controlUrl } from './api.js'
import { badge, fail, fmtTime, h, replace } from './dom.js'

/** @typedef {import('./types.js').WriteView} WriteView */

/**
 * A download link for an attachment's bytes (fetched with the control token when one is set).
 * @param {number} agencyId
 * @param {WriteView} w
 */
export function downloadLink (agencyId, w) {
  const name = `${w.data.fileName ?? 'attachment'}${w.data.fileExt ? `.${w.data.fileExt}` : ''}`
  const path = `/agencies/${agencyId}/attachments/${encodeURIComponent(w.refId)}/content`
  return h('a', {
    href: controlUrl(path),
    download: name,
    testid: `attachment-download-${w.refId}`,
    onclick: async (e) => {
      if (!sessionStorage.getItem(TOKEN_KEY)) return // a plain link works without a token
      e.preventDefault()
      try {
        const res = await api('GET', path, undefined, { raw: true })
        const url = URL.createObjectURL(await res.blob())
        const a = h('a', { href: url, download: name })
        document.body.append(a)
        a.click()
        a.remove()
        setTimeout(() => URL.revokeObjectURL(url), 10_000)
      } catch (err) { fail(err) }
    }
  }, name)
}

/**
 * A receipt's payment method, amount and log note.
 * @param {Record<string, any>} d
 */
const receiptLine = (d) =>
  [d.payMethod, d.amount !== undefined ? `$${d.amount}` : null, d.logNote].filter((x) => x !== undefined && x !== null && x !== '').join(' · ')

/**
 * The content column of the writes table.
 * @param {number} agencyId
 * @param {WriteView} w
 * @returns {(string | Node)[]}
 */
export function writeSummary (agencyId, w) {
  const d = w.data ?? {}
  /** @type {(string | Node)[]} */
  const parts = []
  if (w.kind === 'attachment') parts.push(downloadLink(agencyId, w), ' ', String(d.description ?? ''))
  else if (w.kind === 'receipt') parts.push(receiptLine(d))
  else parts.push(String(d.note ?? d.logNote ?? ''))
  if (d.task) parts.push(' ', badge(`task: ${d.task.title ?? ''}`, 'info'))
  return parts
}

/**
 * A client's log notes, attachments, receipts and tasks, each write with its status.
 * @param {HTMLElement} target
 * @param {number} agencyId
 * @param {WriteView[]} writes
 */
export function renderActivity (target, agencyId, writes) {
  /** @param {string} kind */
  const of = (kind) => writes.filter((w) => w.kind === kind)
  /** @param {WriteView} w */
  const status = (w) => badge(w.status, w.status === 'pending' ? 'warn' : 'good', `status-${w.refId}`)
  /** @param {WriteView} w */
  const meta = (w) => h('span', { class: 'muted small' }, ` ${fmtTime(w.data.ts ?? w.receivedAt)} · ${w.integration} · v${w.version}`)
  /**
   * @param {string} testid
   * @param {string} title
   * @param {WriteView[]} items
   * @param {(w: WriteView) => import('./dom.js').Child} render
   */
  const list = (testid, title, items, render) => h('div', { class: 'activity-group', testid },
    h('h4', {}, title, ' ', h('span', { class: 'muted' }, `(${items.length})`)),
    items.length === 0 ? h('p', { class: 'muted small' }, 'none') : h('ul', {}, items.map((w) => h('li', { testid: `client-write-${w.refId}` }, render(w)))))
  const logs = [...of('log'), ...of('client')]
  const tasks = writes.filter((w) => w.data && typeof w.data.task === 'object' && w.data.task !== null)
  replace(target,
    list('client-logs', 'Log notes', logs, (w) => [status(w), ' ', h('span', { class: 'note' }, String(w.data.note ?? '')), meta(w),
      w.kind === 'client' ? h('span', { class: 'muted small' }, ' (created the client)') : null]),
    list('client-attachments', 'Attachments', of('attachment'), (w) => [status(w), ' ',
      downloadLink(agencyId, w), ' ', h('span', {}, String(w.data.description ?? '')),
      h('span', { class: 'muted small' }, ` ${w.data.size ?? '?'} bytes`), meta(w),
      w.data.logNote ? h('div', { class: 'note small' }, `Log note: ${w.data.logNote}`) : null]),
    list('client-receipts', 'Receipts', of('receipt'), (w) => [status(w), ' ', h('span', {}, receiptLine(w.data)), meta(w)]),
    list('client-tasks', 'Tasks', tasks, (w) => {
      const t = w.data.task
      return [status(w), ' ', h('strong', {}, String(t.title ?? '(untitled)')),
        h('span', { class: 'muted small' }, ` for ${t.assignedToRole ?? t.assignedTo ?? '?'}${t.assignedToEmail ? ` (${t.assignedToEmail})` : ''} · due ${fmtTime(t.dueDate)} · from a ${w.kind}`),
        t.description ? h('div', { class: 'note small' }, String(t.description)) : null]
    }))
}
