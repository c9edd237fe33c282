import type { TSchema } from '@sinclair/typebox'
import { parseTimestamp } from '../time.js'

/**
 * Values a fixture of an earlier format holds where the read model now declares another type
 * (a JSON number for `details.agencyNum`, a date with a zone for a policy date). The fixture
 * loader converts them, once per load, and says so in one warning per field
 * (src/fixture/upgrade.ts); the answers then carry only the current types. A plain string field
 * of the read model takes a former number without a mark (`1001` becomes `"1001"`); a mark
 * says how a field converts when that is not its plain text.
 */
export interface FormerValue {
  /** The value in the field's current type, or undefined when `value` is no former-format value. */
  convert (value: unknown): unknown
  /** What converted values become, as the warning says it ("strings", "term descriptors"). */
  becomes: string
  /** A null the field held in the earlier format is left out (the field is absent), where null is no longer allowed. */
  nullIsAbsent?: true
}

/** A symbol key: TypeBox's wrappers copy it, and neither Ajv nor the JSON Schema output sees it. */
const FORMER = Symbol.for('agency-sandbox.former-value')

export function markFormerValue<T extends TSchema> (schema: T, former: FormerValue): T {
  (schema as { [FORMER]?: FormerValue })[FORMER] = former
  return schema
}

export const formerValueOf = (schema: TSchema): FormerValue | undefined => (schema as { [FORMER]?: FormerValue })[FORMER]

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)

/** A JSON number written as text by `format` (default: its plain decimal text). */
export const numberAsText = (format: (n: number) => string = String, becomes = 'strings'): FormerValue => ({
  convert: (value) => (finite(value) ? format(value) : undefined),
  becomes
})

/** A whole number written as plain decimal digits (`"2006"`) becomes that number. */
export const textAsInteger: FormerValue = {
  convert: (value) => (typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : undefined),
  becomes: 'numbers'
}

/** A date and time without a zone, as the live service writes policy dates. */
export const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?$/
/** A UTC date and time with `Z`, as the live service writes `modified`. */
export const UTC_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?Z$/

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const LOCAL_PART = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(?:\.\d{1,7})?)?(?:Z|[+-]\d{2}:?\d{2})?$/i

/**
 * A policy date as the live service writes it, without a zone (`2024-10-08T00:00:00`): a date
 * alone gets midnight, a zoned value keeps its local date and time and loses the zone.
 */
export const localDateTime: FormerValue = {
  convert (value) {
    if (typeof value !== 'string' || LOCAL_DATE_TIME.test(value) || parseTimestamp(value) === null) return undefined
    if (DATE_ONLY.test(value)) return `${value}T00:00:00`
    const local = LOCAL_PART.exec(value)
    return local === null ? undefined : local[1] + (local[2] ?? ':00')
  },
  becomes: 'dates without a zone'
}

/** A `modified` as the live service writes it, in UTC with `Z`: a value without a zone is UTC, an offset is applied. */
export const utcDateTime: FormerValue = {
  convert (value) {
    if (typeof value !== 'string' || UTC_DATE_TIME.test(value)) return undefined
    const ms = parseTimestamp(value)
    return ms === null ? undefined : new Date(ms).toISOString()
  },
  becomes: 'UTC times with Z'
}

/**
 * A field that may no longer be null: a former fixture's null is left out (absent), as fixture
 * clients leave out what they do not have (the state of a client created by an earlier version).
 */
export const nullAsAbsent = (former: FormerValue = { convert: () => undefined, becomes: 'absent fields' }): FormerValue => ({ ...former, nullIsAbsent: true })
