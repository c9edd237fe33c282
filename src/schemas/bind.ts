import { Kind, type TSchema } from '@sinclair/typebox'
import { parseTimestamp } from '../time.js'

/**
 * Request binding as the live service's ASP.NET binder does it, driven by the route's TypeBox
 * schemas, before validation:
 * - names: body keys and query parameter names match in any case (`People`, `people`); unknown
 *   body keys and query parameters are dropped and reported as warnings (journaled); one body
 *   key given twice in different casings with different values is a fault (key order decides
 *   nothing);
 * - a query parameter given more than once (in any casing) binds its first value, as ASP.NET
 *   Core MVC binds a simple type (`include=Details&include=Policies` reads Details); the others
 *   are reported as a warning. A repeated `version` never gets here: the version constraint
 *   refuses different values as ambiguous (src/versions/index.ts);
 * - a JSON `null` for a property is an absent value (a required one is then reported missing);
 * - numbers: a body integer may be a JSON string of plain decimal digits (`"29"`), a body number
 *   a string of decimal digits with an optional fraction; anything else (`true`, `[29]`, `"0x1d"`,
 *   `"1e3"`) is left as it is, for the validator (which does not coerce bodies) to refuse;
 * - enumerations (schemas marked by `markEnumeration`) match in any case and are stored in their
 *   canonical spelling; a numbered one also takes its number (declaration order from 0);
 * - booleans in a query or headers: `true`/`false` in any case;
 * - dates (schemas marked by `markCalendar`) must exist on the calendar: `1990-02-30` is a fault.
 * Faults carry a JSON pointer built from the schema's names, so errors read like the validator's.
 */

/** Where the values come from: JSON (typed values) or text (query parameters, headers). */
export type RequestPart = 'body' | 'querystring' | 'headers'

/** A value the binder refuses, at a JSON pointer of the bound names (`/people/0/dateOfBirth`). */
export interface BindingFault {
  pointer: string
  message: string
}

export interface Bound {
  value: unknown
  faults: BindingFault[]
}

/** The binder's marks: a symbol key, which TypeBox's wrappers copy and neither Ajv nor the OpenAPI output sees. */
const MARK = Symbol.for('agency-sandbox.binding')

interface EnumerationMark {
  kind: 'enumeration'
  values: readonly string[]
  numbered: boolean
}
interface CalendarMark {
  kind: 'calendar'
  what: 'date' | 'date and time'
}
type Mark = EnumerationMark | CalendarMark

const markOf = (schema: TSchema): Mark | undefined => (schema as { [MARK]?: Mark })[MARK]

/**
 * Marks an enumeration: values bind in any case to these spellings; when `numbered`, a value's
 * number (its position, from 0, as a .NET enum numbers its members) binds too.
 */
export function markEnumeration<T extends TSchema> (schema: T, values: readonly string[], numbered: boolean): T {
  (schema as { [MARK]?: Mark })[MARK] = { kind: 'enumeration', values: [...values], numbered }
  return schema
}

/** Marks a date (`DateOnly`) or date-time (`DateTime`) string: it must be a real calendar value. */
export function markCalendar<T extends TSchema> (schema: T, what: CalendarMark['what'] = 'date and time'): T {
  (schema as { [MARK]?: Mark })[MARK] = { kind: 'calendar', what }
  return schema
}

/** The sentence the live service answers when a field fails (a symbol key too, unseen by Ajv and OpenAPI). */
const LIVE_SENTENCE = Symbol.for('agency-sandbox.live-sentence')

/** Marks a field whose failure the live service answers with a known sentence (`Invalid Channel`). */
export function markLiveSentence<T extends TSchema> (schema: T, sentence: string): T {
  (schema as { [LIVE_SENTENCE]?: string })[LIVE_SENTENCE] = sentence
  return schema
}

/** The live sentence of the field at a JSON pointer of `schema` (`/channel`), when it has one. */
export function liveSentenceAt (schema: TSchema, pointer: string): string | undefined {
  let at: TSchema | undefined = schema
  for (const part of pointer.split('/').slice(1)) {
    if (at === undefined) return undefined
    at = /^\d+$/.test(part) ? arrayItems(at) : (objectSchema(at)?.properties as Record<string, TSchema> | undefined)?.[part]
  }
  return (at as { [LIVE_SENTENCE]?: string } | undefined)?.[LIVE_SENTENCE]
}

interface Context {
  part: RequestPart
  warnings: string[]
  faults: BindingFault[]
}

/**
 * Binds one part of a request to its schema. `at` prefixes the warnings' paths (a receipt's
 * `[2]`); fault pointers are relative to `value`.
 */
export function bindPart (value: unknown, schema: TSchema, part: RequestPart, warnings: string[], at = ''): Bound {
  const context: Context = { part, warnings, faults: [] }
  return { value: bind(value, schema, context, '', at), faults: context.faults }
}

function bind (value: unknown, schema: TSchema, context: Context, pointer: string, at: string): unknown {
  if (context.part === 'querystring' && Array.isArray(value) && value.length > 0 && arraySchema(schema) === undefined) {
    context.warnings.push(`query parameter ${at} given ${value.length} times: the first value binds, the others are ignored`)
    return bind(value[0], schema, context, pointer, at)
  }
  const mark = markOf(schema)
  if (mark?.kind === 'enumeration') return bindEnumeration(value, mark)
  if (mark?.kind === 'calendar') {
    checkCalendar(value, schema, mark, context, pointer)
    return value
  }
  if (Array.isArray(value)) {
    const array = arraySchema(schema)
    const items = array?.items as TSchema | undefined
    // A list longer than the schema allows goes on cut to one item over its limit: validation
    // still refuses it (and names every other failing field), but a megabyte of items is not
    // bound and validated one by one while every other request waits.
    const maxItems = array?.maxItems as number | undefined
    const list = maxItems !== undefined && value.length > maxItems + 1 ? value.slice(0, maxItems + 1) : value
    if (items === undefined) return list
    // a number or a boolean binds as itself unless the items are marked (a numbered enumeration):
    // a batch read's 200 ids are not each given a pointer and a path no warning or fault will use
    const plain = markOf(items) === undefined
    return list.map((v, i) => plain && (typeof v === 'number' || typeof v === 'boolean') ? v : bind(v, items, context, `${pointer}/${i}`, `${at}[${i}]`))
  }
  if (value !== null && typeof value === 'object') {
    const object = objectSchema(schema)
    return object === undefined ? value : bindObject(value as Record<string, unknown>, object, context, pointer, at)
  }
  return bindScalar(value, schema, context.part)
}

function bindObject (value: Record<string, unknown>, object: TSchema, context: Context, pointer: string, at: string): Record<string, unknown> {
  const properties = object.properties as Record<string, TSchema>
  const names = namesOf(object)
  const out: Record<string, unknown> = {}
  /** Names given with a null that was dropped (absent from `out`, yet given): made at the first such key. */
  let givenNull: Set<string> | undefined
  // keys, not entries: Object.entries of a query (an object without a prototype) was half its binding
  for (const key of Object.keys(value)) {
    const v = value[key]
    const name = nameOf(names, key)
    const where = at === '' ? key : `${at}.${key}`
    if (name === undefined) {
      // Headers carry far more than the schema names; an open body object keeps what it does not know.
      if (context.part === 'headers' || (context.part === 'body' && object.additionalProperties !== false)) {
        Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
      } else {
        context.warnings.push(context.part === 'querystring' ? `ignored unknown query parameter ${key}` : `ignored unknown key ${where}`)
      }
      continue
    }
    // a name is given twice (in two casings) when it is bound already, or was given with a null
    if (Object.hasOwn(out, name) || givenNull?.has(name) === true) {
      const first = firstKeyOf(value, names, name)
      if (context.part === 'querystring') {
        context.warnings.push(`query parameter ${key} repeats ${first}: the first value binds, the others are ignored`)
      } else if (JSON.stringify(value[first]) === JSON.stringify(v)) {
        context.warnings.push(`ignored duplicate key ${where} (same value as ${first})`)
      } else {
        context.faults.push({ pointer: `${pointer}/${name}`, message: `is given twice with different values (as ${first} and ${key}); send it once` })
      }
      continue
    }
    const property = properties[name]
    // .NET binds a null as the property's absence; a required property is then reported missing.
    if (v === null && !acceptsNull(property)) {
      (givenNull ??= new Set()).add(name)
      continue
    }
    out[name] = bind(v, property, context, `${pointer}/${name}`, at === '' ? name : `${at}.${name}`)
  }
  return out
}

/** The schema's name for a key: as spelled, or in any case. */
const nameOf = (names: Map<string, string>, key: string): string | undefined => names.get(key) ?? names.get(key.toLowerCase())

/** The first key of `value` that names `name` (the one a repeat of it repeats). */
function firstKeyOf (value: Record<string, unknown>, names: Map<string, string>, name: string): string {
  for (const key of Object.keys(value)) if (nameOf(names, key) === name) return key
  return name
}

const INTEGER_TEXT = /^-?[0-9]{1,15}$/
const DECIMAL_TEXT = /^-?[0-9]{1,15}(\.[0-9]{1,15})?$/
const BOOLEAN_TEXT = /^(true|false)$/i

function bindScalar (value: unknown, schema: TSchema, part: RequestPart): unknown {
  if (typeof value !== 'string') return value
  const types = typesOf(schema)
  if (types.has('string')) return value
  if (part === 'body') {
    if (types.has('integer') && INTEGER_TEXT.test(value)) return Number(value)
    if (types.has('number') && DECIMAL_TEXT.test(value)) return Number(value)
    return value
  }
  // Text parts: integers stay text for the plain-digits check and the validator's conversion.
  if (types.has('boolean') && BOOLEAN_TEXT.test(value)) return value.toLowerCase()
  return value
}

const DIGITS = /^[0-9]{1,9}$/

function bindEnumeration (value: unknown, mark: EnumerationMark): unknown {
  if (typeof value === 'string') {
    if (mark.values.includes(value)) return value
    const lower = value.toLowerCase()
    const named = mark.values.find((v) => v.toLowerCase() === lower)
    if (named !== undefined) return named
    return mark.numbered && DIGITS.test(value) ? mark.values[Number(value)] ?? value : value
  }
  if (typeof value === 'number' && mark.numbered && Number.isInteger(value) && value >= 0) return mark.values[value] ?? value
  return value
}

function checkCalendar (value: unknown, schema: TSchema, mark: CalendarMark, context: Context, pointer: string): void {
  // Not text, empty, or not of the schema's shape: the validator or the domain says what is wrong.
  if (typeof value !== 'string' || value === '' || !fitsPattern(schema, value)) return
  if (parseTimestamp(value) !== null) return
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value
  const example = mark.what === 'date' ? 'yyyy-mm-dd' : 'ISO 8601, e.g. 2024-10-08T14:30:00Z'
  context.faults.push({ pointer, message: `must be a real calendar ${mark.what} (${example}); '${shown}' is not one` })
}

const patterns = new WeakMap<TSchema, RegExp>()

function fitsPattern (schema: TSchema, value: string): boolean {
  if (typeof schema.pattern !== 'string') return true
  let pattern = patterns.get(schema)
  if (pattern === undefined) {
    pattern = new RegExp(schema.pattern, 'u')
    patterns.set(schema, pattern)
  }
  return pattern.test(value)
}

const nameMaps = new WeakMap<TSchema, Map<string, string>>()

/** An object schema's property names by their own spelling and by their lower-case one. */
function namesOf (object: TSchema): Map<string, string> {
  let names = nameMaps.get(object)
  if (names === undefined) {
    const own = Object.keys(object.properties as object)
    names = new Map([...own.map((name): [string, string] => [name.toLowerCase(), name]), ...own.map((name): [string, string] => [name, name])])
    nameMaps.set(object, names)
  }
  return names
}

function members (schema: TSchema): TSchema[] {
  if (schema[Kind] === 'Union' || Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[] | undefined) ?? []
  return [schema]
}

/** What each schema says to the binder, worked out once: the binder runs on every request's every part. */
interface Shape {
  types: Set<unknown>
  acceptsNull: boolean
  object: TSchema | undefined
  array: TSchema | undefined
}
const shapes = new WeakMap<TSchema, Shape>()

function shapeOf (schema: TSchema): Shape {
  let shape = shapes.get(schema)
  if (shape === undefined) {
    const all = members(schema)
    shape = {
      types: new Set(all.map((s) => s.type)),
      acceptsNull: all.some((s) => s.type === 'null' || s[Kind] === 'Unknown' || s[Kind] === 'Any'),
      object: all.find((s) => s.type === 'object' && s.properties !== undefined),
      array: all.find((s) => s.type === 'array')
    }
    shapes.set(schema, shape)
  }
  return shape
}

const typesOf = (schema: TSchema): Set<unknown> => shapeOf(schema).types
const acceptsNull = (schema: TSchema): boolean => shapeOf(schema).acceptsNull
const objectSchema = (schema: TSchema): TSchema | undefined => shapeOf(schema).object
const arraySchema = (schema: TSchema): TSchema | undefined => shapeOf(schema).array

function arrayItems (schema: TSchema): TSchema | undefined {
  return arraySchema(schema)?.items as TSchema | undefined
}
