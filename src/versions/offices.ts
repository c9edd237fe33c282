import { Type, type Static } from '@sinclair/typebox'
import { OfficeSchema, OfficeWithoutArchivedSchema, type Office, type OfficeWithoutArchived } from '../schemas/agency.js'
import type { ApiVersion } from './index.js'

/**
 * Offices listing. Every version lists the same offices (the agency-level office 0 and archived
 * offices included: a versioned controller shares its query and differs in the record it
 * answers); only 4.0 carries `archived`, the field the contract records for 4.0.
 */
export const officeListSchema = {
  '4.0': Type.Array(OfficeSchema),
  '3.0': Type.Array(OfficeWithoutArchivedSchema),
  // eslint-disable-next-line @stylistic/quote-props -- '1' stays a string key, like the version it names
  '1': Type.Array(OfficeWithoutArchivedSchema)
} as const

const withoutArchived = ({ archived: _archived, ...office }: Office): OfficeWithoutArchived => office

export const mapOfficeList: { [V in ApiVersion]: (offices: Office[]) => Static<(typeof officeListSchema)[V]> } = {
  '4.0': (offices) => offices,
  '3.0': (offices) => offices.map(withoutArchived),
  // eslint-disable-next-line @stylistic/quote-props -- '1' stays a string key, like the version it names
  '1': (offices) => offices.map(withoutArchived)
}
