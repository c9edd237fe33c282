// agency-sandbox web console: plain ES module, no framework, no build step.
// Every value from the sandbox reaches the DOM as text nodes, textContent or attributes: nothing is parsed as markup.

const SCOPES = ['client-read', 'create-log-attachment-task', 'client-create', 'user-list', 'invoice-read']
const SCOPE_LABELS = {
  'client-read': 'read', 'create-log-attachment-task': 'log/attach', 'client-create': 'create', 'user-list': 'users', 'invoice-read': 'invoices'
}
const ALL_GROUPS = 'Details,People,Contacts,Claims,Policies,Invoices'
const VERSIONS = ['4.0', '3.0', '1']
const TOKEN_KEY = 'agency-sandbox.control-token'
const JOURNAL_POLL_MS = 1000
const MAX_REQUEST_ROWS = 500

// ---------------------------------------------------------------------------------------------
// DOM helpers

const $ = (testid, root = document) => root.querySelector(`[data-testid="${testid}"]`)

/** Creates an element: props are attributes (testid → data-testid, on* → listeners), children text or nodes. */
function h(tag, props, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'class') el.className = value
    else if (key === 'testid') el.dataset.testid = value
    else if (key === 'dataset') Object.assign(el.dataset, value)
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value)
    else if (key === 'value' || key === 'checked' || key === 'disabled' || key === 'hidden') el[key] = value
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  append(el, children)
  return el
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue
    el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return el
}

const replace = (el, ...children) => {
  el.replaceChildren()
  return append(el, children)
}

const badge = (text, kind = '', testid) => h('span', { class: `badge ${kind}`, testid }, text)

const json = (value) => JSON.stringify(value, null, 2)

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

function fmtTime(iso) {
  if (typeof iso !== 'string') return ''
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')
}

function shortTime(iso) {
  if (typeof iso !== 'string') return ''
  const m = /T(\d\d:\d\d:\d\d)/.exec(iso)
  return m === null ? iso : m[1]
}

function debounce(fn, ms) {
  let timer
  return (...args) => {
    clearTimeout(timer)
    timer = setTimeout(() => fn(...args), ms)
  }
}

function toast(text, kind = 'info') {
  const box = $('toasts')
  const item = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status', testid: `toast-${kind}`, onclick: () => item.remove() }, text)
  box.append(item)
  while (box.children.length > 3) box.firstElementChild.remove()
  setTimeout(() => item.remove(), kind === 'error' ? 10_000 : 3_500)
}

const fail = (e) => toast(e instanceof Error ? e.message : String(e), 'error')

// ---------------------------------------------------------------------------------------------
// Control API (with the control token when the sandbox asks for one)

class ApiFailure extends Error {
  constructor(status, message, body) {
    super(message)
    this.status = status
    this.body = body
  }
}

/** The message of an error answer: problem detail and field errors, or the text sent. */
async function failureOf(res, what) {
  const text = await res.text()
  let body = text
  let message = text.trim() || res.statusText
  try {
    body = JSON.parse(text)
    if (body && typeof body === 'object') {
      message = body.detail || body.title || message
      if (Array.isArray(body.errors) && body.errors.length > 0) {
        message += ' (' + body.errors.map((e) => `${e.field}: ${e.message}`).join('; ') + ')'
      }
    }
  } catch { /* text answer */ }
  return new ApiFailure(res.status, `${what}: ${res.status} ${message}`, body)
}

let tokenPrompt

/** Shows the token dialog once for every call waiting on it; resolves true when a token was given. */
function askToken(wasRejected) {
  tokenPrompt ??= new Promise((resolve) => {
    const dialog = $('token-dialog')
    const form = $('token-form')
    const error = $('token-error')
    error.hidden = !wasRejected
    error.textContent = wasRejected ? 'That token was refused; try again.' : ''
    form.reset()
    const onClose = () => {
      dialog.removeEventListener('close', onClose)
      const token = form.elements.token.value.trim()
      tokenPrompt = undefined
      if (dialog.returnValue === 'ok' && token !== '') {
        sessionStorage.setItem(TOKEN_KEY, token)
        $('token-forget').hidden = false
        resolve(true)
      } else resolve(false)
    }
    dialog.addEventListener('close', onClose)
    dialog.returnValue = ''
    dialog.showModal()
  })
  return tokenPrompt
}

function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY)
  return token ? { authorization: `Bearer ${token}` } : {}
}

/** A control call under /_sandbox; JSON in and out. */
async function api(method, path, body, { raw = false } = {}) {
  for (let attempt = 0; ; attempt++) {
    const headers = authHeaders()
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`/_sandbox${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' })
    if (res.status === 401 && attempt < 5) {
      const hadToken = sessionStorage.getItem(TOKEN_KEY) !== null
      sessionStorage.removeItem(TOKEN_KEY)
      if (await askToken(hadToken)) continue
      throw new ApiFailure(401, `${method} /_sandbox${path}: the control API needs its token`)
    }
    if (!res.ok) throw await failureOf(res, `${method} /_sandbox${path}`)
    if (raw) return res
    if (res.status === 204) return undefined
    const type = res.headers.get('content-type') ?? ''
    return type.includes('json') ? res.json() : res.text()
  }
}

const query = (params) => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s === '' ? '' : `?${s}`
}

// ---------------------------------------------------------------------------------------------
// Shared state

const world = {
  agencies: [],
  integrations: [],
  /** clientId → secret, from /_sandbox/state (loaded when a vendor read first needs it). */
  secrets: undefined,
  info: undefined,
  clock: undefined,
  clockFetchedAt: 0
}

const agencyById = (id) => world.agencies.find((a) => a.agencyId === Number(id))

async function loadWorld() {
  const [agencies, integrations] = await Promise.all([api('GET', '/agencies'), api('GET', '/integrations')])
  world.agencies = agencies.sort((a, b) => a.agencyId - b.agencyId)
  world.integrations = integrations
  fillAgencySelects()
}

function fillAgencySelects() {
  for (const testid of ['clients-agency', 'writes-agency']) {
    const select = $(testid)
    const current = select.value
    replace(select, world.agencies.map((a) => h('option', { value: String(a.agencyId) }, `${a.agencyId} · ${a.name}`)))
    if (current !== '' && agencyById(current)) select.value = current
  }
}

async function loadSecrets(force = false) {
  if (world.secrets !== undefined && !force) return world.secrets
  const state = await api('GET', '/state')
  world.secrets = new Map((state.integrations ?? []).map((i) => [i.clientId, i.clientSecret]))
  return world.secrets
}

/** Integrations that can read clients of the agency through the vendor API. */
function readersOf(agencyId) {
  const agency = agencyById(agencyId)
  if (agency === undefined || !agency.active) return []
  return world.integrations.filter((i) => i.agencies.some((s) => s.agencyId === agency.agencyId && !s.optedOut && s.scopes.includes('client-read')))
}

async function loadClock() {
  world.clock = await api('GET', '/clock')
  world.clockFetchedAt = Date.now()
  renderClockText()
}

/** The sandbox clock now: the last answer moved on by the wall clock unless frozen. */
function clockNow() {
  if (world.clock === undefined) return undefined
  const base = Date.parse(world.clock.now)
  return new Date(world.clock.frozen ? base : base + (Date.now() - world.clockFetchedAt))
}

function renderClockText() {
  const now = clockNow()
  if (now === undefined) return
  const text = now.toISOString().replace(/\.\d+Z$/, 'Z')
  const header = $('header-clock')
  header.textContent = `${text.replace('T', ' ')}${world.clock.frozen ? ' · frozen' : ''}`
  header.classList.toggle('frozen', world.clock.frozen)
  const big = $('clock-now')
  if (big) big.textContent = text
}

// ---------------------------------------------------------------------------------------------
// Tabs

const panels = {}
let activeTab = ''

function showTab(name) {
  if (!(name in panels)) name = 'agencies'
  activeTab = name
  for (const link of document.querySelectorAll('[data-tab]')) {
    const on = link.dataset.tab === name
    link.classList.toggle('active', on)
    if (on) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  }
  for (const section of document.querySelectorAll('[data-panel]')) section.hidden = section.dataset.panel !== name
  panels[name].show().catch(fail)
}

// ---------------------------------------------------------------------------------------------
// Integrations & agencies

function flagToggle(testid, checked, label, onChange, title) {
  return h('label', { class: 'switch', title },
    h('input', { type: 'checkbox', testid, checked, onchange: (e) => onChange(e.target.checked, e.target) }),
    h('span', { class: 'switch-label' }, label))
}

async function patchAgency(agencyId, patch) {
  const result = await api('PATCH', `/agencies/${agencyId}`, patch)
  const what = Object.entries(patch).map(([k, v]) => `${k} ${v}`).join(', ')
  let text = `Agency ${agencyId}: ${what}`
  if (patch.connected === true) text += ` · ${result.appliedPendingWrites} pending write${result.appliedPendingWrites === 1 ? '' : 's'} applied`
  toast(text, 'ok')
  await loadWorld()
  return result
}

const agenciesPanel = {
  async show() {
    await loadWorld()
    this.render(await this.pendingCounts())
  },

  async pendingCounts() {
    const counts = new Map()
    await Promise.all(world.agencies.map(async (a) => {
      const writes = await api('GET', `/agencies/${a.agencyId}/writes?status=pending`)
      counts.set(a.agencyId, writes.length)
    }))
    return counts
  },

  render(pending) {
    const change = (agencyId, key) => async (value, input) => {
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
              try {
                await patchAgency(a.agencyId, { defaultOfficeId: Number(e.target.value) })
              } catch (err) {
                e.target.value = String(a.defaultOfficeId)
                fail(err)
              }
            }
          }, a.offices.map((o) => h('option', { value: String(o.officeId), selected: o.officeId === a.defaultOfficeId }, `${o.officeId} · ${o.officeDescription}`)))),
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

  integrationCard(integration) {
    const subscribed = new Set(integration.agencies.map((s) => s.agencyId))
    const patchSub = async (agencyId, patch) => {
      await api('PATCH', `/integrations/${encodeURIComponent(integration.clientId)}/agencies/${agencyId}`, patch)
      toast(`${integration.clientId} → ${agencyId}: ${Object.entries(patch).map(([k, v]) => `${k} ${Array.isArray(v) ? `[${v.join(', ')}]` : v}`).join(', ')}`, 'ok')
      await this.show()
    }
    const rows = integration.agencies.map((s) => {
      const agency = agencyById(s.agencyId)
      const id = `sub-${integration.clientId}-${s.agencyId}`
      const access = s.optedOut ? badge('403: opted out', 'bad')
        : agency && !agency.active ? badge('403: agency inactive', 'bad')
          : agency && !agency.connected ? badge('writes pending', 'warn')
            : badge('available', 'good')
      return h('tr', { testid: id },
        h('td', {}, h('span', { class: 'num' }, String(s.agencyId)), ' ', h('span', { class: 'muted' }, agency?.name ?? '(unknown agency)')),
        h('td', {}, access),
        h('td', {}, flagToggle(`${id}-optedOut`, s.optedOut, s.optedOut ? 'opted out' : 'no', async (value, input) => {
          try { await patchSub(s.agencyId, { optedOut: value }) } catch (e) { input.checked = !value; fail(e) }
        }, 'An opted-out agency answers 403 to this integration')),
        SCOPES.map((scope) => h('td', { class: 'center' },
          h('input', {
            type: 'checkbox', testid: `${id}-scope-${scope}`, checked: s.scopes.includes(scope), title: scope, 'aria-label': `${scope} for agency ${s.agencyId}`,
            onchange: async (e) => {
              const scopes = e.target.checked ? SCOPES.filter((x) => x === scope || s.scopes.includes(x)) : s.scopes.filter((x) => x !== scope)
              try { await patchSub(s.agencyId, { scopes }) } catch (err) { e.target.checked = !e.target.checked; fail(err) }
            }
          }))),
        h('td', {}, h('button', {
          type: 'button', class: 'link danger', testid: `${id}-remove`,
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
            SCOPES.map((scope) => h('th', { class: 'center', title: scope }, SCOPE_LABELS[scope], h('br'), h('code', { class: 'small' }, scope))),
            h('th', {}, ''))),
          h('tbody', {}, rows)),
      others.length === 0 ? null : h('div', { class: 'row' },
        addSelect,
        h('button', {
          type: 'button', class: 'secondary', testid: `integration-${integration.clientId}-subscribe`,
          onclick: async () => {
            try { await patchSub(Number(addSelect.value), { scopes: ['client-read'] }) } catch (e) { fail(e) }
          }
        }, 'Subscribe (client-read)')))
  }
}
panels.agencies = agenciesPanel

// ---------------------------------------------------------------------------------------------
// Clients

function clientName(c) {
  const d = c.details ?? {}
  if (d.isCommercial && d.companyName) return d.companyName
  const people = Array.isArray(c.people) ? c.people : []
  const main = people.find((p) => p.mainContactType === 'First') ?? people[0]
  if (main) return [main.firstName, main.middleName, main.lastName].filter(Boolean).join(' ')
  return d.companyName ?? `Client ${c.clientNumber}`
}

function addressLine(a) {
  if (!a) return ''
  return [a.address1, a.city, [a.state, a.zip].filter(Boolean).join(' ')].filter(Boolean).join(', ')
}

/** Groups of the read model shown open (the user's choice is kept while the page lives). */
const openGroups = new Set(['details'])

/** A JSON value, grouped by its top-level keys, each group collapsible. */
function readModelView(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return h('pre', { class: 'json' }, json(value))
  const scalars = Object.entries(value).filter(([, v]) => v === null || typeof v !== 'object')
  const groups = Object.entries(value).filter(([, v]) => v !== null && typeof v === 'object')
  return h('div', { class: 'read-model' },
    scalars.length === 0 ? null : h('dl', { class: 'kv' }, scalars.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])),
    groups.map(([k, v]) => h('details', {
      open: openGroups.has(k), class: 'group', testid: `group-${k}`,
      ontoggle: (e) => { if (e.target.open) openGroups.add(k); else openGroups.delete(k) }
    },
      h('summary', {}, k, ' ', h('span', { class: 'muted' }, Array.isArray(v) ? `(${v.length})` : '')),
      h('pre', { class: 'json' }, json(v)))))
}

const clientsPanel = {
  selected: undefined, // { agencyId, clientNumber }
  version: '4.0',
  reader: '',
  searchSeq: 0,

  init() {
    const form = $('clients-form')
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      this.search().catch(fail)
    })
    $('clients-search').addEventListener('input', debounce(() => this.search().catch(fail), 250))
    $('clients-agency').addEventListener('change', () => {
      this.selected = undefined
      this.reader = ''
      replace($('client-view'), h('p', { class: 'muted empty' }, 'Pick a client to see its read model and what partners wrote to it.'))
      this.search().catch(fail)
    })
  },

  async show() {
    if (world.agencies.length === 0) await loadWorld()
    await this.search()
    if (this.selected) await this.refreshActivity()
  },

  async open(agencyId, clientNumber) {
    $('clients-agency').value = String(agencyId)
    if (activeTab !== 'clients') location.hash = '#clients'
    await this.select(agencyId, clientNumber)
  },

  async search() {
    const agencyId = $('clients-agency').value
    if (agencyId === '') return
    const q = $('clients-search').value.trim()
    const seq = ++this.searchSeq
    const clients = await api('GET', `/agencies/${agencyId}/clients${query({ q, limit: 100 })}`)
    if (seq !== this.searchSeq) return
    $('clients-count').textContent = `${clients.length}${clients.length === 100 ? '+' : ''} client${clients.length === 1 ? '' : 's'}`
    const needle = q.toLowerCase()
    replace($('clients-results'), clients.length === 0 ? h('li', { class: 'muted empty' }, 'No client matches.') : clients.map((c) => {
      const policies = (c.policies ?? []).map((p) => p.policyNumber).filter(Boolean)
      const matched = needle === '' ? [] : policies.filter((p) => p.toLowerCase().includes(needle))
      const shown = matched.length > 0 ? matched : policies.slice(0, 2)
      const isSelected = this.selected && this.selected.clientNumber === c.clientNumber && this.selected.agencyId === Number(agencyId)
      return h('li', {},
        h('button', {
          type: 'button', class: `result${isSelected ? ' selected' : ''}`, testid: `client-result-${c.clientNumber}`,
          onclick: () => this.select(Number(agencyId), c.clientNumber).catch(fail)
        },
        h('span', { class: 'result-title' }, h('span', { class: 'num' }, `#${c.clientNumber}`), ' ', clientName(c),
          c.deleted ? badge('deleted', 'bad') : null, c.details?.isCommercial ? badge('commercial') : null),
        h('span', { class: 'result-sub muted' },
          [shown.length > 0 ? shown.join(', ') + (policies.length > shown.length ? ` +${policies.length - shown.length}` : '') : 'no policies',
            addressLine(c.details?.mailingAddress)].filter(Boolean).join(' · '))))
    }))
  },

  async select(agencyId, clientNumber) {
    this.selected = { agencyId, clientNumber }
    for (const b of document.querySelectorAll('[data-testid^="client-result-"]')) {
      b.classList.toggle('selected', b.dataset.testid === `client-result-${clientNumber}`)
    }
    const control = await api('GET', `/agencies/${agencyId}/clients/${clientNumber}`)
    const readers = readersOf(agencyId)
    if (!readers.some((r) => r.clientId === this.reader)) this.reader = readers[0]?.clientId ?? ''
    const shown = () => (this.reader === '' ? 'control' : this.version)

    const view = $('client-view')
    const versionButtons = [...VERSIONS, 'control'].map((v) => h('button', {
      type: 'button', testid: `client-version-${v}`, class: `seg${v === shown() ? ' on' : ''}`, 'aria-pressed': String(v === shown()),
      disabled: v !== 'control' && readers.length === 0,
      title: v === 'control' ? 'The control plane read model (GET /_sandbox/agencies/…/clients/…)' : `GET /vendor/…/client/${clientNumber}${v === '1' ? '' : `?version=${v}`}`,
      onclick: () => {
        this.version = v
        for (const b of view.querySelectorAll('.seg')) {
          b.classList.toggle('on', b.dataset.testid === `client-version-${v}`)
          b.setAttribute('aria-pressed', String(b.dataset.testid === `client-version-${v}`))
        }
        this.renderReadModel(control).catch(fail)
      }
    }, v === 'control' ? 'control plane' : v === '1' ? 'version 1' : v))

    const readerSelect = readers.length === 0
      ? h('span', { class: 'muted small', testid: 'client-integration-none' }, 'No integration can read this agency (client-read, not opted out, agency active): showing the control-plane read model.')
      : h('label', { class: 'inline' }, 'read as', h('select', {
        testid: 'client-integration',
        onchange: (e) => {
          this.reader = e.target.value
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

  async renderReadModel(control) {
    const { agencyId, clientNumber } = this.selected
    const meta = $('client-read-meta')
    const target = $('client-json')
    if (this.version === 'control' || this.reader === '') {
      meta.textContent = `GET /_sandbox/agencies/${agencyId}/clients/${clientNumber} (control plane, every group, deleted flag)`
      replace(target, readModelView(control))
      return
    }
    const version = this.version
    const path = `/vendor/agency/${agencyId}/client/${clientNumber}${version === '1' ? '' : `?version=${version}&include=${ALL_GROUPS}`}`
    let secrets = await loadSecrets()
    let res
    for (let attempt = 0; attempt < 2; attempt++) {
      const secret = secrets.get(this.reader) ?? ''
      const basic = btoa(String.fromCharCode(...new TextEncoder().encode(`${this.reader}:${secret}`)))
      // Marked as the console's own read: kept out of the request journal and fault rules.
      res = await fetch(path, { headers: { authorization: `Basic ${basic}`, 'x-sandbox-console': '1' }, cache: 'no-store' })
      if (res.status !== 401) break
      secrets = await loadSecrets(true) // the secret may have changed since it was loaded
    }
    if (this.version !== version || this.selected?.clientNumber !== clientNumber) return // the user moved on
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

  async refreshActivity() {
    if (!this.selected) return
    const { agencyId, clientNumber } = this.selected
    const target = $('client-activity')
    if (!target) return
    const writes = await api('GET', `/agencies/${agencyId}/writes?clientNumber=${clientNumber}`)
    if (this.selected?.clientNumber !== clientNumber || this.selected?.agencyId !== agencyId) return
    const of = (kind) => writes.filter((w) => w.kind === kind)
    const status = (w) => badge(w.status, w.status === 'pending' ? 'warn' : 'good', `status-${w.refId}`)
    const meta = (w) => h('span', { class: 'muted small' }, ` ${fmtTime(w.data.ts ?? w.receivedAt)} · ${w.integration} · v${w.version}`)
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
      list('client-receipts', 'Receipts', of('receipt'), (w) => [status(w), ' ',
        h('span', {}, [w.data.payMethod, w.data.amount !== undefined ? `$${w.data.amount}` : null, w.data.logNote].filter((x) => x !== undefined && x !== null && x !== '').join(' · ')), meta(w)]),
      list('client-tasks', 'Tasks', tasks, (w) => {
        const t = w.data.task
        return [status(w), ' ', h('strong', {}, String(t.title ?? '(untitled)')), h('span', { class: 'muted small' }, ` for ${t.assignedToRole ?? t.assignedTo ?? '?'}${t.assignedToEmail ? ` (${t.assignedToEmail})` : ''} · due ${fmtTime(t.dueDate)} · from a ${w.kind}`),
          t.description ? h('div', { class: 'note small' }, String(t.description)) : null]
      }))
  }
}
panels.clients = clientsPanel

/** A download link for an attachment's bytes (fetched with the control token when one is set). */
function downloadLink(agencyId, w) {
  const name = `${w.data.fileName ?? 'attachment'}${w.data.fileExt ? `.${w.data.fileExt}` : ''}`
  const href = `/_sandbox/agencies/${agencyId}/attachments/${encodeURIComponent(w.refId)}/content`
  return h('a', {
    href, download: name, testid: `attachment-download-${w.refId}`,
    onclick: async (e) => {
      if (!sessionStorage.getItem(TOKEN_KEY)) return // a plain link works without a token
      e.preventDefault()
      try {
        const res = await api('GET', href.slice('/_sandbox'.length), undefined, { raw: true })
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

// ---------------------------------------------------------------------------------------------
// Writes

function writeSummary(agencyId, w) {
  const d = w.data ?? {}
  const parts = []
  if (w.kind === 'attachment') parts.push(downloadLink(agencyId, w), ' ', String(d.description ?? ''))
  else if (w.kind === 'receipt') parts.push([d.payMethod, d.amount !== undefined ? `$${d.amount}` : null, d.logNote].filter((x) => x !== undefined && x !== null && x !== '').join(' · '))
  else parts.push(String(d.note ?? d.logNote ?? ''))
  if (d.task) parts.push(' ', badge(`task: ${d.task.title ?? ''}`, 'info'))
  return parts
}

const writesPanel = {
  open: new Set(),

  init() {
    const form = $('writes-form')
    form.addEventListener('change', () => this.refresh().catch(fail))
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      this.refresh().catch(fail)
    })
    $('writes-refresh').addEventListener('click', () => this.show().catch(fail))
  },

  async show() {
    await loadWorld()
    await this.refresh()
  },

  async refresh() {
    const agencyId = Number($('writes-agency').value)
    if (!agencyId) return
    const form = $('writes-form')
    const filters = { kind: form.elements.kind.value, status: form.elements.status.value, clientNumber: form.elements.client.value }
    const [writes, pending] = await Promise.all([
      api('GET', `/agencies/${agencyId}/writes${query(filters)}`),
      api('GET', `/agencies/${agencyId}/writes?status=pending`)
    ])
    this.renderBar(agencyId, pending.length)
    this.renderTable(agencyId, writes)
  },

  renderBar(agencyId, pendingCount) {
    const a = agencyById(agencyId)
    if (!a) return
    const bar = $('writes-agency-bar')
    const reconnect = h('button', {
      type: 'button', testid: 'writes-reconnect', class: 'primary',
      onclick: async () => {
        try {
          const result = await patchAgency(agencyId, { connected: true })
          const msg = $('writes-message')
          msg.hidden = false
          msg.textContent = `Agency ${agencyId} reconnected: ${result.appliedPendingWrites} pending write${result.appliedPendingWrites === 1 ? '' : 's'} applied.`
          await this.refresh()
        } catch (e) { fail(e) }
      }
    }, pendingCount > 0 ? `Reconnect agency (applies ${pendingCount} pending)` : 'Reconnect agency')
    const disconnect = h('button', {
      type: 'button', testid: 'writes-disconnect', class: 'secondary',
      onclick: async () => {
        try {
          await patchAgency(agencyId, { connected: false })
          const msg = $('writes-message')
          msg.hidden = false
          msg.textContent = `Agency ${agencyId} disconnected: writes are now saved as pending (202) until it reconnects.`
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

  renderTable(agencyId, writes) {
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
        testid: `write-row-${w.refId}`, class: 'clickable', dataset: { status: w.status, kind: w.kind },
        onclick: (e) => {
          if (e.target.closest('a, button')) return
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
panels.writes = writesPanel

// ---------------------------------------------------------------------------------------------
// Requests (the journal, polled every second)

/** Same glob as the journal's filter: * within a segment, ** across, ? one character. */
function globToRegExp(glob) {
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

const statusClass = (s) => (s >= 500 ? 'bad' : s >= 400 ? 'warn' : s === 202 ? 'info' : 'good')

const requestsPanel = {
  rows: 0,
  /** Highest journal id in the table (the poller and a reload can overlap). */
  lastShown: 0,
  filters: {},
  matcher: () => true,
  loadSeq: 0,

  init() {
    const form = $('requests-form')
    const reload = debounce(() => this.reload().catch(fail), 250)
    form.addEventListener('input', (e) => {
      if (e.target.name !== 'live') reload()
    })
    // Entries that arrived while paused are loaded again when live resumes.
    $('requests-live').addEventListener('change', (e) => {
      if (e.target.checked) this.reload().catch(fail)
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

  async show() {
    if (this.rows === 0 && $('requests-table') === null) await this.reload()
  },

  readFilters() {
    const f = $('requests-form').elements
    const filters = { method: f.method.value, path: f.path.value.trim(), status: f.status.value, agencyId: f.agency.value }
    const path = filters.path === '' ? undefined : globToRegExp(filters.path)
    this.filters = filters
    this.matcher = (e) =>
      (filters.method === '' || e.method === filters.method) &&
      (path === undefined || path.test(e.path)) &&
      (filters.status === '' || e.status === Number(filters.status)) &&
      (filters.agencyId === '' || e.agencyId === Number(filters.agencyId))
  },

  async reload() {
    this.readFilters()
    const seq = ++this.loadSeq
    const entries = await api('GET', `/requests${query({ ...this.filters, limit: MAX_REQUEST_ROWS })}`)
    if (seq !== this.loadSeq) return
    this.renderEmpty()
    this.add(entries, true)
  },

  renderEmpty() {
    this.rows = 0
    this.lastShown = 0
    replace($('requests-table-wrap'), h('table', { class: 'grid requests', testid: 'requests-table' },
      h('thead', {}, h('tr', {}, ['#', 'Time', 'Method', 'Path', 'Ver', 'Integration', 'Agency', 'Status', 'ms', ''].map((c) => h('th', {}, c)))),
      h('tbody', { testid: 'requests-body' })))
    this.updateCount()
  },

  updateCount() {
    $('requests-count').textContent = this.rows === 0
      ? 'No vendor requests yet (or none match the filters). New requests appear here within a second.'
      : `${this.rows} request${this.rows === 1 ? '' : 's'} shown, newest first${this.rows >= MAX_REQUEST_ROWS ? ` (the newest ${MAX_REQUEST_ROWS})` : ''}. Click a row for its query, body and warnings.`
  },

  /** Adds journal entries (oldest first) at the top of the table. */
  add(entries, alreadyFiltered = false) {
    const body = $('requests-body')
    if (!body) return // not shown yet: the first show loads the journal
    if (!alreadyFiltered && !$('requests-live').checked) return
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

  row(e) {
    const notes = []
    if (e.warnings.length > 0) notes.push(badge(`${e.warnings.length} warning${e.warnings.length === 1 ? '' : 's'}`, 'warn'))
    if (e.fault) notes.push(badge(e.fault, 'bad'))
    if (e.body !== undefined) notes.push(badge('body', 'info'))
    const detail = h('tr', { class: 'detail', testid: `request-detail-${e.id}`, hidden: true },
      h('td', { colspan: '10' },
        h('div', { class: 'detail-grid' },
          h('div', {}, h('h4', {}, 'Query'), h('pre', { class: 'json' }, json(e.query))),
          h('div', {}, h('h4', {}, 'Warnings'), e.warnings.length === 0 ? h('p', { class: 'muted small' }, 'none')
            : h('ul', { class: 'warnings' }, e.warnings.map((w) => h('li', {}, w)))),
          e.fault ? h('div', {}, h('h4', {}, 'Fault'), h('p', {}, `Answered by fault rule ${e.fault}`)) : null),
        e.body === undefined ? null : h('div', {}, h('h4', {}, 'Body as sent'), h('pre', { class: 'json', testid: `request-body-${e.id}` }, json(e.body)))))
    const row = h('tr', {
      class: 'clickable', testid: `request-row-${e.id}`, dataset: { path: e.path, status: String(e.status), method: e.method },
      onclick: () => { detail.hidden = !detail.hidden }
    },
    h('td', { class: 'num muted' }, String(e.id)),
    h('td', { class: 'mono small', title: e.time }, shortTime(e.time)),
    h('td', {}, h('span', { class: `method m-${e.method.toLowerCase()}` }, e.method)),
    h('td', { class: 'mono path' }, e.path, Object.keys(e.query).length > 0
      ? h('span', { class: 'muted' }, '?' + Object.entries(e.query).map(([k, v]) => `${k}=${v}`).join('&')) : null),
    h('td', {}, e.version),
    h('td', {}, e.integration ?? h('span', { class: 'muted' }, '—')),
    h('td', { class: 'num' }, e.agencyId === null ? h('span', { class: 'muted' }, '—') : String(e.agencyId)),
    h('td', {}, badge(String(e.status), statusClass(e.status))),
    h('td', { class: 'num muted' }, e.durationMs.toFixed(1)),
    h('td', {}, notes))
    return [row, detail]
  }
}
panels.requests = requestsPanel

/** Polls the journal for entries after the last seen id and tells the panels what changed. */
const journalPoller = {
  lastId: undefined,
  running: false,

  async tick() {
    const dot = $('live-status')
    try {
      if (this.lastId === undefined) {
        const latest = await api('GET', '/requests?limit=1')
        this.lastId = latest.length === 0 ? 0 : latest[latest.length - 1].id
      } else {
        const entries = await api('GET', `/requests?since=${this.lastId}`)
        if (entries.length > 0) {
          this.lastId = entries[entries.length - 1].id
          this.dispatch(entries)
        }
      }
      dot.classList.add('on')
      dot.classList.remove('off')
      dot.title = 'Request journal: live'
    } catch (e) {
      dot.classList.remove('on')
      dot.classList.add('off')
      dot.title = `Request journal: ${e.message}`
    }
  },

  dispatch(entries) {
    requestsPanel.add(entries)
    const writes = entries.filter((e) => e.method !== 'GET' && e.agencyId !== null)
    if (writes.length > 0) {
      const agencies = new Set(writes.map((e) => e.agencyId))
      if (activeTab === 'writes' && agencies.has(Number($('writes-agency').value))) writesPanel.refresh().catch(fail)
      if (activeTab === 'clients' && clientsPanel.selected && agencies.has(clientsPanel.selected.agencyId)) clientsPanel.refreshActivity().catch(fail)
      if (activeTab === 'agencies') agenciesPanel.show().catch(fail)
    }
    if (activeTab === 'faults' && entries.some((e) => e.path.startsWith('/vendor/'))) faultsPanel.refresh().catch(fail)
  },

  start() {
    if (this.running) return
    this.running = true
    const loop = async () => {
      if (document.visibilityState !== 'hidden' && !$('token-dialog').open) await this.tick()
      setTimeout(loop, JOURNAL_POLL_MS)
    }
    loop()
  }
}

// ---------------------------------------------------------------------------------------------
// Faults

function describeMatch(m) {
  const parts = []
  if (m.method) parts.push(m.method)
  parts.push(m.path ?? '(any path)')
  if (m.version) parts.push(`v${m.version}`)
  if (m.clientId) parts.push(`as ${m.clientId}`)
  if (m.agencyId !== undefined) parts.push(`agency ${m.agencyId}`)
  return parts.join(' ')
}

function describeEffect(e) {
  const parts = []
  if (e.drop) parts.push('drop connection')
  if (e.status !== undefined) parts.push(`answer ${e.status}`)
  if (e.delayMs !== undefined) parts.push(`delay ${e.delayMs} ms`)
  if (e.headers && Object.keys(e.headers).length > 0) parts.push(`headers ${Object.entries(e.headers).map(([k, v]) => `${k}: ${v}`).join(', ')}`)
  if (e.body !== undefined) parts.push(`body ${typeof e.body === 'string' ? e.body : JSON.stringify(e.body)}`)
  return parts.join(' · ')
}

const faultsPanel = {
  init() {
    $('fault-form').addEventListener('submit', (e) => {
      e.preventDefault()
      this.add().catch(fail)
    })
  },

  async show() {
    await this.refresh()
  },

  async refresh() {
    const rules = await api('GET', '/faults')
    const pill = $('faults-total')
    pill.hidden = rules.length === 0
    pill.textContent = String(rules.length)
    const wrap = $('faults-table-wrap')
    if (rules.length === 0) {
      replace(wrap, h('p', { class: 'muted empty', testid: 'faults-empty' }, 'No fault rules: every vendor request is answered normally.'))
      return
    }
    replace(wrap,
      h('table', { class: 'grid', testid: 'faults-table' },
        h('thead', {}, h('tr', {}, ['Rule', 'Match', 'Effect', 'When', 'Matched', 'Hits', 'State', ''].map((c) => h('th', {}, c)))),
        h('tbody', {}, rules.map((r) => h('tr', { testid: `fault-row-${r.id}` },
          h('td', { class: 'mono' }, r.id),
          h('td', { class: 'mono' }, describeMatch(r.match ?? {})),
          h('td', {}, describeEffect(r.effect)),
          h('td', { class: 'small' }, [r.times !== undefined ? `${r.times}×` : 'always', r.every !== undefined ? `every ${r.every}` : null,
            r.probability !== undefined ? `p=${r.probability} (seed ${r.seed ?? 1})` : null].filter(Boolean).join(' · ')),
          h('td', { class: 'num', testid: `fault-matched-${r.id}` }, String(r.matched)),
          h('td', { class: 'num', testid: `fault-hits-${r.id}` }, String(r.hits)),
          h('td', {}, r.exhausted ? badge('exhausted') : badge('active', 'good')),
          h('td', {}, h('button', {
            type: 'button', class: 'link danger', testid: `fault-remove-${r.id}`,
            onclick: async () => {
              try {
                await api('DELETE', `/faults/${encodeURIComponent(r.id)}`)
                toast(`Fault rule ${r.id} removed`, 'ok')
                await this.refresh()
              } catch (e) { fail(e) }
            }
          }, 'remove')))))),
      h('div', { class: 'row' }, h('button', {
        type: 'button', class: 'secondary', testid: 'faults-clear',
        onclick: async () => {
          try {
            await api('DELETE', '/faults')
            toast('Every fault rule removed', 'ok')
            await this.refresh()
          } catch (e) { fail(e) }
        }
      }, 'Remove all')))
  },

  async add() {
    const f = $('fault-form').elements
    const error = $('fault-error')
    error.hidden = true
    const int = (v) => (v.trim() === '' ? undefined : Number(v))
    const match = {}
    if (f.method.value) match.method = f.method.value
    if (f.path.value.trim()) match.path = f.path.value.trim()
    if (f.version.value) match.version = f.version.value
    if (f.clientId.value.trim()) match.clientId = f.clientId.value.trim()
    if (int(f.agencyId.value) !== undefined) match.agencyId = int(f.agencyId.value)
    const effect = {}
    if (int(f.status.value) !== undefined) effect.status = int(f.status.value)
    if (int(f.delayMs.value) !== undefined) effect.delayMs = int(f.delayMs.value)
    if (f.drop.checked) effect.drop = true
    const bodyText = f.body.value
    if (bodyText.trim() !== '') {
      try { effect.body = JSON.parse(bodyText) } catch { effect.body = bodyText }
    }
    const headerLines = f.headers.value.split('\n').map((l) => l.trim()).filter(Boolean)
    if (headerLines.length > 0) {
      effect.headers = {}
      for (const line of headerLines) {
        const colon = line.indexOf(':')
        if (colon <= 0) {
          error.hidden = false
          error.textContent = `Header line '${line}' is not 'Name: value'`
          return
        }
        effect.headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim()
      }
    }
    const rule = { match, effect }
    for (const key of ['times', 'every', 'probability', 'seed']) {
      const v = int(f[key].value)
      if (v !== undefined) rule[key] = v
    }
    try {
      const created = await api('POST', '/faults', rule)
      toast(`Fault rule ${created.id} added`, 'ok')
      $('fault-form').reset()
      await this.refresh()
    } catch (e) {
      error.hidden = false
      error.textContent = e.message
    }
  }
}
panels.faults = faultsPanel

// ---------------------------------------------------------------------------------------------
// Clock & sandbox

const clockPanel = {
  resetArmed: false,

  init() {
    const error = $('clock-error')
    const run = async (fn) => {
      error.hidden = true
      try {
        await fn()
      } catch (e) {
        error.hidden = false
        error.textContent = e.message
      }
    }
    $('clock-set-form').addEventListener('submit', (e) => {
      e.preventDefault()
      run(async () => {
        const now = e.target.elements.now.value.trim()
        if (now === '') throw new Error('Enter a date-time such as 2026-11-22T09:00:00Z')
        this.applyClock(await api('PUT', '/clock', { now }))
        toast(`Clock set to ${world.clock.now}`, 'ok')
      })
    })
    $('clock-freeze').addEventListener('click', () => run(async () => {
      this.applyClock(await api('PUT', '/clock', { frozen: !world.clock?.frozen }))
      toast(world.clock.frozen ? 'Clock frozen' : 'Clock running', 'ok')
    }))
    const advance = (seconds) => run(async () => {
      if (!(seconds > 0)) throw new Error('Advance by a positive number of seconds')
      this.applyClock(await api('POST', '/clock/advance', { seconds }))
      toast(`Clock advanced by ${seconds} s to ${world.clock.now}`, 'ok')
    })
    $('clock-advance-form').addEventListener('submit', (e) => {
      e.preventDefault()
      advance(Number(e.target.elements.seconds.value))
    })
    for (const b of document.querySelectorAll('[data-advance]')) b.addEventListener('click', () => advance(Number(b.dataset.advance)))
    const reset = $('sandbox-reset')
    reset.addEventListener('click', () => {
      if (!this.resetArmed) {
        this.resetArmed = true
        reset.textContent = 'Click again to reset everything'
        reset.classList.add('armed')
        setTimeout(() => {
          this.resetArmed = false
          reset.textContent = 'Reset to the start-up fixture'
          reset.classList.remove('armed')
        }, 4000)
        return
      }
      this.resetArmed = false
      reset.textContent = 'Reset to the start-up fixture'
      reset.classList.remove('armed')
      run(async () => {
        await api('POST', '/reset')
        world.secrets = undefined
        clientsPanel.selected = undefined
        toast('Sandbox reset to its start-up fixture', 'ok')
        await loadWorld()
        await this.show()
      })
    })
  },

  applyClock(clock) {
    world.clock = clock
    world.clockFetchedAt = Date.now()
    this.renderState()
    renderClockText()
  },

  renderState() {
    const c = world.clock
    if (!c) return
    const state = $('clock-state')
    state.textContent = c.frozen ? 'frozen' : 'running'
    state.className = `badge ${c.frozen ? 'warn' : 'good'}`
    $('clock-freeze').textContent = c.frozen ? 'Unfreeze (let time run)' : 'Freeze (time stands still)'
    const input = $('clock-set-input')
    if (document.activeElement !== input) input.value = c.now
  },

  async show() {
    const [info] = await Promise.all([api('GET', '/info'), loadClock()])
    world.info = info
    this.renderState()
    const counts = info.counts
    const rows = [
      ['Version', info.version],
      ['Started', fmtTime(info.startedAt)],
      ['Fixture', info.fixture],
      ['Database', info.settings.db],
      ['Integrations', counts.integrations],
      ['Agencies', counts.agencies],
      ['Clients', counts.clients],
      ['Writes', `${counts.writes.pending} pending · ${counts.writes.applied} applied`],
      ['Journal', `${counts.journal} of ${info.settings.journalSize} entries`],
      ['Fault rules', counts.faults],
      ['Simulator', info.simulator.running ? `running (${info.simulator.changes} changes)` : 'stopped'],
      ['Control token', info.settings.controlToken ? 'required' : 'not set']
    ]
    replace($('sandbox-info'), rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]))
  }
}
panels.clock = clockPanel

// ---------------------------------------------------------------------------------------------
// Start

async function start() {
  const forget = $('token-forget')
  forget.hidden = !sessionStorage.getItem(TOKEN_KEY)
  forget.addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY)
    forget.hidden = true
    toast('Control token forgotten for this tab', 'ok')
  })
  clientsPanel.init()
  writesPanel.init()
  requestsPanel.init()
  faultsPanel.init()
  clockPanel.init()

  try {
    const [info] = await Promise.all([api('GET', '/info'), loadWorld(), loadClock()])
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
    if (document.visibilityState !== 'hidden' && !$('token-dialog').open) loadClock().catch(() => {})
  }, 15_000)

  window.addEventListener('hashchange', () => showTab(location.hash.slice(1)))
  showTab(location.hash.slice(1) || 'agencies')
  journalPoller.start()
  document.body.dataset.ready = 'true'
}

start()
