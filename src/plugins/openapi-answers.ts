import { MESSAGES } from '../errors.js'
import { ProblemSchema } from '../schemas/common.js'
import { OPERATIONS, type OperationId } from '../versions/operations.js'

/**
 * What the vendor documents say an operation answers besides its success: each status it can
 * give, with the content type and schema it is given with (src/errors.ts and
 * src/plugins/errors.ts make them), and no status it cannot give. And the document-wide shape
 * rules: a closed set of strings written as an `enum`.
 */

const PROBLEM = { 'application/problem+json': { schema: ProblemSchema } }
const problem = (description: string) => ({ description, content: PROBLEM })
const sentence = (text: string) => ({ 'text/plain': { schema: { type: 'string', enum: [text], example: text } } })
const retryAfter = { 'Retry-After': { description: 'seconds to wait before sending the request again', schema: { type: 'integer', minimum: 1 } } }

/**
 * The error answers of one vendor operation:
 * - 400 on every operation (a query, path id or body the binder refuses, an unsupported or
 *   ambiguous `version`);
 * - 401 the documented sentence, as text/plain, on every operation;
 * - 403 on every operation of an agency: the documented sentence as text/plain for an agency
 *   that is not available, and where the operation needs a scope, a problem naming it;
 * - 404 where the path names a client (unknown or deleted);
 * - 409 where a RefId is stored (log notes, attachments: the same RefId with another body) and on
 *   create client (no client numbers left); receipts answer theirs per item, inside a 200;
 * - 413 and 415 on operations with a body;
 * - 429 and 503 on every operation: fault rules answer them, create client over its rate, the
 *   sandbox shutting down or its shared database unreachable.
 */
export function vendorErrors (id: OperationId): Record<string, unknown> {
  const op = OPERATIONS[id]
  const errors: Record<string, unknown> = {
    400: problem('Bad request: errors[] names each field and what is wrong'),
    401: { description: MESSAGES.unauthorized, content: sentence(MESSAGES.unauthorized) }
  }
  if (op.params !== undefined) {
    errors[403] = op.scope === undefined
      ? { description: `${MESSAGES.agencyUnavailable} (text/plain)`, content: sentence(MESSAGES.agencyUnavailable) }
      : {
          description: `${MESSAGES.agencyUnavailable} (text/plain), or a problem body naming the ${op.scope} scope the agency has not granted`,
          content: { ...sentence(MESSAGES.agencyUnavailable), ...PROBLEM }
        }
  }
  if (op.url.includes(':clientId')) errors[404] = problem('The client does not exist in this agency, or was deleted')
  if (id === 'logNote' || id === 'attachment') errors[409] = problem('RefId already used for a different body')
  if (id === 'createClient') errors[409] = problem('The agency has no client numbers left: its highest is 2147483647, the largest a client number can be')
  if (op.method === 'POST') {
    errors[413] = problem('Body too large (JSON over 1 MiB; an attachment body over its limit)')
    errors[415] = problem('Wrong Content-Type, or an attachment body that is not gzip')
  }
  errors[429] = {
    description: id === 'createClient'
      ? 'More than 25 create-client requests in one second (Retry-After: 1), or a fault rule'
      : 'Too many requests (a fault rule answers it; Retry-After when the rule sets it)',
    headers: retryAfter,
    content: PROBLEM
  }
  errors[503] = problem('The sandbox is shutting down or cannot reach its database (hosted mode), or a fault rule answers it; retry later')
  return errors
}

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The one string a member of a union of string literals stands for (`{type: string, enum: [x]}` or `{const: x}`), else undefined. */
function literalOf (member: unknown): string | undefined {
  if (!isObject(member)) return undefined
  const keys = Object.keys(member)
  if (!keys.every((k) => k === 'type' || k === 'enum' || k === 'const')) return undefined
  if (member.type !== undefined && member.type !== 'string') return undefined
  if (typeof member.const === 'string' && member.enum === undefined) return member.const
  return Array.isArray(member.enum) && member.enum.length === 1 && typeof member.enum[0] === 'string' && member.const === undefined ? member.enum[0] : undefined
}

/**
 * A document with every `anyOf` of single string values (what TypeBox writes for a union of
 * literals) written as one `{type: string, enum: [...]}`, its description and other keywords
 * kept: generators (NSwag, openapi-generator, oapi-codegen) make an enum type of that, and a
 * union of one-value types of the other. Validation is not concerned: the routes keep their
 * TypeBox schemas.
 */
export function enumsAsEnum<T> (node: T): T {
  if (Array.isArray(node)) return node.map(enumsAsEnum) as T
  if (!isObject(node)) return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) out[key] = enumsAsEnum(value)
  const members = out.anyOf
  if (Array.isArray(members) && members.length > 0) {
    const values = members.map(literalOf)
    if (values.every((v): v is string => v !== undefined)) {
      const { anyOf: _anyOf, ...rest } = out
      return { ...rest, type: 'string', enum: values } as T
    }
  }
  return out as T
}

/**
 * An operationId for a control route, from its method and path: `GET /_sandbox/agencies/{agencyId}/clients`
 * is getAgenciesByAgencyIdClients; the world-scoped copy of a route has Worlds in its name.
 */
export function controlOperationId (method: string, url: string): string {
  const words = url.split('/').filter((s) => s !== '' && s !== '_sandbox').map((segment) => {
    const param = /^[:{](\w+)}?$/.exec(segment)
    const word = param === null ? segment : `by-${param[1]}`
    return word.split(/[^A-Za-z0-9]+/).filter((w) => w !== '').map((w) => w[0].toUpperCase() + w.slice(1)).join('')
  })
  return method.toLowerCase() + (words.join('') || 'Root')
}
