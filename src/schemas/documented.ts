import type { TSchema } from '@sinclair/typebox'

/**
 * A schema whose OpenAPI description differs from what its route validates: the route keeps a
 * looser schema for a binding reason (receipts are validated one by one, so that one bad receipt
 * does not reject the others), while the document shows the real shape, so that generated clients
 * type the body. A symbol key, which neither Ajv nor the documents key sees.
 */
const DOCUMENTED = Symbol.for('agency-sandbox.documented-as')

/** Marks `schema` to be described in OpenAPI documents as `documented`. */
export function documentAs<T extends TSchema> (schema: T, documented: TSchema): T {
  (schema as { [DOCUMENTED]?: TSchema })[DOCUMENTED] = documented
  return schema
}

/** The schema documents show for `schema`: the one it was marked with, else itself. */
export function documentedSchema<T> (schema: T): T | TSchema {
  return typeof schema === 'object' && schema !== null ? (schema as { [DOCUMENTED]?: TSchema })[DOCUMENTED] ?? schema : schema
}
