import { RULES, type Example, type Finding, type Report, type RuleDefinition, type Severity } from '../../schemas/examiner.js'

/**
 * What the report renderers share: one outcome per catalogued rule (a finding's rule that the
 * catalogue lacks is listed after them, so nothing reported is ever left out), counts, and the
 * one-line form of an example request.
 */

/** What a rule's check came to in one session. */
export type RuleResult = 'passed' | 'failed' | 'warned' | 'noted'

export interface RuleOutcome {
  rule: RuleDefinition
  result: RuleResult
  finding?: Finding
}

const RESULT_OF: Record<Severity, RuleResult> = { error: 'failed', warning: 'warned', info: 'noted' }

/** Every rule of the catalogue in its order, then any rule a finding names that the catalogue lacks. */
export function ruleOutcomes (report: Report): RuleOutcome[] {
  const byRule = new Map(report.findings.map((f) => [f.rule, f]))
  const outcomes: RuleOutcome[] = RULES.map((rule) => {
    const finding = byRule.get(rule.id)
    return finding === undefined ? { rule, result: 'passed' } : { rule, result: RESULT_OF[finding.severity], finding }
  })
  const catalogued = new Set(RULES.map((r) => r.id))
  for (const finding of report.findings) {
    if (catalogued.has(finding.rule)) continue
    const rule = { id: finding.rule, severity: finding.severity, title: finding.message, fix: finding.fix }
    outcomes.push({ rule, result: RESULT_OF[finding.severity], finding })
  }
  return outcomes
}

/** Findings per severity. */
export function severityCounts (report: Report): Record<Severity, number> {
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 }
  for (const f of report.findings) counts[f.severity]++
  return counts
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`

/** A status as people read it: 0 is a dropped connection. */
export const statusText = (status: number) => (status === 0 ? 'dropped' : String(status))

/** `#12 GET /vendor/agency/1001/clients → 429: sent 0.2 s after …` */
export function describeExample (e: Example): string {
  return `#${e.journalId} ${e.method} ${e.path} → ${statusText(e.status)}${e.detail === undefined ? '' : `: ${e.detail}`}`
}

/** Status outcomes of an operation, ordered by status: `200×5, 404×1`. */
export function describeOutcomes (outcomes: Record<string, number>): string {
  return Object.entries(outcomes)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([status, n]) => `${statusText(Number(status))}×${n}`)
    .join(', ')
}

/** The session's one-line description: id, name, integration, times, requests. */
export function describeSession (report: Report): string {
  const s = report.session
  const who = s.clientId === null ? 'every integration' : s.clientId
  const when = s.endedAt === undefined ? `${s.startedAt} (open)` : `${s.startedAt} → ${s.endedAt}`
  return `Session ${s.id} "${s.name}" · ${who} · ${when} · ${plural(s.recorded, 'request')} recorded${s.capped ? ' (cap reached: recording stopped)' : ''}`
}

/** Seconds between two ISO times (0 when either is missing or unreadable). */
export function secondsBetween (from: string, to: string | undefined): number {
  if (to === undefined) return 0
  const ms = Date.parse(to) - Date.parse(from)
  return Number.isFinite(ms) && ms > 0 ? ms / 1000 : 0
}
