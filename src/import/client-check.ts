import { clientErrors } from '../fixture/validate.js'
import { parseTimestamp } from '../time.js'

/**
 * Each imported client is checked as it is written, against the fixture's client schema and
 * the references the whole-fixture check makes (its office, its `modified`, unique policy
 * ids), so the written file validates without ever being loaded whole.
 */

const CLIENT_KEYS = new Set(['clientNumber', 'deleted', 'details', 'people', 'contacts', 'claims', 'policies', 'invoices'])

type Rec = Record<string, unknown>

/**
 * Problems of one client in read-model form (none: it can be written). Top-level keys the
 * fixture's client does not have are removed first (the groups themselves are open records
 * and keep every field).
 */
export function checkClient (client: Rec, offices: ReadonlySet<number>, onUnknownKey: (key: string) => void): string[] {
  for (const key of Object.keys(client)) {
    if (!CLIENT_KEYS.has(key)) {
      onUnknownKey(key)
      delete client[key]
    }
  }
  const problems = clientErrors(client).map((e) => `${e.field}: ${e.message}`)
  if (problems.length > 0) return problems
  const details = client.details as Rec
  if (!offices.has(details.officeId as number)) problems.push(`details.officeId: office ${String(details.officeId)} is not among the agency's offices`)
  if (parseTimestamp(details.modified as string) === null) problems.push('details.modified: must be an ISO 8601 timestamp')
  const ids = new Set<string>()
  for (const p of (client.policies ?? []) as Rec[]) {
    const id = String(p.id).toLowerCase()
    if (ids.has(id)) problems.push(`policies: duplicate policy id ${String(p.id)}`)
    ids.add(id)
  }
  return problems
}
