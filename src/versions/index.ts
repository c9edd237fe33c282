import type { IncomingMessage } from 'node:http'

/**
 * Versions are a routing dimension: `version=4.0`, `version=3.0`, or no parameter (version 1).
 * Each (version, operation) pair is registered once with the `apiVersion` constraint.
 */
export const API_VERSIONS = ['4.0', '3.0', '1'] as const
export type ApiVersion = (typeof API_VERSIONS)[number]
export const UNSUPPORTED = 'unsupported'

/** The raw `version` query value of a URL, or undefined when absent (the first one counts). */
export function rawVersion (url: string): string | undefined {
  const q = url.indexOf('?')
  if (q === -1) return undefined
  // a scan rather than a regular expression: this runs for every vendor request
  for (let at = url.indexOf('version=', q + 1); at !== -1; at = url.indexOf('version=', at + 8)) {
    const before = url.charCodeAt(at - 1)
    if (before !== 0x3f /* ? */ && before !== 0x26 /* & */) continue
    let end = at + 8
    while (end < url.length && url.charCodeAt(end) !== 0x26 && url.charCodeAt(end) !== 0x23 /* & # */) end++
    const value = url.slice(at + 8, end)
    if (!value.includes('%') && !value.includes('+')) return value
    try {
      return decodeURIComponent(value.replace(/\+/g, ' '))
    } catch {
      return value
    }
  }
  return undefined
}

export function versionOf (url: string): ApiVersion | typeof UNSUPPORTED {
  const raw = rawVersion(url)
  if (raw === undefined) return '1'
  const v = raw.trim()
  if (v === '4.0' || v === '4') return '4.0'
  if (v === '3.0' || v === '3') return '3.0'
  return UNSUPPORTED
}

/** find-my-way constraint strategy deriving the API version of /vendor requests. */
export const apiVersionConstraint = {
  name: 'apiVersion',
  mustMatchWhenDerived: true,
  storage () {
    const handlers = new Map<string, unknown>()
    return {
      get: (version: string) => handlers.get(version) ?? null,
      set: (version: string, store: unknown) => { handlers.set(version, store) }
    }
  },
  deriveConstraint (req: IncomingMessage): string | undefined {
    const url = req.url ?? ''
    return url.startsWith('/vendor/') ? versionOf(url) : undefined
  },
  validate (value: unknown) {
    if (typeof value !== 'string' || !(API_VERSIONS as readonly string[]).includes(value)) {
      throw new Error(`apiVersion constraint must be one of ${API_VERSIONS.join(', ')}`)
    }
  }
}
