import type { IncomingMessage } from 'node:http'

/**
 * Versions are a routing dimension: `version=4.0`, `version=3.0`, or no parameter (version 1).
 * Each (version, operation) pair is registered once with the `apiVersion` constraint.
 */
export const API_VERSIONS = ['4.0', '3.0', '1'] as const
export type ApiVersion = (typeof API_VERSIONS)[number]
export const UNSUPPORTED = 'unsupported'

const VERSION_PARAM = /[?&]version=([^&#]*)/

/** The raw `version` query value of a URL, or undefined when absent. */
export function rawVersion(url: string): string | undefined {
  const q = url.indexOf('?')
  if (q === -1) return undefined
  const m = VERSION_PARAM.exec(url.slice(q))
  if (m === null) return undefined
  try {
    return decodeURIComponent(m[1].replace(/\+/g, ' '))
  } catch {
    return m[1]
  }
}

export function versionOf(url: string): ApiVersion | typeof UNSUPPORTED {
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
  storage() {
    const handlers = new Map<string, unknown>()
    return {
      get: (version: string) => handlers.get(version) ?? null,
      set: (version: string, store: unknown) => void handlers.set(version, store)
    }
  },
  deriveConstraint(req: IncomingMessage): string | undefined {
    const url = req.url ?? ''
    return url.startsWith('/vendor/') ? versionOf(url) : undefined
  },
  validate(value: unknown) {
    if (typeof value !== 'string' || !(API_VERSIONS as readonly string[]).includes(value)) {
      throw new Error(`apiVersion constraint must be one of ${API_VERSIONS.join(', ')}`)
    }
  }
}
