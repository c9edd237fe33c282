import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import type { FieldError } from '../errors.js'
import { bindPart } from '../schemas/bind.js'
import { ReceiptItemSchema } from '../schemas/writes.js'
import { pascalPath } from './write-rules.js'
import type { ReceiptCommand } from './writes.js'

/**
 * Item-by-item validation with TypeBox's compiler, for bodies whose items succeed or fail one
 * by one (receipts). Its own module: TypeBox's compiler and value modules load on first use,
 * not at start-up.
 */

/** A JSON pointer (`/invoices/0/amount`) as a field path (`invoices[0].amount`). */
function pointerPath (pointer: string): string {
  let out = ''
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    out = /^\d+$/.test(part) ? `${out}[${part}]` : out === '' ? part : `${out}.${part}`
  }
  return out
}

const TYPE_MESSAGES: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.Object]: 'must be a JSON object',
  [ValueErrorType.Array]: 'must be a JSON array',
  [ValueErrorType.String]: 'must be a string',
  [ValueErrorType.Number]: 'must be a number',
  [ValueErrorType.Integer]: 'must be an integer',
  [ValueErrorType.Boolean]: 'must be true or false',
  [ValueErrorType.Null]: 'must be null',
  [ValueErrorType.ObjectRequiredProperty]: 'is required',
  [ValueErrorType.ObjectAdditionalProperties]: 'is not a known field',
  [ValueErrorType.ArrayUniqueItems]: 'must not repeat items'
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** Literal values of a union whose members are all literals (`literalUnion`), else undefined. */
function literalMembers (schema: TSchema): unknown[] | undefined {
  const members = schema.anyOf as TSchema[] | undefined
  if (!Array.isArray(members) || !members.every((m) => 'const' in m)) return undefined
  return members.map((m) => m.const)
}

/** A TypeBox value error in plain English, worded like the HTTP layer's schema messages. */
function describeError (error: ValueError): string {
  const s = error.schema
  const fixed = TYPE_MESSAGES[error.type]
  if (fixed !== undefined) return fixed
  switch (error.type) {
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? 'must not be empty' : `must be at least ${plural(s.minLength, 'character')}`
    case ValueErrorType.StringMaxLength:
      return `must be at most ${plural(s.maxLength, 'character')}`
    case ValueErrorType.StringPattern:
    case ValueErrorType.StringFormat:
      return typeof s.description === 'string' ? `must be ${s.description}` : 'has an invalid format'
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${s.minimum}`
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${s.maximum}`
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
      return `must be greater than ${s.exclusiveMinimum}`
    case ValueErrorType.NumberExclusiveMaximum:
    case ValueErrorType.IntegerExclusiveMaximum:
      return `must be less than ${s.exclusiveMaximum}`
    case ValueErrorType.NumberMultipleOf:
    case ValueErrorType.IntegerMultipleOf:
      return `must be a multiple of ${s.multipleOf}`
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${plural(s.minItems, 'item')}`
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${plural(s.maxItems, 'item')}`
    case ValueErrorType.Literal:
      return `must be ${String(s.const)}`
    case ValueErrorType.Union: {
      // One message per field for a union of literals, not one per member.
      const values = literalMembers(s)
      if (values !== undefined) return `must be one of ${values.map(String).join(', ')}`
      return typeof s.description === 'string' ? `must be ${s.description}` : 'does not match any allowed form'
    }
    default:
      return error.message
  }
}

/**
 * Compiles a schema into a validator that answers field errors: `[]` for a valid value, otherwise
 * one entry per fault, with PascalCase paths (`Invoices[0].Amount`) and plain-English messages. A
 * missing required field is reported once as "is required". `rootField` names a fault of the value
 * itself (not an object, for instance).
 */
export function compileItemValidator (schema: TSchema, rootField = '(item)'): (value: unknown) => FieldError[] {
  const check = TypeCompiler.Compile(schema)
  return (value: unknown): FieldError[] => {
    if (check.Check(value)) return []
    // Group by path, keeping the order in which paths first fail.
    const byPath = new Map<string, ValueError[]>()
    for (const error of check.Errors(value)) byPath.set(error.path, [...(byPath.get(error.path) ?? []), error])
    const out: FieldError[] = []
    for (const [pointer, errors] of byPath) {
      const path = pointerPath(pointer)
      const field = path === '' ? rootField : pascalPath(path)
      // A missing field also fails its type check; "is required" says it all. Optional fields are
      // not visited when undefined, so an undefined value here is a required field left out.
      const required = errors.some((e) => e.type === ValueErrorType.ObjectRequiredProperty || e.value === undefined)
      const messages = required ? ['is required'] : [...new Set(errors.map(describeError))]
      for (const message of messages) out.push({ field, message })
    }
    return out
  }
}

const validateReceipt = compileItemValidator(ReceiptItemSchema)

/**
 * One item of a receipts body, bound as every JSON body is (src/schemas/bind.ts: keys in any case,
 * unknown ones noted in `warnings`, numbers sent as digit strings converted, enumerations in any
 * case, dates on the calendar), then checked without coercion. Answers the command, or the item's
 * field errors (the binder's and the schema's).
 */
export function checkReceiptItem (raw: unknown, index: number, warnings: string[]): ReceiptCommand | FieldError[] {
  const { value, faults } = bindPart(raw, ReceiptItemSchema, 'body', warnings, `[${index}]`)
  const errors = [...faults.map((f) => ({ field: pascalPath(pointerPath(f.pointer)) || '(item)', message: f.message })), ...validateReceipt(value)]
  return errors.length > 0 ? errors : (value as ReceiptCommand)
}
