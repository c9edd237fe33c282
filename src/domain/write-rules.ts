import type { FieldError } from '../errors.js'

/**
 * Rules of the write operations that a JSON schema cannot express, and the small helpers the write
 * routes share: field paths in the spec's PascalCase and base64 header decoding. Pure functions;
 * no HTTP here.
 */

// ---------------------------------------------------------------------------------------------
// Field paths
// ---------------------------------------------------------------------------------------------

/** Wire names whose spec spelling is not simply the capitalised camelCase name. */
const SPEC_NAMES: Readonly<Record<string, string>> = {
  loBs: 'LOBs',
  lobs: 'LOBs',
  dbaName: 'DBAName',
  naics: 'NAICS',
  ts: 'TS'
}

/**
 * A camelCase field path as the spec's tables write it: `people[2].lastName` → `People[2].LastName`,
 * `policy.loBs[1]` → `Policy.LOBs[1]`. Paths that do not start with a name, such as `(body)`, are
 * returned unchanged.
 */
export function pascalPath (path: string): string {
  return path.replace(/(^|\.)([A-Za-z_$][\w$]*)/g, (_match, lead: string, name: string) =>
    lead + (SPEC_NAMES[name] ?? name.charAt(0).toUpperCase() + name.slice(1)))
}

// ---------------------------------------------------------------------------------------------
// Create-client rules
// ---------------------------------------------------------------------------------------------

/** `found 2 (People[0], People[3])` */
function found (indexes: number[]): string {
  return indexes.length === 0 ? 'found 0' : `found ${indexes.length} (${indexes.map((i) => `People[${i}]`).join(', ')})`
}

/** A person's MainContactType; the person may be anything (a body that failed its schema). */
const mainContactTypeOf = (person: unknown): unknown =>
  typeof person === 'object' && person !== null && 'mainContactType' in person ? person.mainContactType : undefined

/**
 * Exactly one person with MainContactType First and at most one with Second. An empty list is left
 * to the schema (People needs at least one item), so the caller does not get the same fault twice.
 * The people may have failed the schema: anything without a MainContactType simply has none.
 */
export function checkPeopleRules (people: readonly unknown[]): FieldError[] {
  if (people.length === 0) return []
  const withType = (type: string) =>
    people.flatMap((p, i) => (mainContactTypeOf(p) === type ? [i] : []))
  const errors: FieldError[] = []
  const first = withType('First')
  if (first.length !== 1) {
    errors.push({ field: 'People', message: `exactly one person must have MainContactType First; ${found(first)}` })
  }
  const second = withType('Second')
  if (second.length > 1) {
    errors.push({ field: 'People', message: `at most one person may have MainContactType Second; ${found(second)}` })
  }
  return errors
}

const EPOCH = '1970-01-01'

/**
 * Policy.EffectiveDate is a real calendar date on or after 1970-01-01. The date part is compared as
 * written (a time part, when sent, does not move it). A value the schema's pattern rejects, or a
 * policy that is not an object, is left to the schema.
 */
export function checkEffectiveDate (policy: unknown): FieldError[] {
  const value = typeof policy === 'object' && policy !== null && 'effectiveDate' in policy ? policy.effectiveDate : undefined
  if (typeof value !== 'string') return []
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value)
  if (m === null) return []
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return [{ field: 'Policy.EffectiveDate', message: `must be a real calendar date; ${m[0]} does not exist` }]
  }
  if (m[0] < EPOCH) return [{ field: 'Policy.EffectiveDate', message: `must be on or after ${EPOCH}` }]
  return []
}

// ---------------------------------------------------------------------------------------------
// Attachment headers
// ---------------------------------------------------------------------------------------------
