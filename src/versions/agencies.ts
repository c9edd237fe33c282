import { Type, type Static } from '@sinclair/typebox'
import { AgencyEntrySchema, type AgencyEntry } from '../schemas/agency.js'
import type { ApiVersion } from './index.js'

/** Agencies listing: objects with scopes in 4.0, bare Int ids in 3.0 and 1. */
export const agencyListSchema = {
  '4.0': Type.Array(AgencyEntrySchema),
  '3.0': Type.Array(Type.Integer()),
  // eslint-disable-next-line @stylistic/quote-props -- '1' stays a string key, like the version it names
  '1': Type.Array(Type.Integer())
} as const

export const mapAgencyList: { [V in ApiVersion]: (entries: AgencyEntry[]) => Static<(typeof agencyListSchema)[V]> } = {
  '4.0': (entries) => entries,
  '3.0': (entries) => entries.map((e) => e.agencyId),
  // eslint-disable-next-line @stylistic/quote-props -- '1' stays a string key, like the version it names
  '1': (entries) => entries.map((e) => e.agencyId)
}
