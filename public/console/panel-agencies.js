// @ts-check
// Integrations & agencies: each agency's flags, each integration's subscriptions and scopes.
import { api } from './api.js'
import { $, badge, fail, h, replace, targetOf, toast } from './dom.js'
import { agencyById, loadMeta, loadWorld, patchAgency, world } from './state.js'

/**
 * A labelled switch (a checkbox) calling `onChange` with its new state.
 * @param {string} testid
 * @param {boolean} checked
 * @param {string} label
 * @param {(checked: boolean, input: HTMLInputElement) => unknown} onChange
 * @param {string} title
 */
function flagToggle (testid, checked, label, onChange, title) {
  return h('label', { class: 'switch', title },
    h('input', {
      type: 'checkbox',
      testid,
      checked,
      onchange: (e) => {
        const input = targetOf(e, HTMLInputElement)
        onChange(input.checked, input)
      }
    }),
    h('span', { class: 'switch-label' }, label))
}

export const agenciesPanel = {
  /** @returns {Promise<void>} */
  async show () {
    await Promise.all([loadMeta(), loadWorld()])
    this.render(await this.pendingCounts())
  },

  /** @returns {Promise<Map<number, number>>} pending writes of each agency */
  async pendingCounts () {
    const counts = new Map()
    await Promise.all(world.agencies.map(async (a) => {
      const writes = await api('GET', `/agencies/${a.agencyId}/writes?status=pending`)
      counts.set(a.agencyId, writes.length)
    }))
    return counts
  },

  /**
   * @param {Map<number, number>} pending
   * @returns {void}
   */
  render (pending) {
    /**
     * @param {number} agencyId
     * @param {string} key
     */
    const change = (agencyId, key) => async (/** @type {boolean} */ value, /** @type {HTMLInputElement} */ input) => {
      try {
        await patchAgency(agencyId, { [key]: value })
        await this.show()
      } catch (e) {
        input.checked = !value
        fail(e)
      }
    }
    const rows = world.agencies.map((a) => {
      const waiting = pending.get(a.agencyId) ?? 0
      return h('tr', { testid: `agency-row-${a.agencyId}`, class: a.active ? '' : 'dim' },
        h('td', { class: 'num' }, String(a.agencyId)),
        h('td', {}, h('strong', {}, a.name)),
        h('td', {}, flagToggle(`agency-${a.agencyId}-active`, a.active, a.active ? 'active' : 'inactive', change(a.agencyId, 'active'), 'Inactive agencies answer 403 to every vendor call')),
        h('td', {}, flagToggle(`agency-${a.agencyId}-connected`, a.connected, a.connected ? 'connected' : 'disconnected', change(a.agencyId, 'connected'), 'Disconnected agencies save writes as pending (202); reconnecting applies them')),
        h('td', {}, flagToggle(`agency-${a.agencyId}-supportsIncludes`, a.supportsIncludes, a.supportsIncludes ? 'supported' : 'ignored', change(a.agencyId, 'supportsIncludes'), 'When off, version 3.0 ignores include and answers every granted group')),
        h('td', {},
          h('select', {
            testid: `agency-${a.agencyId}-defaultOffice`,
            onchange: async (e) => {
              const select = targetOf(e, HTMLSelectElement)
              try {
                await patchAgency(a.agencyId, { defaultOfficeId: Number(select.value) })
              } catch (err) {
                select.value = String(a.defaultOfficeId)
                fail(err)
              }
            }
          }, a.offices.map((o) => h('option', {
            value: String(o.officeId),
            selected: o.officeId === a.defaultOfficeId,
            // an archived office takes no new client, so it cannot be the default office
            disabled: o.archived === true
          }, `${o.officeId} · ${o.officeDescription}${o.archived === true ? ' (archived)' : ''}`)))),
        h('td', { class: 'num' }, String(a.users.filter((u) => u.active).length), h('span', { class: 'muted' }, ` / ${a.users.length}`)),
        h('td', { class: 'num', testid: `agency-${a.agencyId}-pending` }, waiting > 0 ? badge(`${waiting} pending`, 'warn') : h('span', { class: 'muted' }, '0')))
    })
    replace($('agencies-table-wrap'), h('table', { class: 'grid', testid: 'agencies-table' },
      h('thead', {}, h('tr', {}, ['Agency', 'Name', 'Active', 'Connected', '3.0 includes', 'Default office', 'Active users', 'Pending writes'].map((c) => h('th', {}, c)))),
      h('tbody', {}, rows)))

    const total = [...pending.values()].reduce((a, b) => a + b, 0)
    const pill = $('pending-total')
    pill.hidden = total === 0
    pill.textContent = String(total)

    replace($('integrations'), world.integrations.map((i) => this.integrationCard(i)))
  },

  /**
   * @param {import('./types.js').Integration} integration
   * @returns {HTMLElement}
   */
  integrationCard (integration) {
    const { scopes, scopeLabels, clientReadScope } = world.meta
    const subscribed = new Set(integration.agencies.map((s) => s.agencyId))
    /**
     * @param {number} agencyId
     * @param {{ optedOut?: boolean, scopes?: string[] }} patch
     */
    const patchSub = async (agencyId, patch) => {
      await api('PATCH', `/integrations/${encodeURIComponent(integration.clientId)}/agencies/${agencyId}`, patch)
      toast(`${integration.clientId} → ${agencyId}: ${Object.entries(patch).map(([k, v]) => `${k} ${Array.isArray(v) ? `[${v.join(', ')}]` : v}`).join(', ')}`, 'ok')
      await this.show()
    }
    const rows = integration.agencies.map((s) => {
      const agency = agencyById(s.agencyId)
      const id = `sub-${integration.clientId}-${s.agencyId}`
      const access = s.optedOut
        ? badge('403: opted out', 'bad')
        : agency && !agency.active
          ? badge('403: agency inactive', 'bad')
          : agency && !agency.connected ? badge('writes pending', 'warn') : badge('available', 'good')
      return h('tr', { testid: id },
        h('td', {}, h('span', { class: 'num' }, String(s.agencyId)), ' ', h('span', { class: 'muted' }, agency?.name ?? '(unknown agency)')),
        h('td', {}, access),
        h('td', {}, flagToggle(`${id}-optedOut`, s.optedOut, s.optedOut ? 'opted out' : 'no', async (value, input) => {
          try { await patchSub(s.agencyId, { optedOut: value }) } catch (e) { input.checked = !value; fail(e) }
        }, 'An opted-out agency answers 403 to this integration')),
        scopes.map((scope) => h('td', { class: 'center' },
          h('input', {
            type: 'checkbox',
            testid: `${id}-scope-${scope}`,
            checked: s.scopes.includes(scope),
            title: scope,
            'aria-label': `${scope} for agency ${s.agencyId}`,
            onchange: async (e) => {
              const box = targetOf(e, HTMLInputElement)
              const granted = box.checked ? scopes.filter((x) => x === scope || s.scopes.includes(x)) : s.scopes.filter((x) => x !== scope)
              try { await patchSub(s.agencyId, { scopes: granted }) } catch (err) { box.checked = !box.checked; fail(err) }
            }
          }))),
        h('td', {}, h('button', {
          type: 'button',
          class: 'link danger',
          testid: `${id}-remove`,
          onclick: async () => {
            try {
              await api('DELETE', `/integrations/${encodeURIComponent(integration.clientId)}/agencies/${s.agencyId}`)
              toast(`${integration.clientId} unsubscribed from ${s.agencyId}`, 'ok')
              await this.show()
            } catch (e) { fail(e) }
          }
        }, 'unsubscribe')))
    })
    const others = world.agencies.filter((a) => !subscribed.has(a.agencyId))
    const addSelect = h('select', { testid: `integration-${integration.clientId}-add-agency` },
      others.map((a) => h('option', { value: String(a.agencyId) }, `${a.agencyId} · ${a.name}`)))
    return h('div', { class: 'card', testid: `integration-${integration.clientId}` },
      h('h3', {}, integration.name, ' ', h('code', {}, integration.clientId)),
      integration.agencies.length === 0
        ? h('p', { class: 'muted' }, 'No agencies: GET /vendor/agencies answers [] for this integration.')
        : h('table', { class: 'grid compact' },
          h('thead', {}, h('tr', {},
            h('th', {}, 'Agency'), h('th', {}, 'Vendor access'), h('th', {}, 'Opted out'),
            scopes.map((scope) => h('th', { class: 'center', title: scope }, scopeLabels[scope] ?? scope, h('br'), h('code', { class: 'small' }, scope))),
            h('th', {}, ''))),
          h('tbody', {}, rows)),
      others.length === 0
        ? null
        : h('div', { class: 'row' },
          addSelect,
          h('button', {
            type: 'button',
            class: 'secondary',
            testid: `integration-${integration.clientId}-subscribe`,
            onclick: async () => {
              try { await patchSub(Number(addSelect.value), { scopes: [clientReadScope] }) } catch (e) { fail(e) }
            }
          }, `Subscribe (${clientReadScope})`)))
  }
}
