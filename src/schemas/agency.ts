import { Type, type Static } from '@sinclair/typebox'
import { Int, ScopeSchema } from './common.js'

const officeFields = {
  officeId: Type.Integer({ description: '0 is the agency-level office, described like "<agency name> (primary)"' }),
  officeDescription: Type.String(),
  subAgencyName: Type.String(),
  primaryOffice: Type.Boolean(),
  addressLine1: Type.String(),
  addressLine2: Type.String(),
  city: Type.String(),
  state: Type.String(),
  zipcode: Type.String()
}

/** An office as version 4.0 answers it (archived offices are listed, with `archived: true`). */
export const OfficeSchema = Type.Object(
  { ...officeFields, archived: Type.Boolean({ description: 'an archived office cannot be the office of a new client' }) },
  { title: 'Office', additionalProperties: false }
)
export type Office = Static<typeof OfficeSchema>

/** An office as versions 3.0 and 1 answer it: the spec's fields, without `archived`. */
export const OfficeWithoutArchivedSchema = Type.Object(officeFields, { title: 'OfficeWithoutArchived', additionalProperties: false })
export type OfficeWithoutArchived = Static<typeof OfficeWithoutArchivedSchema>

/** An agency user as the users endpoint answers it (active users only). */
export const AgencyUserSchema = Type.Object(
  {
    userId: Int,
    username: Type.String({ minLength: 3, maxLength: 3 }),
    firstName: Type.Optional(Type.String()),
    lastName: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    homeOffice: Type.Optional(Int)
  },
  { title: 'AgencyUser', additionalProperties: false }
)
export type AgencyUser = Static<typeof AgencyUserSchema>

/** Version 4.0 agencies listing entry. */
export const AgencyEntrySchema = Type.Object(
  { agencyId: Int, scopes: Type.Array(ScopeSchema) },
  { title: 'AgencyEntry', additionalProperties: false }
)
export type AgencyEntry = Static<typeof AgencyEntrySchema>
