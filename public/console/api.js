// @ts-check
// The control API client: calls under /_sandbox, JSON in and out, with the control token when
// the sandbox asks for one (kept in this tab's sessionStorage). The panels show one world, named
// by the page's `?world=` (the default world without it): its calls go to /_sandbox/worlds/{id}/...
import { $, field } from './dom.js'

export const TOKEN_KEY = 'agency-sandbox.control-token'

export const DEFAULT_WORLD = 'default'

/** The world the panels show. */
export const shownWorld = new URLSearchParams(window.location.search).get('world') || DEFAULT_WORLD

/** Routes of the sandbox as a whole, the same whichever world is shown. */
const PROCESS_ROUTES = /^\/(meta|health|worlds)(\/|\?|$)/

/**
 * The URL of a control route (`/agencies/1001`) of the world shown, or of the sandbox as a whole.
 * @param {string} path
 */
export function controlUrl (path) {
  if (shownWorld === DEFAULT_WORLD || PROCESS_ROUTES.test(path)) return `/_sandbox${path}`
  return `/_sandbox/worlds/${encodeURIComponent(shownWorld)}${path}`
}

/** An error answer of the control API. */
export class ApiFailure extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {unknown} [body]
   */
  constructor (status, message, body) {
    super(message)
    this.status = status
    this.body = body
  }
}

/**
 * The message of an error answer: problem detail and field errors, or the text sent.
 * @param {Response} res
 * @param {string} what
 */
async function failureOf (res, what) {
  const text = await res.text()
  /** @type {any} */
  let body = text
  let message = text.trim() || res.statusText
  try {
    body = JSON.parse(text)
    if (body && typeof body === 'object') {
      message = body.detail || body.title || message
      if (Array.isArray(body.errors) && body.errors.length > 0) {
        message += ' (' + body.errors.map((/** @type {{ field: string, message: string }} */ e) => `${e.field}: ${e.message}`).join('; ') + ')'
      }
    }
  } catch { /* text answer */ }
  return new ApiFailure(res.status, `${what}: ${res.status} ${message}`, body)
}

/** @type {Promise<boolean> | undefined} */
let tokenPrompt

/**
 * Shows the token dialog once for every call waiting on it; resolves true when a token was given.
 * @param {boolean} wasRejected
 * @returns {Promise<boolean>}
 */
function askToken (wasRejected) {
  tokenPrompt ??= new Promise((resolve) => {
    const dialog = $('token-dialog', HTMLDialogElement)
    const form = $('token-form', HTMLFormElement)
    const error = $('token-error')
    error.hidden = !wasRejected
    error.textContent = wasRejected ? 'That token was refused; try again.' : ''
    form.reset()
    const onClose = () => {
      dialog.removeEventListener('close', onClose)
      const token = field(form, 'token').value.trim()
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

/** True while the token dialog is open (polling waits). */
export const tokenAsked = () => $('token-dialog', HTMLDialogElement).open

/** @returns {Record<string, string>} */
function authHeaders () {
  const token = sessionStorage.getItem(TOKEN_KEY)
  return token ? { authorization: `Bearer ${token}` } : {}
}

/**
 * A control call of the world shown (see controlUrl); JSON in and out (`raw`: the Response itself).
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {{ raw?: boolean }} [options]
 * @returns {Promise<any>}
 */
export async function api (method, path, body, { raw = false } = {}) {
  for (let attempt = 0; ; attempt++) {
    // the console's header asks for its cookie (given to the sandbox's administrator), which marks its own requests
    /** @type {Record<string, string>} */
    const headers = { ...authHeaders(), 'x-sandbox-console': '1' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const url = controlUrl(path)
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' })
    if (res.status === 401 && attempt < 5) {
      const hadToken = sessionStorage.getItem(TOKEN_KEY) !== null
      sessionStorage.removeItem(TOKEN_KEY)
      if (await askToken(hadToken)) continue
      throw new ApiFailure(401, `${method} ${url}: the control API needs its token`)
    }
    if (!res.ok) throw await failureOf(res, `${method} ${url}`)
    if (raw) return res
    if (res.status === 204) return undefined
    const type = res.headers.get('content-type') ?? ''
    return type.includes('json') ? res.json() : res.text()
  }
}

/**
 * A query string of the given parameters (empty ones left out).
 * @param {Record<string, unknown>} params
 */
export function query (params) {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s === '' ? '' : `?${s}`
}
