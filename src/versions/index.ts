import type { IncomingMessage } from 'node:http'

/**
 * Versions are a routing dimension: `version=4.0`, `version=3.0`, or no parameter (version 1).
 * Each (version, operation) pair is registered once with the `apiVersion` constraint.
 */
export const API_VERSIONS = ['4.0', '3.0', '1'] as const
export type ApiVersion = (typeof API_VERSIONS)[number]
export const UNSUPPORTED = 'unsupported'

/** A query component decoded (`+` is a space); left as it is when it is not valid percent-encoding. */
function decodeComponent (text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    return text
  }
}

/**
 * The raw `version` query values of a URL, the parameter name matched in any case (`Version=4.0`),
 * as the live service's ASP.NET binder matches query names.
 */
function rawVersions (url: string): string[] {
  const values: string[] = []
  const q = url.indexOf('?')
  if (q === -1) return values
  const hash = url.indexOf('#', q)
  const end = hash === -1 ? url.length : hash
  // a scan rather than a split: this runs for every vendor request
  for (let start = q + 1; start < end;) {
    let stop = url.indexOf('&', start)
    if (stop === -1 || stop > end) stop = end
    const eq = url.indexOf('=', start)
    if (eq !== -1 && eq < stop) {
      const name = eq - start === 7 ? url.slice(start, eq) : decodeComponent(url.slice(start, eq))
      if (name.length === 7 && name.toLowerCase() === 'version') values.push(decodeComponent(url.slice(eq + 1, stop)))
    }
    start = stop + 1
  }
  return values
}

/**
 * The raw `version` query value of a URL, or undefined when absent. Repeated with different
 * values, all of them comma-joined (no order decides which counts: versionOf refuses them).
 */
export function rawVersion (url: string): string | undefined {
  const values = rawVersions(url)
  if (values.length === 0) return undefined
  return values.every((v) => v === values[0]) ? values[0] : values.join(',')
}

/**
 * The different `version` values a URL gives (in order of first appearance). More than one is
 * ambiguous, as ASP.NET API Versioning answers it (AmbiguousApiVersion): `4.0` and `4` are two.
 */
export function distinctVersions (url: string): string[] {
  return [...new Set(rawVersions(url))]
}

function versionOfValue (raw: string): ApiVersion | typeof UNSUPPORTED {
  const v = raw.trim()
  if (v === '4.0' || v === '4') return '4.0'
  if (v === '3.0' || v === '3') return '3.0'
  return UNSUPPORTED
}

export function versionOf (url: string): ApiVersion | typeof UNSUPPORTED {
  const values = rawVersions(url)
  if (values.length === 0) return '1'
  // a repeated version binds only when every value is the same text (API Versioning's rule)
  return values.every((v) => v === values[0]) ? versionOfValue(values[0]) : UNSUPPORTED
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
