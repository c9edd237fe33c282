/**
 * A partner's sync written against the TypeScript client that openapi-typescript generates from
 * the sandbox's /openapi/4.0.json (`api-4.0.ts`, made by the test next to this file), with
 * openapi-fetch as the runtime. test/typed-clients/generated-client.test.ts type-checks it
 * (strict) and runs it against a sandbox.
 *
 * It reads what only named, typed schemas give: the agencies' scopes, the fields of Client,
 * Policy and Invoice, the Receipt a receipts body is made of and the ReceiptResult it answers.
 * Were any of these bodies `object` or `unknown` in the document, it would not type-check.
 */
import createClient from 'openapi-fetch'
import { randomUUID } from 'node:crypto'
import type { components, paths } from './api-4.0.js'

type Client = components['schemas']['Client']
type Invoice = components['schemas']['Invoice']
type LogNote = components['schemas']['LogNote']
type ReceiptResult = components['schemas']['ReceiptResult']
/** The receipts body as the operation declares it: its items must be typed for `total` to be read below. */
type ReceiptsBody = NonNullable<paths['/vendor/agency/{agencyId}/client/{clientId}/receipts']['post']['requestBody']>['content']['application/json']

export interface SyncSummary {
  agencies: number
  clients: number
  policies: number
  premium: number
  openBalance: number
  /** The answer to the log note written on the first client with an open invoice. */
  logNote?: string
  receipts: ReceiptResult[]
}

const version = '4.0'
const BATCH = 200

/** Groups a sync reads (Invoices only where the agency opted in; otherwise the answer says Denied). */
const include = 'Details,People,Contacts,Claims,Policies,Invoices'

function fail (what: string, error: unknown): never {
  throw new Error(`${what}: ${JSON.stringify(error)}`)
}

/** Premium and open balance of one client, from its typed groups. */
function totals (client: Client): { policies: number; premium: number; openBalance: number } {
  const policies = client.policies ?? []
  const premium = policies.reduce((sum, policy) => sum + (policy.premium ?? 0), 0)
  const openBalance = (client.invoices ?? []).reduce((sum, invoice: Invoice) => sum + invoice.balance, 0)
  return { policies: policies.length, premium, openBalance }
}

/** Pays an open invoice in full: a receipt applied to it, as the receipts operation types one. */
function paymentOf (invoice: Invoice): ReceiptsBody {
  return [{
    refId: randomUUID(),
    ts: new Date().toISOString(),
    channel: 29,
    logNote: `Payment of invoice ${invoice.invoiceNumber ?? invoice.id}`,
    payMethod: 'Check',
    total: invoice.balance,
    invoices: [{ invoiceId: invoice.id, amount: invoice.balance }]
  }]
}

/** Every agency's clients changed since `asOf` (all when absent), then one log note and one receipt. */
export async function sync (baseUrl: string, authorization: string, asOf?: string): Promise<SyncSummary> {
  const api = createClient<paths>({ baseUrl, headers: { authorization } })
  const agencies = await api.GET('/vendor/agencies', { params: { query: { version } } })
  if (agencies.data === undefined) fail('agencies', agencies.error)
  const summary: SyncSummary = { agencies: 0, clients: 0, policies: 0, premium: 0, openBalance: 0, receipts: [] }
  let payable: { agencyId: number, client: Client, invoice: Invoice } | undefined

  for (const { agencyId, scopes } of agencies.data) {
    if (!scopes.includes('client-read')) continue
    summary.agencies++
    const changed = await api.GET('/vendor/agency/{agencyId}/clients', { params: { path: { agencyId }, query: { version, asOf } } })
    if (changed.data === undefined) fail(`changed clients of ${agencyId}`, changed.error)
    for (let at = 0; at < changed.data.length; at += BATCH) {
      const clientNumbers = changed.data.slice(at, at + BATCH)
      const read = await api.POST('/vendor/agency/{agencyId}/clients', {
        params: { path: { agencyId }, query: { version, include } },
        body: { clientNumbers }
      })
      if (read.data === undefined) fail(`batch read of ${agencyId}`, read.error)
      for (const client of read.data) {
        const t = totals(client)
        summary.clients++
        summary.policies += t.policies
        summary.premium += t.premium
        summary.openBalance += t.openBalance
        const invoice = client.invoices?.find((i) => i.balance > 0)
        if (payable === undefined && invoice !== undefined && scopes.includes('create-log-attachment-task')) payable = { agencyId, client, invoice }
      }
    }
  }

  if (payable !== undefined) {
    const { agencyId, client, invoice } = payable
    const path = { agencyId, clientId: client.clientNumber }
    const note: LogNote = { refId: randomUUID(), ts: new Date().toISOString(), channel: 33, note: `Synced ${client.details?.modified ?? 'a client'}` }
    const logged = await api.POST('/vendor/agency/{agencyId}/client/{clientId}/log', { params: { path, query: { version } }, body: note, parseAs: 'text' })
    if (logged.error !== undefined) fail('log note', logged.error)
    summary.logNote = logged.data

    const body = paymentOf(invoice)
    const received = body.reduce((sum, receipt) => sum + receipt.total, 0)
    if (received !== invoice.balance) throw new Error(`the receipt pays ${received}, the invoice is ${invoice.balance}`)
    const paid = await api.POST('/vendor/agency/{agencyId}/client/{clientId}/receipts', { params: { path, query: { version } }, body })
    if (paid.data === undefined) fail('receipts', paid.error)
    summary.receipts = paid.data
  }
  return summary
}
