import { RULES, type Evidence, type RuleOutcomeName, type RuleResult, type Severity } from '../../schemas/examiner.js'
import { CLIENT_CHANGED, queryIsTrue, type RecordedRequest } from './records.js'

/**
 * Evidence before a verdict: what the session's requests gave the rules to judge. A run with no
 * request of its Client Id, or with no sync at all (no changed-clients listing answered, no client
 * read), proves nothing, whatever its findings: its verdict is no-evidence, never pass. And a
 * rule the run gave nothing to judge (no write for the RefId rules, no 429 for Retry-After) is
 * not-exercised, not passed.
 */

const WRITE_OPERATIONS = new Set(['logNote', 'attachment', 'receipts', 'createClient'])
const READ_OPERATIONS = new Set(['getClient', 'batchClients'])

/** What the run did, as the rules' preconditions ask it. */
interface Seen {
  requests: number
  listings: number
  clientReads: number
  anyRead: boolean
  batchRead: boolean
  withAgency: boolean
  write: boolean
  saved202: boolean
  retryAfter429: boolean
  createClient: boolean
  mirrors: boolean
}

/** One pass over the session's requests (the world's changes among them are not the integration's). */
function seen (requests: readonly RecordedRequest[], mirrors: number): Seen {
  const s: Seen = { requests: 0, listings: 0, clientReads: 0, anyRead: false, batchRead: false, withAgency: false, write: false, saved202: false, retryAfter429: false, createClient: false, mirrors: mirrors > 0 }
  for (const r of requests) {
    if (r.operation === CLIENT_CHANGED) continue
    s.requests++
    const op = r.operation ?? ''
    if (op === 'changedClients' && r.status === 200 && !queryIsTrue(r, 'deleted')) s.listings++
    if (READ_OPERATIONS.has(op)) {
      s.anyRead = true
      if (r.status === 200) s.clientReads++
    }
    if (op === 'batchClients') s.batchRead = true
    if (r.agencyId !== undefined) s.withAgency = true
    if (WRITE_OPERATIONS.has(op)) {
      if (r.writes !== undefined) s.write = true
      if (r.status === 202) s.saved202 = true
    }
    if (op === 'createClient') s.createClient = true
    if (r.status === 429 && r.retryAfterS !== undefined) s.retryAfter429 = true
  }
  return s
}

/** When each rule has something to judge: a rule of the catalogue missing here is a defect (buildReport throws). */
const EXERCISED_WHEN: Readonly<Record<string, (s: Seen) => boolean>> = {
  'retry-after-ignored': (s) => s.retryAfter429,
  'write-resent-after-202': (s) => s.saved202,
  'write-retried-new-refid': (s) => s.write,
  'refid-conflict': (s) => s.write,
  'n-plus-one-reads': (s) => s.anyRead,
  'batch-over-limit': (s) => s.batchRead,
  'full-sync-repeated': (s) => s.listings > 0,
  'deleted-never-synced': (s) => s.listings > 0,
  'create-rate-exceeded': (s) => s.createClient,
  'auth-failed': (s) => s.requests > 0,
  'agency-not-listed': (s) => s.withAgency,
  'unknown-fields': (s) => s.requests > 0,
  'mirror-missing': (s) => s.mirrors,
  'mirror-stale': (s) => s.mirrors,
  'mirror-deleted-kept': (s) => s.mirrors,
  'mirror-unknown': (s) => s.mirrors,
  'sync-missed': (s) => s.listings > 0,
  'sync-stale': (s) => s.listings > 0,
  'deletion-missed': (s) => s.listings > 0,
  // the go-live checklist is always judged: what it lacks is its finding
  'checklist-incomplete': () => true
}

/** A finding's outcome: its severity's (an info finding names what was not exercised). */
const OUTCOME_OF: Record<Severity, RuleOutcomeName> = { error: 'fail', warning: 'warn', info: 'not-exercised' }

export interface Judged {
  evidence: Evidence
  rules: RuleResult[]
}

/** The evidence the session gave, and every rule of the catalogue with its outcome, from each rule's count of findings. */
export function judge (requests: readonly RecordedRequest[], mirrors: number, counts: ReadonlyMap<string, number>): Judged {
  const s = seen(requests, mirrors)
  const rules = RULES.map((rule): RuleResult => {
    const exercised = EXERCISED_WHEN[rule.id]
    if (exercised === undefined) throw new Error(`rule ${rule.id} of the catalogue says nothing of when it is exercised`)
    const count = counts.get(rule.id) ?? 0
    const outcome = count > 0 ? OUTCOME_OF[rule.severity] : exercised(s) ? 'pass' : 'not-exercised'
    return { id: rule.id, severity: rule.severity, outcome, count }
  })
  return { evidence: { requests: s.requests, listings: s.listings, clientReads: s.clientReads }, rules }
}

/** Whether the run gave something to judge: a request, and a sync (a listing or a client read). */
export const hasEvidence = (e: Evidence): boolean => e.requests > 0 && e.listings + e.clientReads > 0

/** Why a run has no evidence, in a sentence (undefined when it has). */
export function missingEvidence (e: Evidence, clientId: string | null): string | undefined {
  if (e.requests === 0) {
    return clientId === null ? 'the session recorded no request' : `the session recorded no request of Client Id ${clientId}`
  }
  if (e.listings + e.clientReads === 0) return 'the run did no sync: no changed-clients listing answered and no client read'
  return undefined
}
