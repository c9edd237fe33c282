import { Value } from '@sinclair/typebox/value'
import { writeFileSync } from 'node:fs'
import { renderHtml } from './domain/examiner/render-html.js'
import { renderJunit } from './domain/examiner/render-junit.js'
import { renderText } from './domain/examiner/render-text.js'
import { noEvidence } from './domain/examiner/render-common.js'
import { ApiError } from './errors.js'
import { parseJsonDocument } from './http/json-body.js'
import { getBounded, MAX_ANSWER_BYTES, MAX_ANSWER_VALUES, UnexpectedAnswer, type Answer } from './import/http.js'
import { jsonEscape, markupEscape, printable, type Escape } from './printable.js'
import { ReportSchema, type Report, type Severity } from './schemas/examiner.js'

/**
 * The `report` command: fetches an ended examiner session's report from a running sandbox (of
 * the default world, or of the world --world names), prints it in the chosen form, and answers an
 * exit code that fails a CI step when a finding reaches the chosen severity, or when the run gave
 * nothing to judge (no-evidence). The JSON report is fetched once and rendered here, so what is
 * printed and the exit code always come from the same report. The URL may lead anywhere: the
 * answer is read as the import reads an upstream's (at most MAX_ANSWER_BYTES, JSON nesting and
 * values checked before parsing), and whatever it holds is printed through printable. `--out
 * FILE` writes the report to a file instead, the JSON form as the bytes served, which a signature
 * covers (printed, a character a terminal acts on is escaped, which the signature does not cover).
 */

type Values = Record<string, string | boolean | undefined>
type Usage = (message: string) => never

export interface ReportIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

export const REPORT_FORMATS = ['text', 'json', 'junit', 'html'] as const
export type ReportOutputFormat = (typeof REPORT_FORMATS)[number]
/** Severities --fail-on accepts, and the severities each one fails on. */
const FAILING: Record<string, readonly Severity[]> = { error: ['error'], warning: ['error', 'warning'] }
/** Seconds to wait for the report (a report over a capped session takes about a second). */
const TIMEOUT_MS = 60_000

const str = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined)

function options (values: Values, usage: Usage) {
  const url = str(values.url)
  if (url === undefined || url === '') usage('--url is required (the sandbox, e.g. http://127.0.0.1:8080)')
  let base: URL
  try {
    base = new URL(url as string)
  } catch {
    return usage(`--url must be an http(s) URL such as http://127.0.0.1:8080, got '${url}'`)
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') usage(`--url must be an http(s) URL, got '${url}'`)
  const session = str(values.session)
  if (session === undefined) usage('--session is required (the id POST /_sandbox/sessions answered)')
  if (!/^\d{1,10}$/.test(session!) || Number(session) < 1 || Number(session) > 2147483647) usage(`--session must be a session id (a whole number from 1), got '${session}'`)
  const format = str(values.format) ?? 'text'
  if (!(REPORT_FORMATS as readonly string[]).includes(format)) usage(`--format must be one of ${REPORT_FORMATS.join(', ')}, got '${format}'`)
  const failOn = str(values['fail-on']) ?? 'error'
  if (!(failOn in FAILING)) usage(`--fail-on must be error or warning, got '${failOn}'`)
  const token = str(values.token)
  const out = str(values.out)
  if (out === '') usage('--out must name a file')
  const world = str(values.world)
  if (world !== undefined && !/^(default|w[0-9a-z]{10})$/.test(world)) usage(`--world must be a world id (w and ten letters or digits, as POST /_sandbox/worlds answers) or default, got '${world}'`)
  return { base: (url as string).replace(/\/+$/, ''), session: Number(session), format: format as ReportOutputFormat, failOn, token, world, out }
}

/** The problem's detail of an error answer, or its text. */
function explain (status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { detail?: unknown, title?: unknown }
    if (typeof body.detail === 'string') return `${status} ${body.detail}`
    if (typeof body.title === 'string') return `${status} ${body.title}`
  } catch { /* not JSON */ }
  return `${status} ${text.slice(0, 300)}`
}

class ReportUnavailable extends Error {}

/** The report, and the bytes it was served as. */
interface Fetched {
  report: Report
  body: Buffer
}

async function fetchReport (base: string, session: number, token: string | undefined, world: string | undefined): Promise<Fetched> {
  const scope = world === undefined || world === 'default' ? '' : `/worlds/${world}`
  // final: the report the session ended with, or a 409 naming an open session
  const url = `${base}/_sandbox${scope}/sessions/${session}/report?final=true`
  let res: Answer
  try {
    res = await getBounded(url, { accept: 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) }, TIMEOUT_MS)
  } catch (e) {
    if (e instanceof UnexpectedAnswer) throw new ReportUnavailable(e.message)
    const reason = (e as Error).name === 'TimeoutError' ? `no answer in ${TIMEOUT_MS / 1000} s` : (e as NodeJS.ErrnoException).code ?? (e as Error).message
    throw new ReportUnavailable(`cannot reach ${base}: ${reason}`)
  }
  const text = res.text
  if (res.status === 401) {
    throw new ReportUnavailable(token === undefined
      ? `${base} protects its control API: pass --token (its SANDBOX_CONTROL_TOKEN, a tenant's token or the world's)`
      : `${base} refused the control token given with --token${scope === '' ? ' (a world\'s token opens its own world\'s sessions alone: pass --world ID)' : ''}`)
  }
  if (res.status === 403 && scope === '' && token !== undefined) {
    throw new ReportUnavailable(`GET ${url} answered ${explain(res.status, text)} (a tenant's or a world's token reaches its world's sessions: pass --world ID)`)
  }
  if (res.status < 200 || res.status > 299) throw new ReportUnavailable(`GET ${url} answered ${explain(res.status, text)}`)
  let report: unknown
  try {
    report = parseJsonDocument(res.body, MAX_ANSWER_VALUES).value
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    throw new ReportUnavailable(`GET ${url} did not answer a JSON report of at most ${MAX_ANSWER_BYTES / (1024 * 1024)} MiB and 64 levels: ${e.detail}`)
  }
  if (!Value.Check(ReportSchema, report)) {
    const first = Value.Errors(ReportSchema, report).First()
    throw new ReportUnavailable(`GET ${url} did not answer a report (${first === undefined ? 'unexpected shape' : `${first.path || '/'}: ${first.message}`}); is ${base} an agency-sandbox?`)
  }
  return { report, body: res.body }
}

/** How each format writes a character a terminal would act on: the same character, in its own syntax, where it can hold it. */
const ESCAPES: Record<ReportOutputFormat, Escape | undefined> = { text: undefined, json: jsonEscape, junit: markupEscape, html: markupEscape }

/** The report in the form asked for: the JSON as it was served (`served`), the others rendered here. */
export function render (report: Report, format: ReportOutputFormat, served: Buffer): string {
  switch (format) {
    case 'json': return served.toString('utf8')
    case 'junit': return renderJunit(report)
    case 'html': return renderHtml(report)
    case 'text': return renderText(report)
  }
}

export async function reportCommand (values: Values, io: ReportIo, usage: Usage): Promise<number> {
  const { base, session, format, failOn, token, world, out } = options(values, usage)
  let fetched: Fetched
  try {
    fetched = await fetchReport(base, session, token, world)
  } catch (e) {
    if (!(e instanceof ReportUnavailable)) throw e
    io.stderr.write(`agency-sandbox report: ${printable(e.message)}\n`)
    return 1
  }
  const { report } = fetched
  const printed = () => printable(render(report, format, fetched.body), { escape: ESCAPES[format], keepLayout: true })
  if (out === undefined) {
    io.stdout.write(printed())
  } else {
    try {
      // the JSON saved is the report as served, byte for byte: a signed one verifies
      writeFileSync(out, format === 'json' ? fetched.body : printed())
    } catch (e) {
      io.stderr.write(`agency-sandbox report: cannot write ${printable(out)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`)
      return 1
    }
  }
  const failing = report.findings.filter((f) => FAILING[failOn]!.includes(f.severity))
  const verdict = `session ${session}: verdict ${report.verdict}`
  const why = noEvidence(report)
  if (why !== undefined) {
    io.stderr.write(`${verdict}: ${printable(why)}; a run the examiner did not see proves nothing\n`)
    return 1
  }
  if (failing.length === 0) {
    if (format !== 'text') io.stderr.write(`${verdict}; no finding at --fail-on ${failOn}\n`)
    return 0
  }
  io.stderr.write(`${verdict}; ${failing.length} finding${failing.length === 1 ? '' : 's'} at --fail-on ${failOn}: ${failing.map((f) => printable(f.rule)).join(', ')}\n`)
  return 1
}
