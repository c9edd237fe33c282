import { RULES, type Example, type Finding, type Report, type RuleDefinition, type RuleOutcomeName, type Severity } from '../../schemas/examiner.js'
import { missingEvidence } from './evidence.js'

/**
 * What the report renderers share: every rule the report judged with its outcome (a finding's rule
 * that the report does not list is added after them, so nothing reported is ever left out),
 * counts, the evidence, the judge and the world, and the one-line form of an example request.
 */

export interface RuleOutcome {
  rule: RuleDefinition
  outcome: RuleOutcomeName
  finding?: Finding
}

const OUTCOME_OF: Record<Severity, RuleOutcomeName> = { error: 'fail', warning: 'warn', info: 'not-exercised' }

/** Every rule the report judged, in its order, then any rule a finding names that it does not list. */
export function ruleOutcomes (report: Report): RuleOutcome[] {
  const byRule = new Map(report.findings.map((f) => [f.rule, f]))
  const catalogue = new Map(RULES.map((r) => [r.id, r]))
  const outcomes: RuleOutcome[] = report.judgedBy.rules.map((r) => ({
    rule: catalogue.get(r.id) ?? { id: r.id, severity: r.severity, title: byRule.get(r.id)?.message ?? r.id, fix: byRule.get(r.id)?.fix ?? '' },
    outcome: r.outcome,
    finding: byRule.get(r.id)
  }))
  const listed = new Set(report.judgedBy.rules.map((r) => r.id))
  for (const finding of report.findings) {
    if (listed.has(finding.rule)) continue
    const rule = catalogue.get(finding.rule) ?? { id: finding.rule, severity: finding.severity, title: finding.message, fix: finding.fix }
    outcomes.push({ rule, outcome: OUTCOME_OF[finding.severity], finding })
  }
  return outcomes
}

/** Why the verdict is no-evidence, or undefined. */
export const noEvidence = (report: Report): string | undefined =>
  report.verdict === 'no-evidence' ? missingEvidence(report.evidence, report.session.clientId) ?? 'the run gave nothing to judge' : undefined

/** The evidence in one line: `12 requests, 2 listings, 5 client reads`. */
export const describeEvidence = (report: Report): string =>
  `${plural(report.evidence.requests, 'request')}, ${plural(report.evidence.listings, 'changed-clients listing')}, ${plural(report.evidence.clientReads, 'client read')}`

/** The world and the data it started from, the judge, and the signer when the report is signed. */
export function describeProvenance (report: Report): string[] {
  const { world, judgedBy, signer } = report
  return [
    `World ${world.id} "${world.name}"${world.tenant === null ? '' : ` of tenant ${world.tenant.id} "${world.tenant.name}"`}, started from sha256 ${world.startDigest}`,
    `Judged by agency-sandbox ${judgedBy.version}, build ${judgedBy.build}, rules version ${judgedBy.rulesVersion}`,
    ...(signer === undefined ? [] : [`Signed by "${signer.name}" with key ${signer.keyId}`])
  ]
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
