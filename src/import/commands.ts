import { existsSync } from 'node:fs'
import { jsonEscape, printable } from '../printable.js'
import { checkpointPath } from './checkpoint.js'
import { GiveUpError, UnexpectedAnswer } from './http.js'
import { ImportError, isResumable, runImport } from './importer.js'
import { Reporter, type Output } from './progress.js'

/**
 * The `import` and `compare` commands behind the command line: their options checked, the
 * work run, the result printed. `usage` throws the command line's usage error (exit 2). A
 * failure is one line on standard error (what stopped, the request and its cause; no stack
 * trace), exit 1; everything printed that an instance answered goes through printable.
 */

type Values = Record<string, string | boolean | undefined>
type Usage = (message: string) => never

export interface CommandIo {
  stdout: Output
  stderr: Output
}

const str = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined)

function required (values: Values, name: string, usage: Usage): string {
  const v = str(values[name])
  if (v === undefined || v === '') usage(`--${name} is required`)
  return v as string
}

function int (values: Values, name: string, fallback: number, min: number, max: number, usage: Usage): number {
  const v = str(values[name])
  if (v === undefined) return fallback
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) usage(`--${name} must be a whole number from ${min} to ${max}, got '${v}'`)
  return Number(v)
}

export function url (values: Values, name: string, usage: Usage): string {
  const v = required(values, name, usage)
  let parsed: URL
  try {
    parsed = new URL(v)
  } catch {
    return usage(`--${name} must be an http(s) URL such as http://127.0.0.1:8080, got '${v}'`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') usage(`--${name} must be an http(s) URL, got '${v}'`)
  if (parsed.username !== '' || parsed.password !== '') usage(`--${name}: pass credentials with --client-id and --client-secret, not in the URL`)
  return v
}

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`

export async function importCommand (values: Values, io: CommandIo, usage: Usage): Promise<number> {
  const from = url(values, 'from', usage)
  const clientId = required(values, 'client-id', usage)
  const clientSecret = required(values, 'client-secret', usage)
  const out = required(values, 'out', usage)
  const version = str(values.version) ?? '4.0'
  if (version !== '4.0' && version !== '3.0') usage(`--version must be 4.0 or 3.0, got '${version}'`)
  const agenciesText = str(values.agencies)
  let agencies: number[] | undefined
  if (agenciesText !== undefined) {
    const parts = agenciesText.split(',').map((p) => p.trim())
    if (parts.some((p) => !/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 2147483647)) usage(`--agencies takes agency ids separated by commas (1001,1002), got '${agenciesText}'`)
    agencies = [...new Set(parts.map(Number))].sort((a, b) => a - b)
  }
  const anonymize = values.anonymize === true
  const seed = str(values.seed)
  if (seed !== undefined && !anonymize) usage('--seed goes with --anonymize')
  if (seed === '') usage('--seed must not be empty')
  const concurrency = int(values, 'concurrency', 4, 1, 32, usage)
  const timeoutMs = int(values, 'timeout', 60, 1, 3600, usage) * 1000
  const retries = int(values, 'retries', 6, 0, 100, usage)
  const reporter = new Reporter(io.stderr, 'import')
  const started = Date.now()
  try {
    const result = await runImport({
      from,
      clientId,
      clientSecret,
      out,
      version,
      agencies,
      anonymize,
      seed,
      concurrency,
      resume: values.resume === true,
      keepSecret: values['keep-secret'] === true,
      timeoutMs,
      retries,
      reporter
    })
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    const lines = [
      `wrote ${out}: ${count(result.agencies, 'agency', 'agencies')}, ${count(result.clients, 'client')} and ${count(result.deleted, 'deleted client')}` +
        ` in ${seconds} s (${count(result.requests, 'request')}, ${count(result.retried, 'retry', 'retries')}${result.resumedAt !== undefined ? `, resumed after ${result.resumedAt} clients` : ''})`
    ]
    for (const line of reporter.leftOutSummary()) lines.push(`${line} (see the warnings above)`)
    if (reporter.warnings > 0) lines.push(`${count(reporter.warnings, 'warning')}`)
    lines.push(values['keep-secret'] === true
      ? `integration ${clientId}: the secret given is kept in the fixture`
      : `integration ${clientId}: client secret in the fixture: ${result.secret} (not the upstream one; pass --keep-secret to copy that)`)
    if (result.seed !== undefined) lines.push(`anonymised with seed ${result.seed}${seed === undefined ? ' (drawn at random; pass --seed to map the same way again, and keep it private)' : ''}`)
    lines.push(`serve it with: agency-sandbox serve --fixtures ${out}`)
    io.stdout.write(printable(lines.join('\n'), { keepLayout: true }) + '\n')
    return 0
  } catch (e) {
    reporter.finish()
    const next = !isResumable(e)
      ? ''
      : existsSync(checkpointPath(out))
        ? '; what is written so far is kept: run the same command with --resume to carry on'
        : '; nothing is written yet: run the same command again'
    io.stderr.write(`import: stopped: ${printable(failure(e))}${next}\n`)
    return 1
  }
}

/** What stopped a command, in one line: the request and its cause, or what went wrong (a bug is named as one, without its stack). */
function failure (e: unknown): string {
  if (e instanceof GiveUpError || e instanceof UnexpectedAnswer || e instanceof ImportError) return e.message
  if (e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string') return e.message
  return e instanceof Error ? `unexpected ${e.name}: ${e.message}` : `unexpected failure: ${String(e)}`
}

export async function compareCommand (values: Values, io: CommandIo, usage: Usage): Promise<number> {
  const from = { url: url(values, 'from', usage), clientId: required(values, 'client-id', usage), clientSecret: required(values, 'client-secret', usage) }
  const toUrl = url(values, 'to', usage)
  const to = { url: toUrl, clientId: str(values['to-client-id']) ?? from.clientId, clientSecret: str(values['to-client-secret']) ?? from.clientSecret }
  const format = str(values.format) ?? 'text'
  if (format !== 'text' && format !== 'json') usage(`--format must be text or json, got '${format}'`)
  const agency = str(values.agency) === undefined ? undefined : int(values, 'agency', 0, 1, 2147483647, usage)
  const options = { from, to, agency, sample: int(values, 'sample', 10, 1, 200, usage), timeoutMs: int(values, 'timeout', 60, 1, 3600, usage) * 1000 }
  const { formatReport, runCompare } = await import('./compare.js')
  try {
    const report = await runCompare(options)
    // JSON escapes C0 controls itself; DEL, C1 and bidi controls get \u escapes (the same values)
    io.stdout.write(format === 'json' ? printable(JSON.stringify(report, null, 2), { escape: jsonEscape, keepLayout: true }) + '\n' : formatReport(report, options))
    return report.differences.length === 0 ? 0 : 1
  } catch (e) {
    io.stderr.write(`compare: stopped: ${printable(failure(e))}\n`)
    return 1
  }
}
