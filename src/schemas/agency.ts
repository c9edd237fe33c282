import { Type, type Static } from '@sinclair/typebox'
import { Int, ScopeSchema } from './common.js'

export const OfficeSchema = Type.Object(
  {
    officeId: Int,
    officeDescription: Type.String(),
    subAgencyName: Type.String(),
    primaryOffice: Type.Boolean(),
    addressLine1: Type.String(),
    addressLine2: Type.String(),
    city: Type.String(),
    state: Type.String(),
    zipcode: Type.String()
  },
  { title: 'Office', additionalProperties: false }
)
export type Office = Static<typeof OfficeSchema>

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
