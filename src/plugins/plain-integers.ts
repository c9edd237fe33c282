import type { FastifyRequest } from 'fastify'
import { invalidField } from '../errors.js'

/**
 * Integers in a route's path and query are plain decimal digits within the schema's range.
 * Ajv's type coercion would read `1e999` and `Infinity` as Infinity (which passes `maximum`),
 * `0x10` as 16 and ` 12` as 12, so the raw strings are checked here, before validation, against
 * every property the route's TypeBox schema declares an integer; Ajv then converts them.
 */

/** The range an integer property without bounds accepts (a 32-bit id, as the live service's int). */
export const INT32_MAX = 2147483647

const DIGITS = /^[0-9]{1,16}$/

interface IntegerProperty {
  type?: unknown
  minimum?: number
  maximum?: number
}

/** One integer property of a path or query: its range, and the words that state it. */
interface IntegerCheck {
  part: 'params' | 'querystring'
  name: string
  minimum: number
  maximum: number
  accepted: string
}

type RouteSchema = { params?: unknown, querystring?: unknown }

const checksBySchema = new WeakMap<object, readonly IntegerCheck[]>()

/** A route schema's integer properties, listed once per schema: a request walks no schema and builds no sentence unless it fails. */
function integerChecks (schema: RouteSchema): readonly IntegerCheck[] {
  let checks = checksBySchema.get(schema)
  if (checks !== undefined) return checks
  checks = (['params', 'querystring'] as const).flatMap((part) => {
    const properties = (schema[part] as { properties?: Record<string, IntegerProperty> } | undefined)?.properties ?? {}
    return Object.entries(properties).filter(([, property]) => property.type === 'integer').map(([name, property]) => {
      const minimum = property.minimum ?? 0
      const maximum = property.maximum ?? INT32_MAX
      return { part, name, minimum, maximum, accepted: `a whole number from ${minimum} to ${maximum} in plain digits` }
    })
  })
  checksBySchema.set(schema, checks)
  return checks
}

/** Throws a 400 naming the first integer property of the path or query that is not plain digits in range (the route's schema given, or read from the request). */
export function checkPlainIntegers (request: FastifyRequest, schema: RouteSchema | undefined = request.routeOptions.schema): void {
  if (schema === undefined) return
  for (const check of integerChecks(schema)) {
    const values = check.part === 'params' ? request.params : request.query
    if (values === null || typeof values !== 'object' || !Object.hasOwn(values, check.name)) continue
    const raw = (values as Record<string, unknown>)[check.name]
    if (typeof raw !== 'string') throw invalidField(check.name, `must be given once, as ${check.accepted}`)
    const value = DIGITS.test(raw) ? Number(raw) : Number.NaN
    if (!(value >= check.minimum && value <= check.maximum)) throw invalidField(check.name, `must be ${check.accepted}, got '${raw.slice(0, 40)}'`)
  }
}

/** preValidation hook form of checkPlainIntegers. */
export async function plainIntegers (request: FastifyRequest): Promise<void> {
  checkPlainIntegers(request)
}
