import { fixtureClientErrors } from '../fixture/validate.js'

/**
 * Each imported client is checked as it is written, by the rules the whole-fixture check
 * applies to a client (src/fixture/validate.ts: its nesting within the document, `__proto__`
 * keys, the client schema, its office, its `modified`, unique policy ids), so the written file
 * validates without ever being loaded whole.
 */

const CLIENT_KEYS = new Set(['clientNumber', 'deleted', 'details', 'people', 'contacts', 'claims', 'policies', 'invoices'])

type Rec = Record<string, unknown>

/** Removes the top-level keys the fixture's client does not have (the groups themselves are open records and keep every field). */
export function dropUnknownKeys (client: Rec, onUnknownKey: (key: string) => void): void {
  for (const key of Object.keys(client)) {
    if (!CLIENT_KEYS.has(key)) {
      onUnknownKey(key)
      delete client[key]
    }
  }
}

/** Problems of one client as it is written (`json`, its text); none: it can be written. */
export function checkClient (client: Rec, json: string, offices: ReadonlySet<number>): string[] {
  return fixtureClientErrors(client, json, offices).map((e) => `${e.field}: ${e.message}`)
}
