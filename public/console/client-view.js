// @ts-check
// How a client is shown: its name, its address on one line, its read model grouped.
import { h, json } from './dom.js'

/** @param {import('./types.js').ClientModel} c */
export function clientName (c) {
  const d = c.details ?? {}
  if (d.isCommercial && d.companyName) return String(d.companyName)
  const people = Array.isArray(c.people) ? c.people : []
  const main = people.find((p) => p.mainContactType === 'First') ?? people[0]
  if (main) return [main.firstName, main.middleName, main.lastName].filter(Boolean).join(' ')
  return String(d.companyName ?? `Client ${c.clientNumber}`)
}

/** @param {Record<string, any> | undefined} a */
export function addressLine (a) {
  if (!a) return ''
  return [a.address1, a.city, [a.state, a.zip].filter(Boolean).join(' ')].filter(Boolean).join(', ')
}

/** Groups of the read model shown open (the user's choice is kept while the page lives). */
const openGroups = new Set(['details'])

/**
 * A JSON value, grouped by its top-level keys, each group collapsible.
 * @param {unknown} value
 */
export function readModelView (value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return h('pre', { class: 'json' }, json(value))
  const scalars = Object.entries(value).filter(([, v]) => v === null || typeof v !== 'object')
  const groups = Object.entries(value).filter(([, v]) => v !== null && typeof v === 'object')
  return h('div', { class: 'read-model' },
    scalars.length === 0 ? null : h('dl', { class: 'kv' }, scalars.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])),
    groups.map(([k, v]) => h('details', {
      open: openGroups.has(k),
      class: 'group',
      testid: `group-${k}`,
      ontoggle: (e) => {
        if (/** @type {HTMLDetailsElement} */ (e.target).open) openGroups.add(k)
        else openGroups.delete(k)
      }
    },
    h('summary', {}, k, ' ', h('span', { class: 'muted' }, Array.isArray(v) ? `(${v.length})` : '')),
    h('pre', { class: 'json' }, json(v)))))
}
