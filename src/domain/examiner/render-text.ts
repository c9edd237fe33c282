import { printable } from '../../printable.js'
import type { Report, SyncCheck } from '../../schemas/examiner.js'
import type { RuleOutcomeName } from '../../schemas/examiner.js'
import {
  describeEvidence, describeExample, describeOutcomes, describeProvenance, describeSession, noEvidence, plural, ruleOutcomes, severityCounts
} from './render-common.js'

/**
 * The report as plain text for a terminal: the verdict first, each finding with its fix and
 * example requests, the sync checks, coverage, and every rule with its result. Values from the
 * session (names, paths, messages) cannot move the cursor, recolour the terminal or reorder
 * text: control and bidirectional-override characters are shown as \xNN / \u{NNNN}.
 */

const MARK: Record<RuleOutcomeName, string> = { pass: 'ok  ', fail: 'FAIL', warn: 'warn', 'not-exercised': '--  ' }

/** Columns padded to their widest cell. */
function table (header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => '  ' + cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')
  return [line(header), ...rows.map(line)]
}

const numbers = (set: SyncCheck['missing']) =>
  set.count === 0 ? '0' : `${set.count} (${set.clientNumbers.join(' ')}${set.count > set.clientNumbers.length ? ' …' : ''})`

export function renderText (report: Report): string {
  const counts = severityCounts(report)
  const why = noEvidence(report)
  const out: string[] = [
    printable(describeSession(report)),
    `Verdict: ${report.verdict.toUpperCase()} (${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}, ${counts.info} info)`,
    ...(why === undefined ? [] : [`No evidence: ${printable(why)}; nothing here says the integration is ready.`]),
    `Evidence: ${describeEvidence(report)}`,
    ...describeProvenance(report).map((line) => printable(line)),
    ''
  ]

  if (report.findings.length === 0) out.push('No findings.', '')
  for (const f of report.findings) {
    out.push(`${f.severity.toUpperCase().padEnd(7)} ${printable(f.rule)} ×${f.count}`)
    out.push(`        ${printable(f.message)}`)
    out.push(`        Fix: ${printable(f.fix)}`)
    for (const e of f.examples) out.push(`        e.g. ${printable(describeExample(e))}`)
    out.push('')
  }

  out.push('Sync check')
  if (report.sync.length === 0) out.push('  no agency synced and no mirror posted')
  else {
    out.push(...table(['agency', 'source', 'missing', 'stale', 'deleted kept', 'unknown'], report.sync.map((s) => [
      String(s.agencyId),
      s.source + (s.upTo === undefined ? '' : ` ≤${s.upTo}`) + (s.asOf === undefined ? '' : ` as of ${printable(s.asOf)}`),
      numbers(s.missing), numbers(s.stale), numbers(s.deletedKept), numbers(s.unknown)
    ])))
  }
  out.push('')

  out.push('Coverage')
  const { operations, notExercised, checklist } = report.coverage
  if (operations.length === 0) out.push('  no operation used')
  else {
    out.push(...table(['version', 'operation', 'outcomes'], operations.map((o) => [
      printable(o.version), printable(o.operation), Object.keys(o.outcomes).length === 0 ? 'not exercised' : describeOutcomes(o.outcomes)
    ])))
  }
  if (notExercised.length > 0) out.push(`  Not exercised: ${notExercised.map((o) => printable(`${o.operation} (${o.version})`)).join(', ')}`)
  for (const c of checklist) {
    out.push(`  [${c.exercised ? 'x' : ' '}] ${printable(c.title)}${c.journalId === undefined ? '' : ` (#${c.journalId})`}`)
  }
  out.push('')

  out.push('Rules')
  for (const o of ruleOutcomes(report)) {
    out.push(`  ${MARK[o.outcome]}  ${printable(o.rule.id)}${o.finding === undefined ? '' : ` ×${o.finding.count}`}${o.outcome === 'not-exercised' && o.finding === undefined ? ' (not exercised)' : ''}`)
  }
  return out.join('\n') + '\n'
}
