import type { FastifyInstance, FastifyRequest } from 'fastify'
import { emptyJsonBody, invalidField, invalidJson, jsonTooDeep, jsonTooManyValues, type FieldError } from '../errors.js'

/**
 * The one JSON body parser of the sandbox, used by the vendor API and the control plane alike.
 * Bodies arrive as bytes (never concatenated into a string by the framework, so no size can make
 * string building throw outside a try). One linear scan checks the nesting depth and the number
 * of values before JSON.parse runs: deeply nested documents never reach code that recurses over
 * them (binding, validation, the journal, fault rules), and what a parsed body costs in memory
 * (and in validation errors) is bounded by the endpoint's byte limit, whatever its shape.
 */

/** JSON bodies in general (vendor API, control plane): 413 above. */
export const JSON_BODY_LIMIT = 1024 * 1024

/**
 * Fixture documents (POST /_sandbox/reset, POST /_sandbox/agencies), in bytes: the largest
 * accepted document of any shape is taken within the memory budget stated in docs/configuration.md
 * (measured with scripts/measure-body-peak.ts). Larger worlds load from a file at start.
 */
export const FIXTURE_BODY_LIMIT = 8 * 1024 * 1024

/**
 * Deepest nesting of objects and arrays accepted in a JSON document: the default MaxDepth of
 * System.Text.Json, which the live ASP.NET service reads bodies with. Fixture documents nest 9 deep.
 */
export const MAX_JSON_DEPTH = 64

/**
 * An endpoint accepts at most one JSON value per this many bytes of its body limit (65,536 for
 * 1 MiB). Real documents spend 20 to 30 bytes a value (fixtures: 21); `[{},{},…]` spends 3, and
 * each such value costs far more to parse and validate than its bytes.
 */
export const BYTES_PER_VALUE = 16

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const COMMA = 0x2c

export type ScanResult = 'ok' | 'too-deep' | 'too-many-values'

/**
 * One pass over JSON text, no allocation: does it nest objects and arrays deeper than `maxDepth`,
 * or hold more than `maxValues` values (counted as objects, arrays and commas outside strings,
 * plus one), stopping at the first excess. Malformed text is left to JSON.parse (every accepted
 * document is balanced, so the answer is exact for those).
 */
export function scanJson (bytes: Uint8Array, maxDepth: number, maxValues = Infinity): ScanResult {
  let depth = 0
  let values = 1
  let inString = false
  const n = bytes.length
  for (let i = 0; i < n; i++) {
    const b = bytes[i]
    if (inString) {
      if (b === BACKSLASH) i++
      else if (b === QUOTE) inString = false
    } else if (b === QUOTE) {
      inString = true
    } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++depth > maxDepth) return 'too-deep'
      if (++values > maxValues) return 'too-many-values'
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      depth--
    } else if (b === COMMA) {
      if (++values > maxValues) return 'too-many-values'
    }
  }
  return 'ok'
}

/** The bytes that open an object or an array (one list for every body, not one made per body). */
const OPENINGS = [OPEN_OBJECT, OPEN_ARRAY] as const

/**
 * Whether the text opens at most `max` objects and arrays, counting brackets inside strings too:
 * then it cannot nest deeper than `max`. Found by indexOf (native, fast), so most bodies skip
 * the byte-by-byte scan; it stops at the first bracket past `max`.
 */
function opensAtMost (bytes: Buffer, max: number): boolean {
  let opened = 0
  for (const bracket of OPENINGS) {
    for (let at = bytes.indexOf(bracket); at >= 0; at = bytes.indexOf(bracket, at + 1)) if (++opened > max) return false
  }
  return true
}

/** True when the JSON text nests objects and arrays deeper than `max` outside strings. */
export const nestsDeeperThan = (bytes: Uint8Array, max: number): boolean => scanJson(bytes, max) === 'too-deep'

const PROTO = '__proto__'

/**
 * Paths (`agencies[0].__proto__`) of own `__proto__` keys. JSON.parse keeps such a key as data,
 * but any later copy by assignment would turn it into the object's prototype, so callers report
 * it instead. Recursion is bounded by MAX_JSON_DEPTH for parsed documents.
 */
export function protoKeyPaths (value: unknown, limit = 20, path = '', out: string[] = []): string[] {
  if (out.length >= limit || value === null || typeof value !== 'object') return out
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && out.length < limit; i++) protoKeyPaths(value[i], limit, `${path}[${i}]`, out)
    return out
  }
  for (const key of Object.keys(value)) {
    const at = path === '' ? key : `${path}.${key}`
    if (key === PROTO) out.push(at)
    if (out.length >= limit) break
    protoKeyPaths((value as Record<string, unknown>)[key], limit, at, out)
  }
  return out
}

const ESCAPE = Buffer.from('\\u')
const PROTO_BYTES = Buffer.from(PROTO)

/** Whether the text holds an escape (`\\u`), the only way JSON can spell a NUL or a lone surrogate. */
const holdsEscapes = (bytes: Buffer) => bytes.includes(ESCAPE)

/** Whether the text can hold a `__proto__` key at all (escapes can spell it), so most bodies skip the walk. */
const mayHoldProtoKey = (bytes: Buffer) => bytes.includes(PROTO_BYTES) || holdsEscapes(bytes)

/**
 * A NUL character, or a surrogate that is not half of a pair (with the `u` flag a pair is one code
 * point, so only a lone one matches): text SQLite would keep, PostgreSQL refuses or mangles, and
 * the live service's JSON reader (System.Text.Json) refuses for a lone surrogate.
 */
const UNSTORABLE = /[\0\p{Cs}]/u

/** Why a text cannot be stored, or undefined when it can. */
function unstorable (text: string): string | undefined {
  const match = UNSTORABLE.exec(text)
  if (match === null) return undefined
  return match[0] === '\0'
    ? 'must not contain a NUL character (\\u0000)'
    : 'must be valid Unicode text: it holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape)'
}

const pathTo = (path: string, key: string) => (path === '' ? key : `${path}.${key}`)

/**
 * The first text of a parsed document (a string value or a key) that no store of the sandbox holds
 * alike: its path and why, or undefined. Recursion is bounded by MAX_JSON_DEPTH for parsed documents.
 */
export function unstorableText (value: unknown, path = ''): FieldError | undefined {
  if (typeof value === 'string') {
    const why = unstorable(value)
    return why === undefined ? undefined : { field: path === '' ? '(body)' : path, message: why }
  }
  if (value === null || typeof value !== 'object') return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableText(value[i], `${path}[${i}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const key of Object.keys(value)) {
    const why = unstorable(key)
    if (why !== undefined) return { field: pathTo(path, JSON.stringify(key).slice(1, -1)), message: `(a field name) ${why}` }
    const found = unstorableText((value as Record<string, unknown>)[key], pathTo(path, key))
    if (found !== undefined) return found
  }
  return undefined
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf])

export interface JsonDocument {
  value: unknown
  /** Paths of own `__proto__` keys, kept as data in `value`. */
  protoKeys: string[]
  /** The document as text (after a byte order mark). */
  text: string
}

/**
 * Parses JSON bytes (a leading UTF-8 byte order mark is skipped, as .NET does): 400 when the
 * document nests deeper than MAX_JSON_DEPTH, holds more than `maxValues` values or is not JSON.
 * Own `__proto__` keys stay data and are listed, for the caller to report.
 */
export function parseJsonDocument (bytes: Buffer, maxValues = Infinity): JsonDocument {
  const document = bytes.subarray(0, 3).equals(UTF8_BOM) ? bytes.subarray(3) : bytes
  // a document of fewer bytes than maxValues holds fewer values: only its depth can be too much
  const scan = document.length < maxValues && opensAtMost(document, MAX_JSON_DEPTH) ? 'ok' : scanJson(document, MAX_JSON_DEPTH, maxValues)
  if (scan === 'too-deep') throw jsonTooDeep(MAX_JSON_DEPTH)
  if (scan === 'too-many-values') throw jsonTooManyValues(maxValues)
  let value: unknown
  let text: string
  try {
    // Decoding can also fail (a text too long for one string): every failure is the caller's 4xx.
    text = document.toString('utf8')
    value = JSON.parse(text)
  } catch (e) {
    throw invalidJson((e as Error).message)
  }
  return { value, protoKeys: mayHoldProtoKey(document) ? protoKeyPaths(value) : [], text }
}

/**
 * A request body's JSON: as parseJsonDocument, and a body with an own `__proto__` key is a 400
 * naming it (no request body in this sandbox has such a field, and refusing it here keeps every
 * later copy of the body safe); so is a text holding a NUL or a lone surrogate (unstorableText).
 */
export function parseJsonBody (bytes: Buffer, maxValues = Infinity): unknown {
  return parseJsonBodyText(bytes, maxValues).value
}

/** parseJsonBody, with the body's text. */
function parseJsonBodyText (bytes: Buffer, maxValues: number): { value: unknown, text: string } {
  const { value, protoKeys, text } = parseJsonDocument(bytes, maxValues)
  if (protoKeys.length > 0) throw invalidField(protoKeys[0], 'is not a known field')
  // every text a caller sends arrives here (names, fault rules, notes, client fields, fixtures):
  // one check keeps what SQLite would store and PostgreSQL refuse out of both
  const bad = holdsEscapes(bytes) ? unstorableText(value) : undefined
  if (bad !== undefined) throw invalidField(bad.field, bad.message)
  return { value, text }
}

/** Only JSON whitespace (stops at the first other byte). */
function isBlank (bytes: Buffer): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return false
  return true
}

export interface JsonBodyOptions {
  /** An empty body is no body (control calls such as POST /reset); otherwise it is a 400. */
  emptyIsAbsent: boolean
  /** A body of more bytes is left unparsed, as UnparsedJson, for its route to read away from the event loop. */
  unparsedAbove?: number
  /** Keep each body's bytes for postedBytes while its request lives. */
  keepBytes?: boolean
}

/**
 * Bodies carrying fixture documents larger than this are read in a worker process: JSON.parse
 * alone held the event loop for over 150 ms for 8 MiB, validating it and loading it longer.
 */
export const UNPARSED_JSON_BYTES = 256 * 1024

/** A JSON body left as its bytes (see JsonBodyOptions.unparsedAbove), with the value budget of its route. */
export class UnparsedJson {
  constructor (readonly bytes: Buffer, readonly maxValues: number) {}
}

/** The bytes of each JSON body parsed, while its request lives: what a posted fixture's digest is taken of. */
const bodyBytes = new WeakMap<FastifyRequest, Buffer>()

/** The bytes of the request's JSON body as posted (undefined: none, another content type, or a scope that keeps none). */
export const postedBytes = (request: FastifyRequest): Buffer | undefined => bodyBytes.get(request)

/** The text of each JSON body parsed here, while its request lives: the bytes sent, not the parsed value written out again. */
const bodyTexts = new WeakMap<FastifyRequest, string>()

/** The request's JSON body as it was sent (undefined: none, or not parsed here): what the journal keeps of it. */
export const sentJsonText = (request: FastifyRequest): string | undefined => bodyTexts.get(request)

/**
 * Makes `application/json` bodies of this scope (and the scopes it registers) go through
 * parseJsonBody, read as bytes, with the value budget of the route's body limit. Every other
 * Content-Type, text/plain included, is a 415: the framework's text/plain parser is removed.
 */
export function useJsonBodies (app: FastifyInstance, { emptyIsAbsent, unparsedAbove = Infinity, keepBytes = false }: JsonBodyOptions): void {
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request: FastifyRequest, body: Buffer | string, done) => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body
    if (keepBytes) bodyBytes.set(request, bytes)
    const maxValues = Math.floor((request.routeOptions.bodyLimit ?? JSON_BODY_LIMIT) / BYTES_PER_VALUE)
    if (bytes.length > unparsedAbove) return done(null, new UnparsedJson(bytes, maxValues))
    if (bytes.length === 0 || (emptyIsAbsent && isBlank(bytes))) {
      return emptyIsAbsent ? done(null, undefined) : done(emptyJsonBody(), undefined)
    }
    try {
      const { value, text } = parseJsonBodyText(bytes, maxValues)
      bodyTexts.set(request, text)
      done(null, value)
    } catch (e) {
      done(e as Error, undefined)
    }
  })
}
