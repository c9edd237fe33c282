import { Type } from '@sinclair/typebox'
import { markCalendar } from './bind.js'

/**
 * Path and query schemas shared by the vendor routes. Query parameter names bind in any case
 * (`Version`, `AsOf`), booleans take `true`/`false` in any case, and parameters a route does not
 * know are ignored with a journal warning (src/schemas/bind.ts).
 */

export const VersionQuery = Type.Object({
  version: Type.Optional(Type.String({ description: '4.0 or 3.0; omit for version 1' }))
})

export const AgencyParams = Type.Object({
  agencyId: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'agency id' })
})

export const ClientParams = Type.Object({
  agencyId: AgencyParams.properties.agencyId,
  clientId: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'client number' })
})

const include = Type.String({
  description: 'comma-delimited groups: Details, People, Contacts, Claims, Policies, Invoices (default: all but Invoices)'
})

export const IncludeQuery = Type.Object({ ...VersionQuery.properties, include: Type.Optional(include) })

export const ChangedClientsQuery = Type.Object({
  ...VersionQuery.properties,
  asOf: Type.Optional(markCalendar(Type.String({ description: 'ISO 8601 date-time, a real calendar value; ids of clients changed after it (no zone means UTC)' }))),
  // from 0: the listing includes the agency-level office 0, so a partner may filter by it
  officeId: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, description: 'an office id from the offices listing (0 is the agency-level office)' })),
  deleted: Type.Optional(Type.Boolean({ description: 'true (in any case): only the ids of deleted clients' }))
})

export const SearchQuery = Type.Object({
  ...IncludeQuery.properties,
  policyNumber: Type.String({ minLength: 1, description: 'exact policy number' })
})

export const BatchBody = Type.Object(
  {
    clientNumbers: Type.Array(Type.Integer({ minimum: 1, maximum: 2147483647 }), {
      description: 'up to 200 client numbers (numeric strings accepted)'
    })
  },
  { additionalProperties: false, title: 'BatchReadRequest' }
)

export const ClientIdList = Type.Array(Type.Integer())
