import { Type, type Static } from '@sinclair/typebox'
import { AgencyEntrySchema, type AgencyEntry } from '../schemas/agency.js'
import type { ApiVersion } from './index.js'

/** Agencies listing: objects with scopes in 4.0, bare Int ids in 3.0 and 1. */
export const agencyListSchema = {
  '4.0': Type.Array(AgencyEntrySchema),
  '3.0': Type.Array(Type.Integer()),
  '1': Type.Array(Type.Integer())
} as const

export const mapAgencyList: { [V in ApiVersion]: (entries: AgencyEntry[]) => Static<(typeof agencyListSchema)[V]> } = {
  '4.0': (entries) => entries,
  '3.0': (entries) => entries.map((e) => e.agencyId),
  '1': (entries) => entries.map((e) => e.agencyId)
}
