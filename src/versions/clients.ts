import type { ClientRow } from '../db/store.js'
import { GROUP_KEYS, type ClientGroup } from '../schemas/client.js'

/**
 * Client rendering per version. Versions 3.0 and 4.0 answer the stored group JSON as is,
 * joined without parsing; version 1 differences are mapped from the parsed groups.
 */

/** A 3.0/4.0 client: `{"clientNumber":N,"details":…,…}` with only the given groups. */
export function renderClient(row: ClientRow, groups: readonly ClientGroup[]): string {
  let out = '{"clientNumber":' + row.clientNumber
  for (const g of groups) {
    const key = GROUP_KEYS[g]
    out += ',"' + key + '":' + row[key]
  }
  return out + '}'
}

export function renderClients(rows: readonly ClientRow[], groups: readonly ClientGroup[]): string {
  if (rows.length === 0) return '[]'
  let out = '['
  for (let i = 0; i < rows.length; i++) out += (i === 0 ? '' : ',') + renderClient(rows[i], groups)
  return out + ']'
}
