import { ApiError } from '../errors.js'
import { parseJsonDocument } from '../http/json-body.js'
import { printable } from '../printable.js'
import { MAX_ANSWER_VALUES, numberIn, VendorClient, type Answer, type ApiVersion } from './http.js'
import { limiter } from './limit.js'
import { compareShapes } from './shape.js'

/**
 * `agency-sandbox compare`: the same read-only requests to two instances, every difference in
 * status, the headers that matter (Content-Type, Denied), field presence, field type and value
 * format. The requests are chosen from the first instance's answers (its agency, a spread
 * sample of its clients, a policy number of theirs), so both get exactly the same ones. Answers
 * are read as the import reads them (bounded in bytes, JSON nesting and values checked before
 * parsing); one that cannot be parsed is compared as text.
 */

export interface Instance { url: string; clientId: string; clientSecret: string }

export interface CompareOptions {
  from: Instance
  to: Instance
  agency?: number
  sample: number
  timeoutMs: number
}

export interface Difference {
  /** The operation: method, path template and version. */
  endpoint: string
  /** The request as sent. */
  request: string
  kind: 'status' | 'header' | 'presence' | 'type' | 'format' | 'body'
  field?: string
  from: string
  to: string
}

export interface CompareReport {
  from: string
  to: string
  agencyId?: number
  requests: number
  endpoints: number
  differences: Difference[]
}

interface Probe {
  endpoint: string
  method: 'GET' | 'POST'
  path: string
  body?: unknown
  /** Sent with a wrong secret. */
  badCredentials?: boolean
  /** What the later probes need of the first instance's answer, taken at once (the answer itself is not kept). */
  use?: (a: Answer) => unknown
}

const ALL_GROUPS = 'Details,People,Contacts,Claims,Policies,Invoices'
type Rec = Record<string, unknown>
const isRecord = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A 200 answer's JSON array, or none. */
function list (a: Answer): unknown[] {
  const v = a.status === 200 ? parse(a) : { ok: false as const }
  return v.ok && Array.isArray(v.value) ? v.value : []
}

/** `label` tells apart requests to the same operation that are meant to fail (`(unknown client)`). */
function probe (method: 'GET' | 'POST', template: string, path: string, version: ApiVersion, query: Record<string, string> = {}, body?: unknown, label?: string): Probe {
  const templateQuery = Object.keys(query).map((k) => `&${k}=…`).join('')
  const endpoint = `${method} ${template}${version === '1' ? (templateQuery === '' ? '' : '?' + templateQuery.slice(1)) : `?version=${version}${templateQuery}`}` +
    (label === undefined ? '' : ` ${label}`)
  return { endpoint, method, path: VendorClient.path(path, version, query), body }
}

const mediaType = (a: Answer) => (a.headers.get('content-type') ?? '(none)').toLowerCase().replace(/\s+/g, '')
const denied = (a: Answer) => {
  const d = a.headers.get('denied')
  return d === null ? '(none)' : d.split(',').map((s) => s.trim()).sort().join(',')
}
const isJson = (a: Answer) => /[/+]json/.test(mediaType(a))
const excerpt = (text: string) => (text.length > 120 ? `${text.slice(0, 117)}...` : text)

/** The answer's JSON, by the sandbox's own parser (nesting and values checked first). */
function parse (a: Answer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseJsonDocument(a.body, MAX_ANSWER_VALUES).value }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { ok: false }
  }
}

/** Every difference between two answers to one request. */
export function diffAnswers (p: Probe, a: Answer, b: Answer): Difference[] {
  const request = `${p.method} ${p.path}${p.badCredentials === true ? ' (wrong secret)' : ''}`
  const d = (kind: Difference['kind'], from: string, to: string, field?: string): Difference =>
    ({ endpoint: p.endpoint, request, kind, ...(field === undefined ? {} : { field }), from, to })
  if (a.status !== b.status) return [d('status', String(a.status), String(b.status))]
  const out: Difference[] = []
  if (mediaType(a) !== mediaType(b)) out.push(d('header', a.headers.get('content-type') ?? '(none)', b.headers.get('content-type') ?? '(none)', 'Content-Type'))
  if (denied(a) !== denied(b)) out.push(d('header', denied(a), denied(b), 'Denied'))
  const ja = isJson(a) ? parse(a) : { ok: false as const }
  const jb = isJson(b) ? parse(b) : { ok: false as const }
  if (ja.ok && jb.ok) {
    for (const s of compareShapes(ja.value, jb.value)) out.push(d(s.kind, s.from, s.to, s.field))
  } else if (ja.ok !== jb.ok) {
    out.push(d('body', ja.ok ? 'JSON' : `not JSON: ${excerpt(a.text)}`, jb.ok ? 'JSON' : `not JSON: ${excerpt(b.text)}`))
  } else if (a.text !== b.text) {
    // plain-text answers (the 401 and 403 sentences) are compared word for word
    out.push(d('body', excerpt(a.text), excerpt(b.text)))
  }
  return out
}

function clientOf (i: Instance, timeoutMs: number): VendorClient {
  return new VendorClient({ baseUrl: i.url, clientId: i.clientId, clientSecret: i.clientSecret, timeoutMs, retries: 2, retryServerErrors: false })
}

/** Client numbers spread over the listing: the first, the last and evenly between. */
export function spread (ids: number[], n: number): number[] {
  if (ids.length <= n) return [...ids]
  if (n === 1) return [ids[0]]
  return [...new Set(Array.from({ length: n }, (_, k) => ids[Math.round((k * (ids.length - 1)) / (n - 1))]))]
}

export async function runCompare (o: CompareOptions): Promise<CompareReport> {
  const from = clientOf(o.from, o.timeoutMs)
  const to = clientOf(o.to, o.timeoutMs)
  try {
    return await compareWith(o, from, to)
  } finally {
    // a failure leaves no request under way
    from.close()
    to.close()
  }
}

async function compareWith (o: CompareOptions, from: VendorClient, to: VendorClient): Promise<CompareReport> {
  const limit = limiter(4)
  const results: Difference[] = []
  const endpoints = new Set<string>()
  const wrong = (i: Instance) => ({ authorization: 'Basic ' + Buffer.from(`${i.clientId}:not-the-secret-${i.clientSecret.length}`).toString('base64') })
  const sendTo = (c: VendorClient, i: Instance, p: Probe) =>
    c.send(p.method, p.path, p.body === undefined ? undefined : JSON.stringify(p.body), p.badCredentials === true ? wrong(i) : {})

  /** Sends each probe to both instances; resolves with what each probe's `use` took from the first instance's answer. */
  const run = async (probes: Probe[]): Promise<unknown[]> =>
    Promise.all(probes.map((p) => limit(async () => {
      const [a, b] = await Promise.all([sendTo(from, o.from, p), sendTo(to, o.to, p)])
      endpoints.add(p.endpoint)
      results.push(...diffAnswers(p, a, b))
      return p.use?.(a)
    })))
  const ids = (a: Answer) => list(a).map(numberIn).filter(Number.isSafeInteger)

  const [listed] = await run([
    { ...probe('GET', '/vendor/agencies', '/vendor/agencies', '4.0'), use: (a) => list(a).map((e) => numberIn(isRecord(e) ? e.agencyId : e)) },
    probe('GET', '/vendor/agencies', '/vendor/agencies', '3.0'),
    probe('GET', '/vendor/agencies', '/vendor/agencies', '1'),
    { ...probe('GET', '/vendor/agencies', '/vendor/agencies', '4.0', {}, undefined, '(wrong secret)'), badCredentials: true }
  ])
  const agencyId = o.agency ?? (listed as number[])[0]
  if (agencyId !== undefined) {
    const A = `/vendor/agency/${agencyId}`
    const T = '/vendor/agency/{agencyId}'
    let forbidden = 1
    while ((listed as number[]).includes(forbidden)) forbidden++
    const firstOfficeOf = (a: Answer) => {
      const first = list(a)[0]
      return isRecord(first) && Number.isSafeInteger(first.officeId) ? first.officeId as number : undefined
    }
    const [firstOffice, live, deleted] = await run([
      { ...probe('GET', `${T}/offices`, `${A}/offices`, '4.0'), use: firstOfficeOf },
      { ...probe('GET', `${T}/clients`, `${A}/clients`, '4.0'), use: ids },
      { ...probe('GET', `${T}/clients`, `${A}/clients`, '4.0', { deleted: 'true' }), use: ids },
      probe('GET', `${T}/offices`, `${A}/offices`, '3.0'),
      probe('GET', `${T}/offices`, `${A}/offices`, '1'),
      probe('GET', `${T}/users`, `${A}/users`, '4.0'),
      probe('GET', `${T}/clients`, `${A}/clients`, '3.0'),
      probe('GET', `${T}/clients`, `${A}/clients`, '1'),
      probe('GET', `${T}/offices`, `/vendor/agency/${forbidden}/offices`, '4.0', {}, undefined, '(an agency not listed)')
    ])
    const liveIds = live as number[]
    const known = new Set([...liveIds, ...(deleted as number[])])
    let unknown = Math.max(0, ...known) + 1000
    while (known.has(unknown)) unknown++
    const sample = spread(liveIds, o.sample)
    const C = `${T}/client/{clientId}`
    /** A sampled client's first policy number and its `modified`, as the first instance answered them. */
    const facts = (a: Answer): { policyNumber?: string; modified?: string } => {
      const v = a.status === 200 ? parse(a) : { ok: false as const }
      if (!v.ok || !isRecord(v.value)) return {}
      const c = v.value
      const policyNumber = (Array.isArray(c.policies) ? c.policies : []).map((p) => (isRecord(p) ? p.policyNumber : undefined))
        .find((n): n is string => typeof n === 'string' && n !== '')
      const modified = isRecord(c.details) && typeof c.details.modified === 'string' ? c.details.modified : undefined
      return { policyNumber, modified }
    }
    const perClient = sample.flatMap((n) => [
      { ...probe('GET', C, `${A}/client/${n}`, '4.0', { include: ALL_GROUPS }), use: facts },
      probe('GET', C, `${A}/client/${n}`, '4.0'),
      probe('GET', C, `${A}/client/${n}`, '3.0'),
      probe('GET', C, `${A}/client/${n}`, '1')
    ])
    const answers = await run([
      ...perClient,
      probe('POST', `${T}/clients`, `${A}/clients`, '4.0', { include: ALL_GROUPS }, { clientNumbers: sample }),
      probe('POST', `${T}/clients`, `${A}/clients`, '1', {}, sample),
      probe('GET', C, `${A}/client/${unknown}`, '4.0', {}, undefined, '(an unknown client)'),
      ...(firstOffice === undefined ? [] : [probe('GET', `${T}/clients`, `${A}/clients`, '4.0', { officeId: String(firstOffice) })])
    ])
    // a policy number and a time from the sampled clients (as the first instance answered them)
    const found = answers.slice(0, perClient.length).filter((f): f is { policyNumber?: string; modified?: string } => f !== undefined)
    const policyNumber = found.map((f) => f.policyNumber).find((n) => n !== undefined)
    const times = found.map((f) => f.modified).filter((v): v is string => v !== undefined).sort()
    const asOf = times[Math.floor(times.length / 2)]
    await run([
      ...(asOf === undefined ? [] : [probe('GET', `${T}/clients`, `${A}/clients`, '4.0', { asOf }), probe('GET', `${T}/clients`, `${A}/clients`, '4.0', { asOf, deleted: 'true' })]),
      ...(policyNumber === undefined
        ? []
        : [
            probe('GET', `${T}/clients/search`, `${A}/clients/search`, '4.0', { policyNumber, include: ALL_GROUPS }),
            probe('GET', `${T}/clients/search`, `${A}/clients/search`, '3.0', { policyNumber })
          ]),
      probe('GET', `${T}/clients/search`, `${A}/clients/search`, '4.0', { policyNumber: 'no-such-policy-number-0' }, undefined, '(no match)')
    ])
  }
  // a stable order: by endpoint, then request, then field
  results.sort((x, y) => x.endpoint.localeCompare(y.endpoint) || x.request.localeCompare(y.request) || (x.field ?? '').localeCompare(y.field ?? ''))
  return { from: o.from.url, to: o.to.url, agencyId, requests: from.requests, endpoints: endpoints.size, differences: results }
}

/** The text report: differences grouped by endpoint, then by request; what the instances answered is printed through printable. */
export function formatReport (r: CompareReport, o: CompareOptions): string {
  const lines = [
    `compare ${r.from} (${o.from.clientId}) with ${r.to} (${o.to.clientId})${r.agencyId === undefined ? '' : `, agency ${r.agencyId}`}: ` +
      `${r.requests} requests to each, ${r.endpoints} endpoints`
  ]
  if (r.differences.length === 0) {
    lines.push('no differences: status, Content-Type, Denied, fields, types and value formats alike')
    return lines.join('\n') + '\n'
  }
  let endpoint = ''
  let request = ''
  for (const d of r.differences) {
    if (d.endpoint !== endpoint) {
      lines.push('', printable(d.endpoint))
      endpoint = d.endpoint
      request = ''
    }
    if (d.request !== request) {
      lines.push(`  ${printable(d.request)}`)
      request = d.request
    }
    const what = d.field === undefined ? d.kind : `${printable(d.field)}: ${d.kind}`
    lines.push(`    ${what}: ${printable(d.from)} (from) / ${printable(d.to)} (to)`)
  }
  const groups = new Set(r.differences.map((d) => d.endpoint)).size
  lines.push('', `${r.differences.length} difference${r.differences.length === 1 ? '' : 's'} in ${groups} endpoint${groups === 1 ? '' : 's'}`)
  return lines.join('\n') + '\n'
}
