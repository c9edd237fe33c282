import { randomUUID } from 'node:crypto'

/**
 * A ledger of writes for hosted mode's failure tests and benchmark: writers that send log notes
 * and create clients (each with a policy number of its own) through the instances given, in turn,
 * until stopped, and note what each answer said; then what the world holds is compared with it.
 * An acknowledged write must be there once; one answered "Nothing was applied" must not be there;
 * one whose outcome was unknown may be either. The demo fixture's agency 1001 and client 1001.
 */

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64'), 'content-type': 'application/json' }
const AGENCY = 1001

const note = () => ({ refId: randomUUID(), ts: '2026-11-20T10:00:00Z', channel: 29, note: '<p>Called about renewal</p>' })
const client = (policyNumber: string) => ({
  People: [{ FirstName: 'Ada', LastName: 'Ledger', MainContactType: 'First' }],
  Log: { Channel: 29, Note: 'New client', TS: '2026-11-20T10:00:00Z' },
  Policy: { PolicyNumber: policyNumber, LOBs: ['HOME'], EffectiveDate: '2026-12-01', State: 'ME', ApplicationType: 'Personal' }
})

export interface Ledger {
  /** Log notes and clients acknowledged (200). */
  notes: string[]
  clients: number[]
  /** Log notes (refIds) and creates (policy numbers) answered 503 saying nothing was applied. */
  notApplied: string[]
  createsNotApplied: string[]
  /** Every answer's status (0: no answer, the connection failed; -1: none within the writer's patience) and how long it took. */
  answers: Array<{ status: number, ms: number, retryAfter: string | null, atMs: number }>
}

export const newLedger = (): Ledger => ({ notes: [], clients: [], notApplied: [], createsNotApplied: [], answers: [] })

/**
 * One writer: log notes, and every `createEvery`th write a create, through `urls` (round robin), each
 * answer noted, until `run.stop`.
 */
export async function writer (urls: () => string[], ledger: Ledger, run: { stop: boolean }, patienceMs = 8000, createEvery = 4): Promise<void> {
  for (let i = 0; !run.stop; i++) {
    const targets = urls()
    const url = targets[i % targets.length]
    const began = Date.now()
    const sent = note()
    const isNote = i % createEvery !== createEvery - 1
    // a policy number holds at most 25 characters
    const policy = `L-${sent.refId.replace(/-/g, '').slice(0, 20)}`
    try {
      const answer = isNote
        ? await fetch(`${url}/vendor/agency/${AGENCY}/client/1001/log?version=4.0`, { method: 'POST', headers: AUTH, body: JSON.stringify(sent), signal: AbortSignal.timeout(patienceMs) })
        : await fetch(`${url}/vendor/agency/${AGENCY}/client?version=4.0`, { method: 'POST', headers: AUTH, body: JSON.stringify(client(policy)), signal: AbortSignal.timeout(patienceMs) })
      const text = await answer.text()
      ledger.answers.push({ status: answer.status, ms: Date.now() - began, retryAfter: answer.headers.get('retry-after'), atMs: began })
      if (answer.status === 200 && isNote) ledger.notes.push(sent.refId)
      if (answer.status === 200 && !isNote) ledger.clients.push((JSON.parse(text) as { clientNumber: number }).clientNumber)
      const refused = answer.status === 503 && /Nothing was applied/.test(text)
      if (refused && isNote) ledger.notApplied.push(sent.refId)
      if (refused && !isNote) ledger.createsNotApplied.push(policy)
    } catch (e) {
      ledger.answers.push({ status: (e as Error).name === 'TimeoutError' ? -1 : 0, ms: Date.now() - began, retryAfter: null, atMs: began })
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

/** What the world holds against the ledger: acknowledged writes missing, written twice, and said not applied yet there. */
export async function audit (url: string, ledger: Ledger): Promise<{ missing: string[], twice: string[], falselyRefused: string[] }> {
  const writes = await (await fetch(`${url}/_sandbox/agencies/${AGENCY}/writes?kind=log`)).json() as Array<{ refId: string }>
  const count = new Map<string, number>()
  for (const { refId } of writes) count.set(refId, (count.get(refId) ?? 0) + 1)
  const missing = ledger.notes.filter((refId) => count.get(refId) === undefined)
  const clients = await Promise.all(ledger.clients.map(async (n) => ({ n, status: (await fetch(`${url}/vendor/agency/${AGENCY}/client/${n}?version=4.0`, { headers: AUTH })).status })))
  for (const { n, status } of clients) if (status !== 200) missing.push(`client ${n}`)
  const twice = [...count].filter(([, n]) => n > 1).map(([refId]) => refId)
  if (new Set(ledger.clients).size !== ledger.clients.length) twice.push('a client number acknowledged twice')
  const falselyRefused = ledger.notApplied.filter((refId) => count.has(refId))
  for (const policy of ledger.createsNotApplied) {
    const found = await (await fetch(`${url}/vendor/agency/${AGENCY}/clients/search?version=4.0&policyNumber=${policy}`, { headers: AUTH })).json() as unknown[]
    if (found.length > 0) falselyRefused.push(`client with policy ${policy}`)
  }
  return { missing, twice, falselyRefused }
}
