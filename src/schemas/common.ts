import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { markCalendar, markEnumeration } from './bind.js'

/** Shared primitives of the wire format (camelCase, as the live service answers). */

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const Int = Type.Integer()
export const PositiveInt = Type.Integer({ minimum: 1, maximum: 2147483647 })
/** The largest client number: the live service's client numbers are .NET `int`s (32-bit). */
export const MAX_CLIENT_NUMBER = 2_147_483_647
/** A .NET `int`: typed clients (C#, Go, Java) decode it as a 32-bit integer. */
export const Int32 = (options: { description?: string; examples?: number[] } = {}) =>
  Type.Integer({ minimum: -2147483648, maximum: 2147483647, format: 'int32', ...options })
export const Guid = Type.String({
  pattern: '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$',
  description: 'a UUID, e.g. 3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  examples: ['3f2504e0-4f89-11d3-9a0c-0305e82c3301']
})
/** ISO 8601 timestamp; a value without a zone is read as UTC. A request's must be a real calendar value. */
export const DateTimeString = markCalendar(Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,7})?)?(Z|[+-]\\d{2}:?\\d{2})?$',
  description: 'ISO 8601 date and time, e.g. 2024-10-08T14:30:00Z (no zone means UTC)',
  examples: ['2024-10-08T14:30:00Z']
}))
export const DateOnlyString = markCalendar(Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}$',
  description: 'a calendar date yyyy-mm-dd',
  examples: ['2024-10-08']
}), 'date')

export const SCOPES = [
  'client-read',
  'create-log-attachment-task',
  'client-create',
  'user-list',
  'invoice-read'
] as const
export type Scope = (typeof SCOPES)[number]
export const ScopeSchema = Type.Union(SCOPES.map((s) => Type.Literal(s)))

/** Roles that can hold an agency default user (the create-client spelling, `Csr`). */
export const DEFAULT_USER_ROLES = ['Csr', 'Producer', 'Agent1', 'Agent2', 'Agent3'] as const
export type DefaultUserRole = (typeof DEFAULT_USER_ROLES)[number]

export const CLIENT_STATUSES = ['Active', 'DeadFile', 'Prospect', 'Lead'] as const
export const BUSINESS_TYPES = [
  'None', 'Corporation', 'IndividualOrSoleProprietor', 'SubchapterS', 'LLC', 'Partnership',
  'JointVenture', 'NonProfit', 'FamilyTrust'
] as const
export const CONTACT_TYPES = [
  'None', 'WorkPhone', 'WorkEmail', 'CellPhone', 'HomePhone', 'HomeEmail', 'OtherPhone',
  'OtherEmail', 'MessagePhone', 'Pager', 'Fax', 'SocialMedia', 'ClientWebsite', 'OtherWebsite'
] as const
export const MAIN_CONTACT_TYPES = ['None', 'First', 'Second', 'Other'] as const
export const APPLICATION_TYPES = [
  'Undefined', 'Agricultural', 'Commercial', 'EmployeeBenefits', 'Health', 'Life', 'Other',
  'Personal', 'SuretyBond', 'Platform'
] as const

export const literalUnion = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Union(values.map((v) => Type.Literal(v)), description === undefined ? {} : { description })

/**
 * An enumeration of a request, as the live (.NET) binder reads it: any case binds to these
 * spellings, and when `numbered` (a .NET enum: members numbered in declaration order from 0, as
 * the spec lists them) the member's number binds too. Read-back keeps the canonical spelling.
 * `accepted` lists what the schema itself accepts (the values, and any documented second spelling).
 */
export const enumeration = <T extends readonly string[]>(values: T, numbered: boolean, description?: string, accepted: readonly string[] = values) =>
  markEnumeration(literalUnion(accepted, description), values, numbered)

/** The problem body every error except 401/403-agency answers with. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() })))
  },
  { title: 'Problem', description: 'application/problem+json error body' }
)
export type Problem = Static<typeof ProblemSchema>
