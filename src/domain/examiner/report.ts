import { BUILD } from '../../build-stamp.js'
import { PACKAGE_VERSION } from '../../package-root.js'
import {
  RULES, RULES_VERSION, type Evidence, type Finding, type Report, type ReportSummary, type ReportWorld, type Session, type Verdict
} from '../../schemas/examiner.js'
import { coverageOf } from './coverage.js'
import { hasEvidence, judge } from './evidence.js'
import { CLIENT_CHANGED, type RecordedRequest, type RuleOutcomes } from './records.js'
import { trafficRules } from './rules.js'
import { syncChecks, type ClientsOf, type DeclaredMirror } from './sync.js'

export type { DeclaredMirror } from './sync.js'

export interface ReportInput {
  session: Session
  /** The session's requests in recording order, with the world's changes it saw among them. */
  requests: readonly RecordedRequest[]
  mirrors: readonly DeclaredMirror[]
  /** The agency's clients now (the truth the sync check compares with). */
  clientsOf: ClientsOf
  /** The world's time the session's records end: a client changed later is not judged (see syncChecks). */
  horizonMs: number
  /** The world the session belongs to, and the data it started from. */
  world: ReportWorld
}

const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 } as const

/**
 * Fail with any error; no-evidence when the run gave nothing to judge (no request of its Client
 * Id, or no sync); warn with any warning; else pass (info never changes the verdict).
 */
export function verdictOf (findings: readonly Finding[], evidence: Evidence): Verdict {
  if (findings.some((f) => f.severity === 'error')) return 'fail'
  if (!hasEvidence(evidence)) return 'no-evidence'
  if (findings.some((f) => f.severity === 'warning')) return 'warn'
  return 'pass'
}

/** Judges a session's requests with every rule of the catalogue. */
export async function buildReport ({ session, requests: recorded, mirrors, clientsOf, horizonMs, world }: ReportInput): Promise<Report> {
  // the world's changes the session saw place its requests in time for the sync check; the other rules judge requests only
  const requests = recorded.filter((r) => r.operation !== CLIENT_CHANGED)
  const traffic = trafficRules(requests)
  const { sync, outcomes: syncOutcomes } = await syncChecks(recorded, mirrors, clientsOf, horizonMs)
  const { coverage, outcomes: coverageOutcomes } = coverageOf(requests, traffic)
  const outcomes: RuleOutcomes = new Map([...traffic, ...syncOutcomes, ...coverageOutcomes])
  const findings: Finding[] = []
  for (const rule of RULES) {
    const outcome = outcomes.get(rule.id)
    if (outcome === undefined) throw new Error(`rule ${rule.id} of the catalogue has no check`)
    if (outcome.tally.count === 0) continue
    findings.push({ rule: rule.id, severity: rule.severity, count: outcome.tally.count, message: outcome.message, fix: rule.fix, examples: outcome.tally.examples })
  }
  // Stable sort: by severity, then in catalogue order.
  findings.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity])
  const { evidence, rules } = judge(requests, mirrors.length, new Map([...outcomes].map(([id, o]) => [id, o.tally.count])))
  return {
    session,
    verdict: verdictOf(findings, evidence),
    evidence,
    findings,
    sync,
    coverage,
    judgedBy: { version: PACKAGE_VERSION, build: BUILD, rulesVersion: RULES_VERSION, rules },
    world
  }
}

/**
 * A report kept before reports named their judge and their evidence (rulesVersion 1): answered
 * with what can still be told, its verdict as it was judged. Its evidence is read from its
 * coverage; its judge and its world's start are unknown; it lists no rule outcome.
 */
export function keptReport (text: string, world: ReportWorld): Report {
  const report = JSON.parse(text) as Report
  if (report.judgedBy !== undefined) return report
  const count = (operation: string) => report.coverage.operations
    .filter((o) => o.operation === operation)
    .reduce((n, o) => n + (o.outcomes['200'] ?? 0), 0)
  const { signature: _unsigned, ...kept } = report
  return {
    ...kept,
    evidence: { requests: report.session.recorded, listings: count('changedClients'), clientReads: count('getClient') + count('batchClients') },
    judgedBy: { version: 'unknown', build: 'unknown', rulesVersion: 1, rules: [] },
    world: { ...world, startDigest: 'unknown' }
  }
}

/** The verdict and the findings without examples, for ending a session. */
export function summarize (report: Report): ReportSummary {
  const counts = { error: 0, warning: 0, info: 0 }
  for (const f of report.findings) counts[f.severity]++
  return {
    session: report.session,
    verdict: report.verdict,
    evidence: report.evidence,
    counts,
    findings: report.findings.map(({ rule, severity, count, message }) => ({ rule, severity, count, message }))
  }
}
