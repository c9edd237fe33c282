// @ts-check
// Faults: the fault rules with their counters, a form to add one.
import { api } from './api.js'
import { $, badge, fail, field, fillOptions, h, replace, toast } from './dom.js'
import { loadMeta, world } from './state.js'

/** @typedef {import('./types.js').FaultRule} FaultRule */

/** @param {import('./types.js').FaultMatch} m */
function describeMatch (m) {
  const parts = []
  if (m.method) parts.push(m.method)
  parts.push(m.path ?? '(any path)')
  if (m.version) parts.push(`v${m.version}`)
  if (m.clientId) parts.push(`as ${m.clientId}`)
  if (m.agencyId !== undefined) parts.push(`agency ${m.agencyId}`)
  return parts.join(' ')
}

/** @param {import('./types.js').FaultEffect} e */
function describeEffect (e) {
  const parts = []
  if (e.drop) parts.push('drop connection')
  if (e.dropAnswer) parts.push('handle, then drop the answer')
  if (e.status !== undefined) parts.push(`answer ${e.status}`)
  if (e.delayMs !== undefined) parts.push(`delay ${e.delayMs} ms`)
  if (e.headers && Object.keys(e.headers).length > 0) parts.push(`headers ${Object.entries(e.headers).map(([k, v]) => `${k}: ${v}`).join(', ')}`)
  if (e.body !== undefined) parts.push(`body ${typeof e.body === 'string' ? e.body : JSON.stringify(e.body)}`)
  return parts.join(' · ')
}

/** @param {FaultRule} r */
const describeWhen = (r) => [
  r.times !== undefined ? `${r.times}×` : 'always',
  r.every !== undefined ? `every ${r.every}` : null,
  r.probability !== undefined ? `p=${r.probability} (seed ${r.seed ?? 1})` : null
].filter(Boolean).join(' · ')

/** The version choices of the form, from the server (filled once). */
async function fillVersions () {
  await loadMeta()
  fillOptions($('fault-version', HTMLSelectElement), world.meta.versions)
}

export const faultsPanel = {
  init () {
    $('fault-form').addEventListener('submit', (e) => {
      e.preventDefault()
      this.add().catch(fail)
    })
  },

  /** @returns {Promise<void>} */
  async show () {
    await Promise.all([this.refresh(), fillVersions()])
  },

  /** @returns {Promise<void>} */
  async refresh () {
    /** @type {FaultRule[]} */
    const rules = await api('GET', '/faults')
    const pill = $('faults-total')
    pill.hidden = rules.length === 0
    pill.textContent = String(rules.length)
    const wrap = $('faults-table-wrap')
    if (rules.length === 0) {
      replace(wrap, h('p', { class: 'muted empty', testid: 'faults-empty' }, 'No fault rules: every vendor request is answered normally.'))
      return
    }
    /**
     * A button that runs `action` then shows the rules again.
     * @param {string} testid
     * @param {string} cls
     * @param {string} label
     * @param {() => Promise<void>} action
     */
    const button = (testid, cls, label, action) => h('button', {
      type: 'button',
      class: cls,
      testid,
      onclick: async () => {
        try {
          await action()
          await this.refresh()
        } catch (e) { fail(e) }
      }
    }, label)
    replace(wrap,
      h('table', { class: 'grid', testid: 'faults-table' },
        h('thead', {}, h('tr', {}, ['Rule', 'Match', 'Effect', 'When', 'Matched', 'Hits', 'State', ''].map((c) => h('th', {}, c)))),
        h('tbody', {}, rules.map((r) => h('tr', { testid: `fault-row-${r.id}` },
          h('td', { class: 'mono' }, r.id),
          h('td', { class: 'mono' }, describeMatch(r.match ?? {})),
          h('td', {}, describeEffect(r.effect)),
          h('td', { class: 'small' }, describeWhen(r)),
          h('td', { class: 'num', testid: `fault-matched-${r.id}` }, String(r.matched)),
          h('td', { class: 'num', testid: `fault-hits-${r.id}` }, String(r.hits)),
          h('td', {}, r.exhausted ? badge('exhausted') : badge('active', 'good')),
          h('td', {}, button(`fault-remove-${r.id}`, 'link danger', 'remove', async () => {
            await api('DELETE', `/faults/${encodeURIComponent(r.id)}`)
            toast(`Fault rule ${r.id} removed`, 'ok')
          })))))),
      h('div', { class: 'row' }, button('faults-clear', 'secondary', 'Remove all', async () => {
        await api('DELETE', '/faults')
        toast('Every fault rule removed', 'ok')
      })))
  },

  /** Adds the rule of the form (a header line without a colon is refused before sending). */
  async add () {
    const form = $('fault-form', HTMLFormElement)
    /** @param {string} name */
    const text = (name) => field(form, name).value
    const error = $('fault-error')
    error.hidden = true
    /** @param {string} v */
    const int = (v) => (v.trim() === '' ? undefined : Number(v))
    /** @type {import('./types.js').FaultMatch} */
    const match = {}
    if (text('method')) match.method = text('method')
    if (text('path').trim()) match.path = text('path').trim()
    if (text('version')) match.version = text('version')
    if (text('clientId').trim()) match.clientId = text('clientId').trim()
    const agencyId = int(text('agencyId'))
    if (agencyId !== undefined) match.agencyId = agencyId
    /** @type {import('./types.js').FaultEffect} */
    const effect = {}
    const status = int(text('status'))
    if (status !== undefined) effect.status = status
    const delayMs = int(text('delayMs'))
    if (delayMs !== undefined) effect.delayMs = delayMs
    if ($('fault-drop', HTMLInputElement).checked) effect.drop = true
    const bodyText = text('body')
    if (bodyText.trim() !== '') {
      try { effect.body = JSON.parse(bodyText) } catch { effect.body = bodyText }
    }
    const headerLines = text('headers').split('\n').map((l) => l.trim()).filter(Boolean)
    if (headerLines.length > 0) {
      /** @type {Record<string, string>} */
      const headers = {}
      for (const line of headerLines) {
        const colon = line.indexOf(':')
        if (colon <= 0) {
          error.hidden = false
          error.textContent = `Header line '${line}' is not 'Name: value'`
          return
        }
        headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim()
      }
      effect.headers = headers
    }
    /** @type {import('./types.js').FaultInput} */
    const rule = { match, effect }
    for (const key of /** @type {const} */ (['times', 'every', 'probability', 'seed'])) {
      const v = int(text(key))
      if (v !== undefined) rule[key] = v
    }
    try {
      const created = await api('POST', '/faults', rule)
      toast(`Fault rule ${created.id} added`, 'ok')
      form.reset()
      await this.refresh()
    } catch (e) {
      error.hidden = false
      error.textContent = e instanceof Error ? e.message : String(e)
    }
  }
}
