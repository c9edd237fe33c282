import type { ClientSet, Report } from '../../schemas/examiner.js'
import {
  describeEvidence, describeExample, describeOutcomes, describeProvenance, describeSession, noEvidence, plural, ruleOutcomes, severityCounts, statusText
} from './render-common.js'

/**
 * The report as one self-contained HTML page a person reads: the verdict first, then each
 * finding with its fix and example requests, the sync checks, coverage and the go-live
 * checklist, and every rule with its result. No script, no external resource; a
 * Content-Security-Policy that forbids both, so the page is safe to open from a CI artifact or
 * to show in a sandboxed frame. Every value is escaped.
 */

/** Code points no document should carry: C0 controls but tab, LF, CR; DEL; lone surrogates. */
const UNFIT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g // eslint-disable-line no-control-regex

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }

/** Text for element content or a quoted attribute. */
export function htmlText (value: string | number): string {
  return String(value).replace(UNFIT, '\uFFFD').replace(/[&<>"']/g, (c) => ENTITIES[c]!)
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:24px;color:#1d2430;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
.verdict{display:inline-block;font-weight:700;font-size:18px;padding:4px 14px;border-radius:6px;color:#fff;text-transform:uppercase;letter-spacing:.04em}
.v-pass{background:#1f7a3f}.v-warn{background:#a86400}.v-fail,.v-no-evidence{background:#b3261e}
.muted{color:#5b6577}.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.badge{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;font-weight:600;border:1px solid currentColor}
.s-error,.r-fail{color:#b3261e}.s-warning,.r-warn{color:#a86400}.s-info,.r-not-exercised{color:#2d5da8}.r-pass{color:#1f7a3f}
.finding{border:1px solid #dde2ea;border-left-width:4px;border-radius:6px;padding:10px 14px;margin:10px 0}
.finding.error{border-left-color:#b3261e}.finding.warning{border-left-color:#a86400}.finding.info{border-left-color:#2d5da8}
.finding h3{margin:0 0 4px;font-size:15px}.fix{background:#f3f6fa;border-radius:4px;padding:6px 10px}
table{border-collapse:collapse;width:100%;margin:6px 0}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e8ecf2;vertical-align:top}
th{font-weight:600;background:#f6f8fb}td.num{text-align:right;font-variant-numeric:tabular-nums}ul{margin:4px 0;padding-left:20px}
`

const verdictBadge = (verdict: string) => `<span class="verdict v-${htmlText(verdict)}" data-verdict="${htmlText(verdict)}">${htmlText(verdict)}</span>`

function clientSet (set: ClientSet): string {
  if (set.count === 0) return '0'
  const more = set.count > set.clientNumbers.length ? ' …' : ''
  return `${set.count} <span class="muted mono">(${htmlText(set.clientNumbers.join(' ') + more)})</span>`
}

function findingsSection (report: Report): string {
  if (report.findings.length === 0) return '<h2>Findings</h2><p>No findings: every rule passed.</p>'
  return '<h2>Findings</h2>' + report.findings.map((f) => `
<section class="finding ${htmlText(f.severity)}" id="finding-${htmlText(f.rule)}" data-rule="${htmlText(f.rule)}">
<h3><span class="badge s-${htmlText(f.severity)}">${htmlText(f.severity)}</span> <code>${htmlText(f.rule)}</code> <span class="muted">× ${htmlText(f.count)}</span></h3>
<p>${htmlText(f.message)}</p>
<p class="fix"><strong>Fix:</strong> ${htmlText(f.fix)}</p>
${f.examples.length === 0
  ? ''
  : `<ul class="examples">${f.examples.map((e) => `<li class="mono" title="${htmlText(describeExample(e))}">#${htmlText(e.journalId)} ${htmlText(e.method)} ${htmlText(e.path)} → ${htmlText(statusText(e.status))}${e.detail === undefined ? '' : ` <span class="muted">${htmlText(e.detail)}</span>`}</li>`).join('')}</ul>`}
</section>`).join('')
}

function syncSection (report: Report): string {
  if (report.sync.length === 0) return '<h2>Sync check</h2><p class="muted">No agency was synced and no mirror was posted.</p>'
  const rows = report.sync.map((s) => `<tr><td class="num">${htmlText(s.agencyId)}</td><td>${htmlText(s.source)}${s.upTo === undefined ? '' : ` <span class="muted">≤ ${htmlText(s.upTo)}</span>`}${s.asOf === undefined ? '' : ` <span class="muted">as of ${htmlText(s.asOf)}</span>`}</td><td>${clientSet(s.missing)}</td><td>${clientSet(s.stale)}</td><td>${clientSet(s.deletedKept)}</td><td>${clientSet(s.unknown)}</td></tr>`)
  return `<h2>Sync check</h2>
<p class="muted">Declared: the mirror the integration posted. Inferred: what its requests show it read, compared with the agency as of its last changed-clients call.</p>
<table id="sync"><thead><tr><th>Agency</th><th>Source</th><th>Missing</th><th>Stale</th><th>Deleted, kept</th><th>Unknown</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function coverageSection (report: Report): string {
  const { operations, notExercised, checklist } = report.coverage
  const rows = operations.map((o) => {
    const outcomes = Object.keys(o.outcomes).length === 0 ? '<span class="muted">not exercised</span>' : htmlText(describeOutcomes(o.outcomes))
    return `<tr><td>${htmlText(o.version)}</td><td><code>${htmlText(o.operation)}</code></td><td class="mono">${outcomes}</td></tr>`
  })
  return `<h2>Coverage</h2>
${operations.length === 0
  ? '<p class="muted">No operation was used.</p>'
  : `<table id="coverage"><thead><tr><th>Version</th><th>Operation</th><th>Outcomes (status × requests)</th></tr></thead><tbody>${rows.join('')}</tbody></table>`}
${notExercised.length === 0 ? '' : `<p><strong>Not exercised:</strong> ${notExercised.map((o) => `<code>${htmlText(o.operation)}</code> (${htmlText(o.version)})`).join(', ')}</p>`}
<h3>Go-live checklist</h3>
<ul id="checklist">${checklist.map((c) => `<li data-item="${htmlText(c.item)}">${c.exercised ? '☑' : '☐'} ${htmlText(c.title)}${c.journalId === undefined ? '' : ` <span class="muted mono">#${htmlText(c.journalId)}</span>`}</li>`).join('')}</ul>`
}

function rulesSection (report: Report): string {
  const rows = ruleOutcomes(report).map((o) => `<tr data-rule="${htmlText(o.rule.id)}" data-result="${o.outcome}"><td><code>${htmlText(o.rule.id)}</code></td><td><span class="badge s-${htmlText(o.rule.severity)}">${htmlText(o.rule.severity)}</span></td><td class="r-${o.outcome}">${o.outcome}</td><td class="num">${o.finding === undefined ? '' : htmlText(o.finding.count)}</td><td>${htmlText(o.rule.title)}</td></tr>`)
  return `<h2>Rules</h2>
<table id="rules"><thead><tr><th>Rule</th><th>Severity</th><th>Result</th><th>Count</th><th>What it checks</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

export function renderHtml (report: Report): string {
  const counts = severityCounts(report)
  const why = noEvidence(report)
  const title = `Examiner report: session ${report.session.id} (${report.session.name}): ${report.verdict}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${htmlText(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${verdictBadge(report.verdict)} Is this integration ready?</h1>
<p><strong>${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}, ${counts.info} info.</strong> <span class="muted">${htmlText(describeSession(report))}</span></p>
${why === undefined ? '' : `<p class="finding error" id="no-evidence"><strong>No evidence:</strong> ${htmlText(why)}; nothing here says the integration is ready.</p>`}
<p id="evidence">Evidence: ${htmlText(describeEvidence(report))}</p>
<ul id="provenance" class="muted">${describeProvenance(report).map((line) => `<li>${htmlText(line)}</li>`).join('')}</ul>
</header>
${findingsSection(report)}
${syncSection(report)}
${coverageSection(report)}
${rulesSection(report)}
<p class="muted">Verdict: fail with any error; no-evidence without a request of the session's Client Id or without a sync; warn with any warning; else pass. Generated by agency-sandbox.</p>
</body>
</html>
`
}
