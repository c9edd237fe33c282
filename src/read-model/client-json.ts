import type { ClientRow, ConcatPiece } from '../db/index.js'
import { GROUP_KEYS, type ClientGroup } from '../schemas/client.js'

/**
 * The one rule for a 3.0/4.0 client's JSON: `{"clientNumber":N,"<group>":<stored JSON>,…}`, the
 * groups in the order asked, each the stored text unchanged (never parsed nor stringified). The
 * rule is a list of pieces, literal text and stored columns: clientJson() joins them for a row
 * in JavaScript, and batch reads have SQLite join the very same list for each client they read
 * (ClientRepository.concatLiveClientsIn), so both give the same bytes.
 */

const piecesByGroups = new Map<string, readonly ConcatPiece[]>()
/** The same by the list itself, for lists made once and asked again (the default groups: domain/includes.ts). */
const piecesByList = new WeakMap<readonly ClientGroup[], readonly ConcatPiece[]>()

/** The pieces of a client's JSON with these groups (the same list for the same groups). */
export function clientJsonPieces (groups: readonly ClientGroup[]): readonly ConcatPiece[] {
  const known = piecesByList.get(groups)
  if (known !== undefined) return known
  const key = groups.join(',')
  let pieces = piecesByGroups.get(key)
  if (pieces === undefined) {
    const list: ConcatPiece[] = [{ text: '{"clientNumber":' }, { column: 'client_number' }]
    for (const group of groups) {
      const column = GROUP_KEYS[group]
      list.push({ text: `,"${column}":` }, { column })
    }
    list.push({ text: '}' })
    pieces = Object.freeze(list)
    piecesByGroups.set(key, pieces)
  }
  if (Object.isFrozen(groups)) piecesByList.set(groups, pieces)
  return pieces
}

/** A client's JSON, joined from its stored group texts by the pieces of clientJsonPieces(). */
export function clientJson (row: ClientRow, pieces: readonly ConcatPiece[]): string {
  let out = ''
  for (const piece of pieces) {
    out += 'text' in piece ? piece.text : piece.column === 'client_number' ? row.clientNumber : row[piece.column]
  }
  return out
}

/** The JSON array of the rows, each by clientJson(). */
export function clientsJson (rows: readonly ClientRow[], pieces: readonly ConcatPiece[]): string {
  let out = '['
  for (let i = 0; i < rows.length; i++) out += (i === 0 ? '' : ',') + clientJson(rows[i], pieces)
  return out + ']'
}
