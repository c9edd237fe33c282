import t from 'tap'
import { Value } from '@sinclair/typebox/value'
import { renderHtml } from '../../../src/domain/examiner/render-html.js'
import { renderJunit } from '../../../src/domain/examiner/render-junit.js'
import { renderText } from '../../../src/domain/examiner/render-text.js'
import { RULES, ReportSchema, type Finding, type Report, type RuleResult } from '../../../src/schemas/examiner.js'
import { descendants, parseXml } from '../../helpers/xml.js'

/** Markup, entities, a CDATA end, quotes, an ANSI colour, NUL, a lone surrogate and a right-to-left override. */
const HOSTILE = '<script>alert(1)</script> & "q" \'a\' ]]> \u001b[31mred\u0000 \ud800 \u202Eevil'

const finding = (rule: string, severity: Finding['severity'], count: number, extra: Partial<Finding> = {}): Finding => ({
  rule, severity, count, message: `${rule} seen ${count} times`, fix: `fix ${rule}`, examples: [], ...extra
})

const OUTCOMES = { error: 'fail', warning: 'warn', info: 'not-exercised' } as const

function sampleReport (findings: Finding[], notExercised: string[] = []): Report {
  const verdict = findings.some((f) => f.severity === 'error') ? 'fail' : findings.some((f) => f.severity === 'warning') ? 'warn' : 'pass'
  const rules = RULES.map((r): RuleResult => {
    const f = findings.find((x) => x.rule === r.id)
    return { id: r.id, severity: r.severity, outcome: f !== undefined ? OUTCOMES[f.severity] : notExercised.includes(r.id) ? 'not-exercised' : 'pass', count: f?.count ?? 0 }
  })
  return {
    evidence: { requests: 1234, listings: 3, clientReads: 26 },
    judgedBy: { version: '0.1.0', build: `git:${'ab'.repeat(20)}`, rulesVersion: 2, rules },
    world: { id: 'w0123456789', name: HOSTILE, tenant: { id: 't0123456789', name: 'Northwind' }, startDigest: 'cd'.repeat(32) },
    session: { id: 7, name: HOSTILE, clientId: 'abc', startedAt: '2026-11-23T10:00:00.000Z', endedAt: '2026-11-23T10:02:30.500Z', recorded: 1234, capped: false },
    verdict,
    findings,
    sync: [
      { agencyId: 1001, source: 'declared', upTo: 1200, missing: { count: 2, clientNumbers: [1003, 1004] }, stale: { count: 0, clientNumbers: [] }, deletedKept: { count: 1, clientNumbers: [1010] }, unknown: { count: 0, clientNumbers: [] } },
      { agencyId: 1001, source: 'inferred', asOf: '2026-11-23T10:02:00.000Z', missing: { count: 0, clientNumbers: [] }, stale: { count: 150, clientNumbers: Array.from({ length: 100 }, (_, i) => 1000 + i) }, deletedKept: { count: 0, clientNumbers: [] }, unknown: { count: 0, clientNumbers: [] } }
    ],
    coverage: {
      operations: [
        { version: '4.0', operation: 'changedClients', outcomes: { 200: 3, 503: 1 } },
        { version: '4.0', operation: 'getClient', outcomes: { 404: 1, 200: 25, 0: 1 } },
        { version: '4.0', operation: 'users', outcomes: {} }
      ],
      notExercised: [{ version: '4.0', operation: 'users' }],
      checklist: [
        { item: '202-handled', title: 'A 202 (saved for later) handled', exercised: true, journalId: 40 },
        { item: '429-handled', title: 'A 429 handled', exercised: false },
        { item: '403-handled', title: 'A 403 handled', exercised: false }
      ]
    }
  }
}

const failing = () => sampleReport([
  finding('retry-after-ignored', 'error', 3, {
    message: `repeated early: ${HOSTILE}`,
    examples: [
      { journalId: 12, method: 'GET', path: `/vendor/agency/1001/clients?x=${HOSTILE}`, status: 429, detail: 'sent 0.2 s after a 429 asking for 1 s' },
      { journalId: 13, method: 'POST', path: '/vendor/agency/1001/client/1000/log', status: 0 }
    ]
  }),
  finding('deleted-never-synced', 'error', 1),
  finding('n-plus-one-reads', 'warning', 40),
  finding('a-rule-from-a-newer-sandbox', 'warning', 2),
  finding('checklist-incomplete', 'info', 2)
])

t.test('the sample reports match the report schema', async (t) => {
  t.ok(Value.Check(ReportSchema, failing()), [...Value.Errors(ReportSchema, failing())].map((e) => `${e.path}: ${e.message}`).join('; '))
  t.ok(Value.Check(ReportSchema, sampleReport([])))
})

t.test('JUnit: well-formed, one test case per catalogued rule, a failure per error finding, warnings in system-out', async (t) => {
  const report = failing()
  const xml = renderJunit(report)
  const root = parseXml(xml)
  t.equal(root.name, 'testsuites')
  const [suite] = descendants(root, 'testsuite')
  const cases = descendants(root, 'testcase')
  const names = cases.map((c) => c.attrs.name)
  t.equal(names[0], 'evidence', 'the evidence first')
  t.same(names.slice(1, RULES.length + 1), RULES.map((r) => r.id), 'every catalogued rule, in catalogue order')
  t.same(names.slice(RULES.length + 1), ['a-rule-from-a-newer-sandbox'], 'then a reported rule the catalogue lacks')
  t.equal(suite!.attrs.tests, String(RULES.length + 2))
  t.equal(root.attrs.tests, String(RULES.length + 2))

  const failed = cases.filter((c) => c.children.some((x) => x.name === 'failure')).map((c) => c.attrs.name)
  t.same(failed, ['retry-after-ignored', 'deleted-never-synced'], 'a <failure> for each error finding, none for the others')
  t.equal(suite!.attrs.failures, '2')
  t.equal(root.attrs.failures, '2')
  t.equal(suite!.attrs.errors, '0')
  t.equal(suite!.attrs.skipped, '1', 'the checklist\'s items not exercised')
  t.equal(suite!.attrs.time, '150.500', 'the session lasted 150.5 s')
  t.equal(suite!.attrs.timestamp, '2026-11-23T10:00:00', 'timestamp without zone or fraction')

  const outOf = (rule: string) => cases.find((c) => c.attrs.name === rule)!.children.map((x) => `${x.name}:${x.text}`).join('\n')
  t.match(outOf('n-plus-one-reads'), /^system-out:WARNING: n-plus-one-reads seen 40 times\nFix: fix n-plus-one-reads/, 'a warning is in system-out')
  t.match(outOf('checklist-incomplete'), /^skipped:\nsystem-out:INFO: /, 'the checklist not exercised: skipped, with its finding')
  t.equal(outOf('auth-failed'), '', 'a passed rule is an empty test case')
  t.match(outOf('evidence'), /^system-out:1,234 requests, 3 changed-clients listings, 26 client reads$/, 'the evidence passes')

  const failure = cases[1]!.children[0]!
  t.equal(failure.attrs.type, 'retry-after-ignored')
  const safe = HOSTILE.replace(/[\u0000\u001b\ud800]/g, '\uFFFD') // eslint-disable-line no-control-regex
  t.equal(failure.attrs.message, `repeated early: ${safe}`, 'the message reads back exactly, characters XML cannot hold replaced')
  t.match(failure.text, `#12 GET /vendor/agency/1001/clients?x=${safe} → 429: sent 0.2 s after a 429 asking for 1 s`)
  t.match(failure.text, '#13 POST /vendor/agency/1001/client/1000/log → dropped')
  t.match(failure.text, 'Fix: fix retry-after-ignored')
  t.match(failure.text, 'Rule: retry-after-ignored (error), 3 occurrences')
  const props = Object.fromEntries(descendants(root, 'property').map((p) => [p.attrs.name, p.attrs.value]))
  t.equal(props['session.name'], safe, 'the session name reads back')
  t.equal(props.verdict, 'fail')
  t.same([props['findings.error'], props['findings.warning'], props['findings.info']], ['2', '2', '1'])
  t.equal(props['judgedBy.build'], `git:${'ab'.repeat(20)}`)
  t.equal(props['world.startDigest'], 'cd'.repeat(32))
  t.equal(props['world.tenant'], 't0123456789 Northwind')
  t.equal(props['signer.name'], undefined, 'unsigned: no signer')
  t.notMatch(xml, '<script', 'no markup from data')

  const multiline = sampleReport([finding('auth-failed', 'error', 1, { message: 'line one\nline two\ttab' })])
  const m = descendants(parseXml(renderJunit(multiline)), 'failure')[0]!
  t.equal(m.attrs.message, 'line one\nline two\ttab', 'line breaks and tabs survive in attributes')
})

t.test('JUnit of a clean session: every rule passes', async (t) => {
  const root = parseXml(renderJunit(sampleReport([])))
  t.equal(descendants(root, 'testcase').length, RULES.length + 1)
  t.equal(descendants(root, 'failure').length, 0)
  t.equal(root.attrs.failures, '0')
  t.equal(root.attrs.skipped, '0')
  const open = sampleReport([])
  delete open.session.endedAt
  t.equal(parseXml(renderJunit(open)).attrs.time, '0.000', 'an open session has no duration yet')
})

t.test('HTML: verdict first, every rule, findings with fix and examples, escaped, no script', async (t) => {
  const html = renderHtml(failing())
  t.match(html, /^<!doctype html>/)
  t.match(html, '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">')
  t.notMatch(html, /<script|<iframe|<img|<link|src=|href=/i, 'nothing runs or loads')
  t.notMatch(html, /\son\w+=/i, 'no event handler attributes')
  t.notMatch(html, HOSTILE.slice(0, 20), 'the hostile text never appears raw')
  t.match(html, '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot; &#39;a&#39; ]]&gt;', 'it appears escaped')
  // eslint-disable-next-line no-control-regex
  t.notMatch(html, /[\u0000\ud800]/, 'NUL and the lone surrogate are replaced')

  const verdictAt = html.indexOf('data-verdict="fail"')
  t.ok(verdictAt > 0 && verdictAt < html.indexOf('id="finding-'), 'the verdict comes before the findings')
  t.match(html, '2 errors, 2 warnings, 1 info')
  for (const rule of RULES) t.match(html, `<tr data-rule="${rule.id}"`, `rule ${rule.id} is listed`)
  t.match(html, '<tr data-rule="a-rule-from-a-newer-sandbox" data-result="warn">')
  t.match(html, '<tr data-rule="retry-after-ignored" data-result="fail">')
  t.match(html, '<tr data-rule="auth-failed" data-result="pass">')
  t.match(html, '<tr data-rule="checklist-incomplete" data-result="not-exercised">')
  t.match(html, '<p id="evidence">Evidence: 1,234 requests, 3 changed-clients listings, 26 client reads</p>')
  t.match(html, '<li>World w0123456789 &quot;&lt;script&gt;', 'the world, escaped')
  t.match(html, `started from sha256 ${'cd'.repeat(32)}</li><li>Judged by agency-sandbox 0.1.0, build git:${'ab'.repeat(20)}, rules version 2</li></ul>`)
  t.equal(html.match(/<section class="finding /g)?.length, 5, 'one section per finding')
  t.match(html, '<strong>Fix:</strong> fix retry-after-ignored')
  t.match(html, '#13 POST /vendor/agency/1001/client/1000/log → dropped')
  t.match(html, 'sent 0.2 s after a 429 asking for 1 s')
  t.match(html, /<table id="sync">.*<td class="num">1001<\/td><td>declared <span class="muted">≤ 1200<\/span><\/td><td>2 <span class="muted mono">\(1003 1004\)<\/span>/s)
  t.match(html, '150 <span class="muted mono">(1000 1001', 'a long set shows its count and the listed numbers')
  t.match(html, ' 1099 …)</span>', 'and says there are more')
  t.match(html, /<td><code>getClient<\/code><\/td><td class="mono">dropped×1, 200×25, 404×1<\/td>/, 'outcomes by status, dropped first')
  t.match(html, /<code>users<\/code><\/td><td class="mono"><span class="muted">not exercised/)
  t.match(html, '<li data-item="202-handled">☑ A 202 (saved for later) handled <span class="muted mono">#40</span></li>')
  t.match(html, '<li data-item="429-handled">☐ A 429 handled</li>')
})

t.test('HTML of a clean session says so', async (t) => {
  const html = renderHtml(sampleReport([]))
  t.match(html, 'data-verdict="pass"')
  t.match(html, 'No findings: every rule passed.')
  t.equal(html.match(/data-result="pass"/g)?.length, RULES.length)
  t.notMatch(html, 'id="no-evidence"')
})

t.test('text: verdict first, findings, sync, coverage, every rule; nothing from the session reaches the terminal raw', async (t) => {
  const text = renderText(failing())
  const lines = text.split('\n')
  t.match(lines[0], /^Session 7 "<script>alert\(1\)<\/script> & "q" 'a' \]\]> \\x1B\[31mred\\x00 \ud800 \\u\{202E\}evil" · abc · 2026-11-23T10:00:00.000Z → 2026-11-23T10:02:30.500Z · 1,234 requests recorded$/)
  t.equal(lines[1], 'Verdict: FAIL (2 errors, 2 warnings, 1 info)')
  t.equal(lines[2], 'Evidence: 1,234 requests, 3 changed-clients listings, 26 client reads')
  t.match(lines[3], /^World w0123456789 "<script>.* of tenant t0123456789 "Northwind", started from sha256 (cd){32}$/)
  t.equal(lines[4], `Judged by agency-sandbox 0.1.0, build git:${'ab'.repeat(20)}, rules version 2`)
  // eslint-disable-next-line no-control-regex
  t.notMatch(text, /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/, 'no control or override character is printed')
  t.match(text, 'ERROR   retry-after-ignored ×3\n        repeated early: ')
  t.match(text, '        Fix: fix retry-after-ignored\n        e.g. #12 GET /vendor/agency/1001/clients?x=')
  t.match(text, '        e.g. #13 POST /vendor/agency/1001/client/1000/log → dropped')
  t.match(text, 'WARNING n-plus-one-reads ×40')
  t.match(text, /agency +source +missing +stale +deleted kept +unknown\n +1001 +declared ≤1200 +2 \(1003 1004\) +0 +1 \(1010\) +0/)
  t.match(text, /inferred as of 2026-11-23T10:02:00.000Z +0 +150 \(1000 1001 .* 1099 …\)/)
  t.match(text, /4\.0 +getClient +dropped×1, 200×25, 404×1/)
  t.match(text, 'Not exercised: users (4.0)')
  t.match(text, '  [x] A 202 (saved for later) handled (#40)\n  [ ] A 429 handled')
  const ruleLines = lines.slice(lines.indexOf('Rules') + 1).filter((l) => l !== '')
  t.same(ruleLines.map((l) => l.trim().split(/\s+/)[1]), [...RULES.map((r) => r.id), 'a-rule-from-a-newer-sandbox'], 'every rule, in catalogue order')
  t.match(text, '  FAIL  retry-after-ignored ×3')
  t.match(text, '  warn  n-plus-one-reads ×40')
  t.match(text, '  --    checklist-incomplete ×2')
  t.match(text, '  ok    auth-failed\n')
})

t.test('text of a clean session', async (t) => {
  const text = renderText(sampleReport([]))
  t.match(text, 'Verdict: PASS (0 errors, 0 warnings, 0 info)\nEvidence: ')
  t.match(text, 'rules version 2\n\nNo findings.')
  t.equal(text.match(/^ {2}ok {4}/gm)?.length, RULES.length)
})

t.test('a run with no evidence: said first in every form, a failure in JUnit; rules not exercised are shown so', async (t) => {
  const report = sampleReport([], RULES.filter((r) => r.id !== 'auth-failed' && r.id !== 'checklist-incomplete').map((r) => r.id))
  report.verdict = 'no-evidence'
  report.evidence = { requests: 0, listings: 0, clientReads: 0 }
  report.signer = { keyId: 'ef'.repeat(32), name: 'Northwind partner programme' }
  t.ok(Value.Check(ReportSchema, report))
  const text = renderText(report)
  t.match(text, 'Verdict: NO-EVIDENCE (0 errors, 0 warnings, 0 info)\nNo evidence: the session recorded no request of Client Id abc; nothing here says the integration is ready.')
  t.match(text, `Signed by "Northwind partner programme" with key ${'ef'.repeat(32)}`)
  t.match(text, '  --    sync-missed (not exercised)')
  const root = parseXml(renderJunit(report))
  const evidence = descendants(root, 'testcase').find((c) => c.attrs.name === 'evidence')!
  t.equal(evidence.children[0]!.name, 'failure')
  t.equal(evidence.children[0]!.attrs.type, 'no-evidence')
  t.equal(root.attrs.failures, '1', 'a CI step reading JUnit fails')
  t.equal(root.attrs.skipped, String(RULES.length - 2))
  const props = Object.fromEntries(descendants(root, 'property').map((p) => [p.attrs.name, p.attrs.value]))
  t.equal(props['signer.name'], 'Northwind partner programme')
  const html = renderHtml(report)
  t.match(html, 'data-verdict="no-evidence"')
  t.match(html, '<p class="finding error" id="no-evidence"><strong>No evidence:</strong> the session recorded no request of Client Id abc')
  t.match(html, '<tr data-rule="sync-missed" data-result="not-exercised">')
})
