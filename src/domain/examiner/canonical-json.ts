/**
 * The JSON Canonicalization Scheme (RFC 8785), the form a report is signed in: object members
 * sorted by their names' UTF-16 code units at every level, no whitespace, strings and numbers as
 * ECMAScript's JSON.stringify writes them. It refuses what the scheme refuses (a lone surrogate,
 * a number that is not finite) and what JSON cannot hold.
 *
 * Written here rather than taken from the `canonicalize` package (which a test holds this to):
 * that one writes every number and string apart and took 200-300 ms for a 3 MB report, where
 * this writes arrays of numbers with one JSON.stringify, and `canonicalJsonInTurns` yields to
 * the event loop between the members of a large report.
 */

export class NotCanonicalizable extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'NotCanonicalizable'
  }
}

/** One UTF-16 surrogate without its pair. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function string (value: string): string {
  if (LONE_SURROGATE.test(value)) throw new NotCanonicalizable('a string holds a lone surrogate')
  return JSON.stringify(value)
}

function number (value: number): string {
  if (!Number.isFinite(value)) throw new NotCanonicalizable(`${value} is not a finite number`)
  return JSON.stringify(value)
}

const isFiniteNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)

/** The members of an object, sorted as RFC 8785 sorts them (JavaScript's default sort compares UTF-16 code units). */
const sortedEntries = (value: object): Array<[string, unknown]> =>
  Object.keys(value).sort().map((key): [string, unknown] => [key, (value as Record<string, unknown>)[key]]).filter(([, member]) => member !== undefined)

/** The canonical JSON of a JSON value (objects, arrays, strings, finite numbers, booleans, null). */
export function canonicalJson (value: unknown): string {
  switch (typeof value) {
    case 'string': return string(value)
    case 'number': return number(value)
    case 'boolean': return value ? 'true' : 'false'
    case 'object':
      if (value === null) return 'null'
      if (Array.isArray(value)) return value.every(isFiniteNumber) ? JSON.stringify(value) : `[${value.map(canonicalJson).join(',')}]`
      return `{${sortedEntries(value).map(([key, member]) => `${string(key)}:${canonicalJson(member)}`).join(',')}}`
    default:
      throw new NotCanonicalizable(`a ${typeof value} is not a JSON value`)
  }
}

/** Time spent writing before the event loop gets a turn. */
const TURN_MS = 10

/**
 * The same text, written in turns: the members of the value and of its members (a report's
 * findings, sync checks, coverage) one by one, yielding to the event loop every TURN_MS.
 */
export async function canonicalJsonInTurns (value: unknown, depth = 2): Promise<string> {
  let turnStarted = performance.now()
  const write = async (member: unknown, levels: number): Promise<string> => {
    if (performance.now() - turnStarted > TURN_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      turnStarted = performance.now()
    }
    if (levels === 0 || member === null || typeof member !== 'object') return canonicalJson(member)
    const parts: string[] = []
    if (Array.isArray(member)) {
      if (member.every(isFiniteNumber)) return JSON.stringify(member)
      for (const item of member) parts.push(await write(item, levels - 1))
      return `[${parts.join(',')}]`
    }
    for (const [key, item] of sortedEntries(member)) parts.push(`${string(key)}:${await write(item, levels - 1)}`)
    return `{${parts.join(',')}}`
  }
  return write(value, depth)
}
