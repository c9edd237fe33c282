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

/** Throws a 400 naming the first integer property of the path or query that is not plain digits in range (the route's schema given, or read from the request). */
export function checkPlainIntegers (request: FastifyRequest, schema: { params?: unknown, querystring?: unknown } | undefined = request.routeOptions.schema): void {
  if (schema === undefined) return
  const parts: [schema: unknown, values: unknown][] = [[schema.params, request.params], [schema.querystring, request.query]]
  for (const [part, values] of parts) {
    const properties = (part as { properties?: Record<string, IntegerProperty> } | undefined)?.properties
    if (properties === undefined || values === null || typeof values !== 'object') continue
    for (const [name, property] of Object.entries(properties)) {
      if (property.type !== 'integer' || !Object.hasOwn(values, name)) continue
      const raw = (values as Record<string, unknown>)[name]
      const minimum = property.minimum ?? 0
      const maximum = property.maximum ?? INT32_MAX
      const accepted = `a whole number from ${minimum} to ${maximum} in plain digits`
      if (typeof raw !== 'string') throw invalidField(name, `must be given once, as ${accepted}`)
      const value = DIGITS.test(raw) ? Number(raw) : Number.NaN
      if (!(value >= minimum && value <= maximum)) throw invalidField(name, `must be ${accepted}, got '${raw.slice(0, 40)}'`)
    }
  }
}

/** preValidation hook form of checkPlainIntegers. */
export async function plainIntegers (request: FastifyRequest): Promise<void> {
  checkPlainIntegers(request)
}
