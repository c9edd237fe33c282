// @ts-check
// DOM helpers. Every value from the sandbox reaches the page as text nodes, textContent or
// attributes: nothing is parsed as markup.

/**
 * A child of `h`: text, a node, nothing, or a (nested) list of children.
 * @typedef {string | number | Node | null | undefined | false | readonly unknown[]} Child
 */

/**
 * Attributes of `h`: testid → data-testid, dataset → data-*, on* → listeners; `false`, null and
 * undefined leave the attribute out.
 * @typedef {{ [name: string]: unknown, dataset?: Record<string, string>,
 *   onclick?: (e: MouseEvent) => unknown, onchange?: (e: Event) => unknown, ontoggle?: (e: Event) => unknown }} Props
 */

/**
 * The element with this data-testid; throws when the page has none of that type.
 * @template {Element} [T=HTMLElement]
 * @param {string} testid
 * @param {new (...args: any[]) => T} [type] the element's class (default HTMLElement)
 * @returns {T}
 */
export function $ (testid, type) {
  const el = document.querySelector(`[data-testid="${testid}"]`)
  const expected = type ?? HTMLElement
  if (!(el instanceof expected)) throw new Error(`The page has no ${expected.name} [data-testid="${testid}"]`)
  return /** @type {T} */ (el)
}

/**
 * The element with this data-testid, or null while it is not on the page.
 * @param {string} testid
 * @returns {HTMLElement | null}
 */
export function find (testid) {
  const el = document.querySelector(`[data-testid="${testid}"]`)
  return el instanceof HTMLElement ? el : null
}

/**
 * The event's element (the one the listener was added to), checked to be of the given class.
 * @template {Element} T
 * @param {Event} event
 * @param {new (...args: any[]) => T} type
 * @returns {T}
 */
export function targetOf (event, type) {
  const el = event.currentTarget ?? event.target
  if (!(el instanceof type)) throw new Error(`The event's target is not a ${type.name}`)
  return el
}

/**
 * A named control of a form.
 * @param {HTMLFormElement} form
 * @param {string} name
 * @returns {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement}
 */
export function field (form, name) {
  const el = form.elements.namedItem(name)
  if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement) return el
  throw new Error(`The form has no field '${name}'`)
}

/**
 * Creates an element with attributes and children (text or nodes).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h (tag, props, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'class') el.className = String(value)
    else if (key === 'testid') el.dataset.testid = String(value)
    else if (key === 'dataset') Object.assign(el.dataset, value)
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), /** @type {EventListener} */ (value))
    else if (key === 'value' || key === 'checked' || key === 'disabled' || key === 'hidden') Reflect.set(el, key, value)
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  append(el, children)
  return el
}

/**
 * Appends children (nested arrays flattened; null, undefined and false skipped).
 * @template {Element} E
 * @param {E} el
 * @param {Child[]} children
 * @returns {E}
 */
export function append (el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue
    if (Array.isArray(child)) append(el, /** @type {Child[]} */ (child))
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return el
}

/**
 * @param {Element} el
 * @param {...Child} children
 */
export function replace (el, ...children) {
  el.replaceChildren()
  return append(el, children)
}

/**
 * Fills a select with one option per value after its first option (the "any" choice), keeping
 * the chosen value. Filled once: the values are the server's constants.
 * @param {HTMLSelectElement} select
 * @param {string[]} values
 * @param {Record<string, string>} [labels]
 */
export function fillOptions (select, values, labels = {}) {
  if (select.dataset.filled === 'true') return
  const current = select.value
  const first = select.options[0]
  replace(select, first, values.map((v) => h('option', { value: v }, labels[v] ?? v)))
  select.value = current
  select.dataset.filled = 'true'
}

/**
 * @param {string} text
 * @param {string} [kind]
 * @param {string} [testid]
 */
export const badge = (text, kind = '', testid = undefined) => h('span', { class: `badge ${kind}`, testid }, text)

/** @param {unknown} value */
export const json = (value) => JSON.stringify(value, null, 2)

/**
 * @param {number} n
 * @param {string} one
 * @param {string} [many]
 */
export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** @param {unknown} iso */
export function fmtTime (iso) {
  if (typeof iso !== 'string') return ''
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')
}

/** @param {unknown} iso */
export function shortTime (iso) {
  if (typeof iso !== 'string') return ''
  const m = /T(\d\d:\d\d:\d\d)/.exec(iso)
  return m === null ? iso : m[1]
}

/**
 * @template {unknown[]} A
 * @param {(...args: A) => void} fn
 * @param {number} ms
 * @returns {(...args: A) => void}
 */
export function debounce (fn, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  return (...args) => {
    clearTimeout(timer)
    timer = setTimeout(() => fn(...args), ms)
  }
}

/**
 * @param {string} text
 * @param {'info' | 'ok' | 'error'} [kind]
 */
export function toast (text, kind = 'info') {
  const box = $('toasts')
  /** @type {HTMLDivElement} */
  const item = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status', testid: `toast-${kind}`, onclick: () => item.remove() }, text)
  box.append(item)
  while (box.children.length > 3) box.firstElementChild?.remove()
  setTimeout(() => item.remove(), kind === 'error' ? 10_000 : 3_500)
}

/** @param {unknown} e */
export const fail = (e) => toast(e instanceof Error ? e.message : String(e), 'error')
