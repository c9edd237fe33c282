import type { Report } from '../../schemas/examiner.js'
import {
  describeEvidence, describeExample, describeProvenance, describeSession, noEvidence, ruleOutcomes, secondsBetween, severityCounts, type RuleOutcome
} from './render-common.js'

/**
 * The report as JUnit XML, the format every CI reads: one test suite for the session, a test case
 * `evidence` (a <failure> when the verdict is no-evidence: a run that gave nothing to judge must
 * not pass a CI step), then one test case per rule judged, a <failure> for each error finding.
 * Warnings are not failures (the verdict is only `warn`): their test case passes and carries the
 * finding in <system-out>, where CI test views show it. A rule the run gave nothing to judge is
 * <skipped>, with the go-live checklist's finding when it has one.
 */

/** Code points XML 1.0 cannot hold, even escaped: C0 controls but tab, LF, CR; U+FFFE, U+FFFF; lone surrogates. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g // eslint-disable-line no-control-regex

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&apos;' }

/** Text for element content or a quoted attribute; characters XML cannot hold become U+FFFD. */
export function xmlText (value: string): string {
  return value.replace(NOT_XML, '\uFFFD').replace(/[&<>"']/g, (c) => ENTITIES[c]!)
}

/** An attribute value: as text, with line breaks and tabs kept as references (a parser would fold them into spaces). */
const attr = (value: string | number) => xmlText(String(value)).replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;')

/** JUnit's timestamp: ISO 8601 without zone or fraction (the schema's xs:dateTime form CI tools parse). */
const timestamp = (iso: string) => iso.replace(/\.\d+/, '').replace(/Z$|[+-]\d\d:\d\d$/, '')

/** The finding's text: what was seen, the fix, the example requests. */
function findingBody ({ rule, finding }: RuleOutcome): string {
  if (finding === undefined) return ''
  return [
    finding.message,
    `Fix: ${finding.fix}`,
    ...(finding.examples.length === 0 ? [] : ['Examples:', ...finding.examples.map((e) => `  ${describeExample(e)}`)]),
    `Rule: ${rule.id} (${finding.severity}), ${finding.count} occurrence${finding.count === 1 ? '' : 's'}`
  ].join('\n')
}

function testCase (outcome: RuleOutcome): string {
  const open = `    <testcase classname="agency-sandbox.examiner" name="${attr(outcome.rule.id)}" time="0">`
  const { finding } = outcome
  if (outcome.outcome === 'not-exercised') {
    const body = finding === undefined ? '' : `\n      <system-out>${xmlText(`${finding.severity.toUpperCase()}: ${findingBody(outcome)}`)}</system-out>`
    return `${open}\n      <skipped message="not exercised: the run gave this rule nothing to judge"/>${body}\n    </testcase>`
  }
  if (finding === undefined) return `${open}</testcase>`
  if (outcome.outcome === 'fail') {
    return `${open}\n      <failure message="${attr(finding.message)}" type="${attr(outcome.rule.id)}">${xmlText(findingBody(outcome))}</failure>\n    </testcase>`
  }
  return `${open}\n      <system-out>${xmlText(`${finding.severity.toUpperCase()}: ${findingBody(outcome)}`)}</system-out>\n    </testcase>`
}

/** The evidence test case: a failure when the run gave nothing to judge. */
function evidenceCase (report: Report): string {
  const open = '    <testcase classname="agency-sandbox.examiner" name="evidence" time="0">'
  const why = noEvidence(report)
  if (why === undefined) return `${open}\n      <system-out>${xmlText(describeEvidence(report))}</system-out>\n    </testcase>`
  return `${open}\n      <failure message="${attr(`no evidence: ${why}`)}" type="no-evidence">${xmlText(`No evidence: ${why}. Evidence: ${describeEvidence(report)}. Run the integration's sync (a changed-clients listing and client reads) with the session's Client Id.`)}</failure>\n    </testcase>`
}

export function renderJunit (report: Report): string {
  const outcomes = ruleOutcomes(report)
  const evidenceFails = report.verdict === 'no-evidence' ? 1 : 0
  const failures = outcomes.filter((o) => o.outcome === 'fail').length + evidenceFails
  const skipped = outcomes.filter((o) => o.outcome === 'not-exercised').length
  const tests = outcomes.length + 1
  const counts = severityCounts(report)
  const { session } = report
  const time = secondsBetween(session.startedAt, session.endedAt).toFixed(3)
  const suiteName = `session ${session.id}: ${session.name}`
  const properties = [
    ['verdict', report.verdict],
    ['evidence.requests', String(report.evidence.requests)],
    ['evidence.listings', String(report.evidence.listings)],
    ['evidence.clientReads', String(report.evidence.clientReads)],
    ['session.id', String(session.id)],
    ['session.name', session.name],
    ['session.clientId', session.clientId ?? '(every integration)'],
    ['session.recorded', String(session.recorded)],
    ['session.capped', String(session.capped)],
    ['findings.error', String(counts.error)],
    ['findings.warning', String(counts.warning)],
    ['findings.info', String(counts.info)],
    ['world.id', report.world.id],
    ['world.name', report.world.name],
    ['world.tenant', report.world.tenant === null ? '(none)' : `${report.world.tenant.id} ${report.world.tenant.name}`],
    ['world.startDigest', report.world.startDigest],
    ['judgedBy.version', report.judgedBy.version],
    ['judgedBy.build', report.judgedBy.build],
    ['judgedBy.rulesVersion', String(report.judgedBy.rulesVersion)],
    ...(report.signer === undefined ? [] : [['signer.name', report.signer.name], ['signer.keyId', report.signer.keyId]])
  ]
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agency-sandbox examiner" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}">`,
    `  <testsuite name="${attr(suiteName)}" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}" timestamp="${attr(timestamp(session.startedAt))}">`,
    '    <properties>',
    ...properties.map(([name, value]) => `      <property name="${attr(name!)}" value="${attr(value!)}"/>`),
    '    </properties>',
    evidenceCase(report),
    ...outcomes.map(testCase),
    `    <system-out>${xmlText([describeSession(report), `Verdict: ${report.verdict}`, ...describeProvenance(report)].join('\n'))}</system-out>`,
    '  </testsuite>',
    '</testsuites>',
    ''
  ].join('\n')
}
