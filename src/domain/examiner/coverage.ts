import type { ChecklistEntry, ChecklistItem, Coverage } from '../../schemas/examiner.js'
import { API_VERSIONS, type ApiVersion } from '../../versions/index.js'
import { operationsOf } from '../../versions/operations.js'
import { Tally, type RecordedRequest, type RuleOutcomes } from './records.js'

/**
 * Coverage: every operation of each API version the session used, with the statuses it saw, and
 * the go-live checklist (a 202, a 429 and a 403 each answered and handled).
 */

const WRITE_OPERATIONS = new Set(['logNote', 'attachment', 'receipts', 'createClient'])

const CHECKLIST_TITLES: Record<ChecklistItem, string> = {
  '202-handled': 'A write answered 202 (saved for later) was taken as success, not sent again under a new RefId',
  '429-handled': 'A 429 was answered and the integration waited its Retry-After',
  '403-handled': 'A 403 was answered (agency inactive or scope missing) and the integration carried on'
}

function checklist (requests: readonly RecordedRequest[], traffic: RuleOutcomes): ChecklistEntry[] {
  const first = (test: (r: RecordedRequest) => boolean) => requests.find(test)
  const saved = first((r) => r.status === 202 && r.operation !== undefined && WRITE_OPERATIONS.has(r.operation))
  const limited = first((r) => r.status === 429)
  const refusedAt = requests.findIndex((r) => r.status === 403)
  const refused = refusedAt === -1 ? undefined : requests[refusedAt]
  const clean = (rule: string) => (traffic.get(rule)?.tally.count ?? 0) === 0
  const entry = (item: ChecklistItem, request: RecordedRequest | undefined, handled: boolean): ChecklistEntry => ({
    item,
    title: CHECKLIST_TITLES[item],
    exercised: request !== undefined && handled,
    ...(request === undefined ? {} : { journalId: request.journalId })
  })
  return [
    entry('202-handled', saved, clean('write-resent-after-202')),
    entry('429-handled', limited, clean('retry-after-ignored')),
    // Carried on: a later request went to another agency or operation.
    entry('403-handled', refused, refused !== undefined &&
      requests.slice(refusedAt + 1).some((r) => r.agencyId !== refused.agencyId || r.operation !== refused.operation))
  ]
}

export function coverageOf (requests: readonly RecordedRequest[], traffic: RuleOutcomes): { coverage: Coverage, outcomes: RuleOutcomes } {
  /** Per version and operation: status → requests. */
  const seen = new Map<string, Map<string, Record<string, number>>>()
  for (const r of requests) {
    if (r.operation === undefined) continue
    let operations = seen.get(r.version)
    if (operations === undefined) seen.set(r.version, (operations = new Map()))
    let outcomes = operations.get(r.operation)
    if (outcomes === undefined) operations.set(r.operation, (outcomes = {}))
    outcomes[r.status] = (outcomes[r.status] ?? 0) + 1
  }
  const coverage: Coverage = { operations: [], notExercised: [], checklist: checklist(requests, traffic) }
  for (const version of API_VERSIONS as readonly ApiVersion[]) {
    const operations = seen.get(version)
    if (operations === undefined) continue
    for (const operation of operationsOf(version)) {
      const outcomes = operations.get(operation)
      coverage.operations.push({ version, operation, outcomes: outcomes ?? {} })
      if (outcomes === undefined) coverage.notExercised.push({ version, operation })
    }
  }
  const missing = coverage.checklist.filter((c) => !c.exercised)
  const tally = new Tally()
  if (missing.length > 0) {
    tally.add(undefined, undefined, missing.length)
    tally.name(...missing.map((c) => c.item))
  }
  return {
    coverage,
    outcomes: new Map([['checklist-incomplete', { tally, message: `not exercised: ${tally.list()}` }]])
  }
}
