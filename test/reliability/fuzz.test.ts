/**
 * Property-based tests (fast-check, fixed seeds) over every vendor endpoint of the three versions
 * and the control endpoints: random and mutated bodies, headers, query strings, path segments,
 * truncated and oversized bodies, attachments that are not what they claim to be.
 *
 * Property of every answer: a documented success (200, 202) or a 4xx whose body is the documented
 * plain sentence (401, agency 403) or a problem+json body {type, title, status, detail}; never a
 * 5xx, never a hang; the sandbox still answers /_sandbox/health afterwards; and a rejected request
 * leaves the database unchanged (the tables are hashed through a second, read-only connection
 * whenever SQLite's data_version says another connection committed).
 *
 * Failures are collected by signature (endpoint, version, kind of failure) with the shortest
 * request that produced each one, so one run lists every distinct fault, not only the first.
 * Seeds: FUZZ_SEED=<n> overrides the base seed (each property adds its own offset).
 */
import Database from 'better-sqlite3'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateSync, gzipSync } from 'node:zlib'
import { AGENCY, DEMO, IDLE, NORTHWIND, basic, build, demoFixture } from '../helpers/app.js'

const BASE_SEED = Number(process.env.FUZZ_SEED ?? 20261122)
const HANG_MS = 20_000
const UNAUTHORIZED = 'The provided credentials are invalid'
const UNAVAILABLE = 'The requested agency is not available to the vendor'
const TABLES = ['clients', 'writes', 'attachment_content', 'agencies', 'subscriptions', 'integrations', 'users', 'offices', 'policies']

// ------------------------------------------------------------------------------------------------
// The demo world the generators draw from
// ------------------------------------------------------------------------------------------------

const fixture = demoFixture()
const agencyOf = (id: number) => fixture.agencies.find((a) => a.agencyId === id)!
const liveOf = (id: number) => agencyOf(id).clients.filter((c) => !c.deleted)
const main = agencyOf(AGENCY.main)
const withInvoice = liveOf(AGENCY.main).find((c) => (c.invoices ?? []).length > 0)!
const withPolicy = liveOf(AGENCY.main).find((c) => (c.policies ?? []).length > 1)!
const deletedClient = main.clients.find((c) => c.deleted)!
const activeEmail = main.users.find((u) => u.active && u.email)!.email!
const AGENCY_IDS = fixture.agencies.map((a) => a.agencyId)
const CLIENT_NUMBERS = [
  ...liveOf(AGENCY.main).slice(0, 3).map((c) => c.clientNumber), withInvoice.clientNumber, withPolicy.clientNumber,
  deletedClient.clientNumber, ...fixture.agencies.filter((a) => a.agencyId !== AGENCY.main).map((a) => liveOf(a.agencyId)[0]?.clientNumber ?? 1)
]
const POLICY_NUMBERS = [withPolicy.policies![0].policyNumber, withPolicy.policies![1].policyNumber, liveOf(2001)[0]?.policies?.[0]?.policyNumber ?? 'X']
/** RefIds used again and again, so repeats (idempotent) and conflicting repeats (409) happen. */
const REF_POOL = ['6f1c2e1a-0d7e-4a53-9a55-0e8b1f8f0001', '6f1c2e1a-0d7e-4a53-9a55-0e8b1f8f0002', '6f1c2e1a-0d7e-4a53-9a55-0e8b1f8f0003']

// ------------------------------------------------------------------------------------------------
// Precomputed payloads (built once: some are megabytes)
// ------------------------------------------------------------------------------------------------

const MiB = 1024 * 1024
const HUGE = 'x'.repeat(200_000)
const HUGE_UNICODE = '\u{1F4A5}é\u4E2D'.repeat(40_000)
const OVERSIZE_OBJECT = JSON.stringify({ pad: 'y'.repeat(MiB + 1000) })
const OVERSIZE_ARRAY = '[' + Array.from({ length: 300_000 }, () => '1000').join(',') + ']'
const DEEP_100K = '['.repeat(100_000) + ']'.repeat(100_000)
const PDF = Buffer.from('%PDF-1.4 fuzz attachment\n')
const VALID_GZIP = gzipSync(PDF)
const BOMB = gzipSync(Buffer.alloc(64 * MiB))
const JUST_OVER = gzipSync(Buffer.alloc(5 * MiB + 1, 7))
const OVERSIZE_RAW = Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(6 * MiB + 100, 1)])
const MULTI_MEMBER = Buffer.concat([gzipSync(Buffer.from('part one ')), gzipSync(Buffer.from('part two'))])
const DEFLATE = deflateSync(PDF)
const CORRUPT_CRC = (() => {
  const b = Buffer.from(VALID_GZIP)
  b[b.length - 6] ^= 0xff
  return b
})()

const deepValue = (levels: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { a: v }
  return v
}

// ------------------------------------------------------------------------------------------------
// Harness: send, check the answer, check the database
// ------------------------------------------------------------------------------------------------

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'HEAD' | 'OPTIONS'

interface Req {
  /** Endpoint and version, for grouping failures. */
  name: string
  method: Method
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
}

interface Answer {
  statusCode: number
  headers: Record<string, unknown>
  body: string
}

interface Failure {
  signature: string
  example: string
  answer: string
  count: number
  endpoints: Set<string>
}

class HangError extends Error {}

function withTimeout<T> (p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new HangError(`no answer in ${ms} ms`)), ms)
    })
  ])
}

const cut = (s: string, n = 240) => (s.length <= n ? s : `${s.slice(0, n)}…(${s.length} chars)`)

function describeRequest (req: Req): string {
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, cut(v, 80)]))
  const body = req.payload === undefined
    ? ''
    : Buffer.isBuffer(req.payload)
      ? ` body=<${req.payload.length} bytes: ${req.payload.subarray(0, 16).toString('hex')}…>`
      : ` body=${cut(req.payload, 300)}`
  return `${req.method} ${cut(req.url, 300)} headers=${JSON.stringify(headers)}${body}`
}

/** What is wrong with an answer, or undefined when it is a documented one. */
function checkAnswer (res: Answer): { kind: string; detail: string } | undefined {
  const s = res.statusCode
  const ct = String(res.headers['content-type'] ?? '')
  if (s >= 500) return { kind: `${s} answer`, detail: cut(res.body) }
  if (s < 400) {
    if (s !== 200 && s !== 202) return { kind: `undocumented success ${s}`, detail: cut(res.body) }
    if (ct.includes('json')) {
      try {
        JSON.parse(res.body)
      } catch {
        return { kind: `${s} with a ${ct} body that is not JSON`, detail: cut(res.body) }
      }
    }
    return undefined
  }
  if (s === 401) {
    return ct.startsWith('text/plain') && res.body === UNAUTHORIZED ? undefined : { kind: '401 without the documented sentence', detail: `${ct} ${cut(res.body)}` }
  }
  if (s === 403 && ct.startsWith('text/plain')) {
    return res.body === UNAVAILABLE ? undefined : { kind: '403 text that is not the documented sentence', detail: cut(res.body) }
  }
  if (!ct.startsWith('application/problem+json')) return { kind: `${s} answered as ${ct || '(no content type)'}, not a problem body`, detail: cut(res.body) }
  let body: Record<string, unknown>
  try {
    body = JSON.parse(res.body) as Record<string, unknown>
  } catch {
    return { kind: `${s} problem body is not JSON`, detail: cut(res.body) }
  }
  for (const key of ['type', 'title', 'detail'] as const) {
    if (typeof body[key] !== 'string') return { kind: `${s} problem body without a string ${key}`, detail: cut(res.body) }
  }
  if (body.status !== s) return { kind: `${s} problem body with status ${String(body.status)}`, detail: cut(res.body) }
  return undefined
}

function tableHashes (db: Database.Database, tables: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const table of tables) {
    const h = createHash('sha256')
    for (const row of db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).raw(true).iterate() as Iterable<unknown[]>) {
      for (const v of row) {
        if (Buffer.isBuffer(v)) h.update(`b${v.length}:`).update(v)
        else h.update(`${typeof v}:${String(v)}`)
        h.update('\u0001')
      }
      h.update('\u0002')
    }
    out[table] = h.digest('hex')
  }
  return out
}

class Harness {
  readonly failures = new Map<string, Failure>()
  readonly statuses = new Map<number, number>()
  readonly attachments: { agencyId: string; refId: string }[] = []
  sent = 0
  checkedRejections = 0
  /** Commits seen (accepted writes): proves the database check sees changes at all. */
  changes = 0
  private readonly ro: Database.Database
  private readonly tables: string[]
  private hashes: Record<string, string>
  private readonly createTimes = new Map<string, number[]>()

  constructor (readonly app: FastifyInstance, file: string) {
    this.ro = new Database(file, { readonly: true, fileMustExist: true })
    const present = new Set((this.ro.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]))
    this.tables = TABLES.filter((name) => present.has(name))
    this.hashes = tableHashes(this.ro, this.tables)
  }

  close (): void {
    this.ro.close()
  }

  private dataVersion (): number {
    return this.ro.pragma('data_version', { simple: true }) as number
  }

  /** Records a failure: 5xx, hangs and database changes per endpoint; answer-shape faults once for all endpoints. */
  fail (name: string, kind: string, example: string, answer: string): void {
    const perEndpoint = /^5\d\d|hang|changed table|inject/.test(kind)
    const signature = perEndpoint ? `${name}: ${kind}` : kind
    const known = this.failures.get(signature)
    if (known === undefined) this.failures.set(signature, { signature, example, answer, count: 1, endpoints: new Set([name]) })
    else {
      known.count++
      known.endpoints.add(name)
      if (example.length < known.example.length) Object.assign(known, { example, answer })
    }
  }

  /** Create client is limited to 25/s per integration: keep the fuzzing under it so bodies get validated. */
  private async pace (req: Req): Promise<void> {
    if (req.method !== 'POST' || !/^\/vendor\/agency\/[^/?]+\/client(\?|$)/.test(req.url)) return
    const key = req.headers.authorization ?? ''
    if (key !== DEMO && key !== NORTHWIND) return
    const times = (this.createTimes.get(key) ?? []).filter((at) => Date.now() - at < 1050)
    if (times.length >= 20) await new Promise((resolve) => setTimeout(resolve, 1060 - (Date.now() - times[0])))
    times.push(Date.now())
    this.createTimes.set(key, times.filter((at) => Date.now() - at < 1050))
  }

  async send (req: Req): Promise<Answer | undefined> {
    await this.pace(req)
    this.sent++
    const before = this.dataVersion()
    let res: Answer
    try {
      res = await withTimeout(this.app.inject({ method: req.method, url: req.url, headers: req.headers, payload: req.payload }), HANG_MS)
    } catch (e) {
      this.fail(req.name, e instanceof HangError ? 'hang (no answer)' : `inject rejected: ${(e as Error).message.slice(0, 80)}`, describeRequest(req), String(e))
      return undefined
    }
    this.statuses.set(res.statusCode, (this.statuses.get(res.statusCode) ?? 0) + 1)
    const wrong = checkAnswer(res)
    if (wrong !== undefined) {
      // A cause seen before (see regression fuzz-1 below): a vendor agency id that is not plain digits but that the schema coerces.
      const segment = /^\/vendor\/agency\/([^/?]*)/.exec(req.url)?.[1]
      const cause = res.statusCode >= 500 && segment !== undefined && !/^\d{1,10}$/.test(segment) ? ' [agency id not plain digits]' : ''
      this.fail(req.name, wrong.kind + cause, describeRequest(req), wrong.detail)
    }
    if (res.statusCode >= 400) this.checkedRejections++
    if (this.dataVersion() !== before) {
      this.changes++
      const now = tableHashes(this.ro, this.tables)
      if (res.statusCode >= 400) {
        const changed = this.tables.filter((table) => now[table] !== this.hashes[table])
        if (changed.length > 0) {
          this.fail(req.name, `rejected request (${res.statusCode}) changed table ${changed.join(', ')}`, describeRequest(req), cut(res.body))
        }
      }
      this.hashes = now
    }
    if (this.sent % 50 === 0) await this.health(`after request ${this.sent}`)
    return res
  }

  async health (when: string): Promise<void> {
    try {
      const res = await withTimeout(this.app.inject({ method: 'GET', url: '/_sandbox/health' }), HANG_MS)
      if (res.statusCode !== 200 || res.json().status !== 'ok') this.fail('health', `health answered ${res.statusCode}`, when, cut(res.body))
    } catch (e) {
      this.fail('health', 'health did not answer', when, String(e))
    }
  }

  report (t: Test, what: string): void {
    const list = [...this.failures.values()]
    t.comment(`${what}: ${this.sent} requests; statuses ${JSON.stringify(Object.fromEntries([...this.statuses].sort((a, b) => a[0] - b[0])))}; ${this.checkedRejections} rejections checked against the database`)
    for (const f of list) {
      t.fail(f.signature, { diagnostic: true, count: f.count, endpoints: [...f.endpoints].join(', '), request: f.example, answer: f.answer } as never)
    }
    if (list.length === 0) t.pass(`${what}: every answer documented, no rejected request changed the database`)
    this.failures.clear()
  }
}

// ------------------------------------------------------------------------------------------------
// Arbitraries
// ------------------------------------------------------------------------------------------------

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary })
const LATIN1 = [...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)), ...Array.from({ length: 0x100 - 0xa0 }, (_, i) => String.fromCharCode(0xa0 + i))]
/** Header-safe text (what an HTTP parser can hand over). */
const latin1 = (maxLength: number) => fc.string({ unit: fc.constantFrom(...LATIN1), maxLength })
const anyText = (maxLength: number) => fc.oneof(
  w(3, fc.string({ maxLength })),
  w(2, fc.string({ unit: 'grapheme', maxLength })),
  w(1, fc.string({ unit: 'binary', maxLength }))
)
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
const refIdArb = fc.oneof(w(4, fc.uuid({ version: 4 })), w(1, fc.constantFrom(...REF_POOL)))

const credential = fc.oneof(
  w(14, fc.constant<string | undefined>(DEMO)),
  w(4, fc.constant<string | undefined>(NORTHWIND)),
  w(1, fc.constant<string | undefined>(IDLE)),
  w(1, fc.constant<string | undefined>(undefined)),
  w(2, fc.constantFrom<string | undefined>(
    'Basic', 'Basic ', 'Bearer abc', 'basic YWJjOjEyMw==', 'BASIC YWJjOjEyMw==', 'Basic YWJjOjEyMw', 'Basic YWJjOjEyMw===',
    'Basic  YWJjOjEyMw==', 'Basic YWJjOjEyMw== extra', basic('abc', '1234'), basic('abc', ''), basic('', ''), basic('ABC', '123'),
    basic('abc:123', ''), basic('northwind-crm', '123'), basic('abc', '123\u0000'), basic('abc', '123 '), 'Basic ' + 'A'.repeat(100_000),
    'Basic ' + b64('abc:' + 'x'.repeat(70_000)), 'Basic ' + Buffer.from('abc:123').toString('base64url'), 'Basic !!!!', 'Basic =',
    'Digest username="abc"', 'Basic ' + Buffer.from('abc:123', 'latin1').toString('hex'), 'Basic ' + b64('\u00e9t\u00e9:caf\u00e9')
  )),
  w(2, anyText(60).map((s) => 'Basic ' + b64(s))),
  w(1, latin1(120).map((s) => s as string | undefined))
)

const SPECIAL_SEGMENTS = [
  '0', '-1', '-1001', '2147483647', '2147483648', '4294967297', '9999999999', '99999999999', '1'.repeat(30), '1e3', '1E3', '1001.0',
  '1000.5', '0x3E9', '0b1', '+1001', '%201001', '1001%20', '0001001', 'abc', 'null', 'undefined', 'NaN', 'Infinity', 'true', '%5B%5D',
  '%31%30%30%31', '%00', '%zz', '%', '%25', '..', '.', '%2e%2e', '1001%2F1', '%E2%82', '%F0%9F%92%A5', 'x'.repeat(10_000), '9'.repeat(10_000),
  '1'.repeat(101), ''
]
const segment = (valid: readonly number[]) => fc.oneof(
  w(14, fc.constantFrom(...valid).map(String)),
  w(4, fc.constantFrom(...SPECIAL_SEGMENTS)),
  w(1, fc.integer().map(String)),
  w(1, fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String)),
  w(1, fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent))
)
const agencySegment = segment([...AGENCY_IDS, 9999])
const clientSegment = segment(CLIENT_NUMBERS)

type Version = '4.0' | '3.0' | '1'
const VERSION_NOISE = ['4', '3', '1', '1.0', '2.0', '5.0', '', '4.0 ', ' 3.0', '4.00', '04.0', 'v4', '4.0.0', '%', '%zz', '4.0%00', '4%2E0', 'x'.repeat(5000)]
/** The version parameter: mostly a real one of the endpoint's, sometimes another or noise. */
const versionParam = (versions: readonly Version[]) => fc.oneof(
  w(12, fc.constantFrom(...versions)),
  w(2, fc.constantFrom<Version>('4.0', '3.0', '1')),
  w(2, fc.constantFrom(...VERSION_NOISE)),
  w(1, anyText(12).filter((s) => !s.includes('\uFFFD')).map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, ''))))
)
/** The version a version parameter selects (what the router does), for choosing a body template. */
const versionOfParam = (v: string): Version => (v === '1' ? '1' : v.trim() === '3.0' || v.trim() === '3' ? '3.0' : '4.0')

const asOfValue = fc.oneof(
  w(3, fc.constantFrom('2026-10-01T00:00:00Z', '2026-10-01', '2026-10-01T00:00:00', '2026-10-01T00:00:00.123456789+05:30', '2026-10-01T00:00:00+0530',
    '2026-10-01T00:00', '1970-01-01T00:00:00Z')),
  w(2, fc.constantFrom('9999-99-99T99:99:99Z', '0000-00-00', '2026-02-30', '275760-09-13T00:00:00.001Z', '+275760-09-13T00:00:00Z', '-271821-04-19',
    '', ' ', 'now', '1e10', '2026-10-01T00:00:00ZZ', '2026-10-01T25:00:00Z', '9'.repeat(3000), '2026-10-01%00', '2026-10-01T00:00:00.0000000000000000001Z')),
  w(1, fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
  w(1, anyText(30))
)
const includeValue = fc.oneof(
  w(3, fc.subarray(['Details', 'People', 'Contacts', 'Claims', 'Policies', 'Invoices', 'Polcies', 'details', 'PEOPLE', ' People ', '', 'Bogus', ','])
    .map((items) => items.join(','))),
  w(1, anyText(30))
)
const smallValue = (...values: string[]) => fc.oneof(w(3, fc.constantFrom(...values)), w(1, anyText(20)))
const queryValues: Record<string, fc.Arbitrary<string>> = {
  asOf: asOfValue,
  include: includeValue,
  officeId: smallValue('1', '2', '3', '0', '-1', '99999999999', 'abc', '1.5', '', ' 1', '1e0'),
  deleted: smallValue('true', 'false', '1', '0', 'yes', 'TRUE', '', 'null'),
  policyNumber: smallValue(...POLICY_NUMBERS, 'NOPE-1', '', ' ', HUGE.slice(0, 20_000), '%', '\u00e9'),
  kind: smallValue('log', 'attachment', 'receipt', 'client', 'LOG', ''),
  status: smallValue('pending', 'applied', 'x'),
  clientNumber: smallValue(...CLIENT_NUMBERS.map(String), '0', '-5', '99999999999999999999', 'abc'),
  // Control-plane reads (client search, request journal).
  q: smallValue('Smith', 'HIG-1000', '1000', '%', '_', '(', '[', '\\', "'", '"; DROP TABLE clients;--', '*', HUGE.slice(0, 5000)),
  limit: smallValue('1', '50', '1000', '1001', '0', '-1', 'abc', '1e2'),
  method: smallValue('GET', 'POST', 'get', '', 'DELETE'),
  path: smallValue('/vendor/**', '/vendor/agency/*/clients', '(', '[', '\\', '?', '+', '**/x', '/vendor/agency/*/client/*/log', ''),
  since: smallValue('0', '1', '2026-01-01T00:00:00Z', 'abc', '-1', '99999999999999999999'),
  agencyId: smallValue('1001', '0', '-1', 'abc', '99999999999')
}

interface QuerySpec {
  pairs: [string, string][]
  garbage: string | null
  encode: boolean
}
/** A query string: the endpoint's own parameters (mostly), any other, repeats and garbage. */
const querySpec = (own: string[]) => fc.record({
  pairs: fc.array(fc.oneof(
    w(4, fc.constantFrom(...(own.length > 0 ? own : ['asOf']))),
    w(1, fc.constantFrom(...Object.keys(queryValues))),
    w(1, fc.constantFrom('Version', 'ASOF', 'include[]', 'x'))
  ).chain((key) => (queryValues[key] ?? anyText(10)).map((value) => [key, value] as [string, string])), { maxLength: 4 }),
  garbage: fc.option(fc.constantFrom('&', '&&=&', '%zz', '=x', 'a[b]=c', 'version', 'include', '#frag', '&version=3.0', '&version=', ';x=1'), { freq: 6 }),
  encode: fc.oneof(w(9, fc.constant(true)), w(1, fc.constant(false)))
})

function queryString (version: string | undefined, q: QuerySpec): string {
  const enc = (s: string) => {
    if (!q.encode) return s.replace(/[\s#&?]/g, '')
    try {
      return encodeURIComponent(s)
    } catch {
      return encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '?'))
    }
  }
  const parts: string[] = []
  if (version !== undefined && version !== '1') parts.push(`version=${version}`)
  for (const [k, v] of q.pairs) parts.push(`${k}=${enc(v)}`)
  if (q.garbage !== null) parts.push(q.garbage)
  return parts.length === 0 ? '' : `?${parts.join('&')}`
}

// ---- JSON mutation ------------------------------------------------------------------------------

const MUTATIONS = [
  'drop', 'null', 'json', 'huge', 'hugeUnicode', 'unicode', 'numString', 'wrongType', 'deep', 'bigNumber', 'empty', 'caseKey', 'addKey',
  'repeat', 'whitespace', 'negative'
] as const
type MutationOp = (typeof MUTATIONS)[number]
interface Mutation {
  op: MutationOp
  at: number
  json: unknown
  text: string
  num: number
}
const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom(...MUTATIONS),
  at: fc.nat(),
  json: fc.jsonValue({ maxDepth: 2 }),
  text: anyText(24),
  num: fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -1, 0, 0.5, -0, 2147483648, 1e-300, 57, 201)
})
const mutationsArb = fc.oneof(w(1, fc.constant<Mutation[]>([])), w(4, fc.array(mutationArb, { minLength: 1, maxLength: 3 })))

type Path = (string | number)[]
function pathsOf (value: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at)
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out))
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out)
  return out
}

function wrongType (v: unknown): unknown {
  if (typeof v === 'string') return 123
  if (typeof v === 'number') return 'not a number'
  if (typeof v === 'boolean') return 'true'
  if (Array.isArray(v)) return { 0: v[0] }
  if (v !== null && typeof v === 'object') return [v]
  return 0
}

function replacement (m: Mutation, v: unknown): unknown | typeof DROP {
  switch (m.op) {
    case 'drop': return DROP
    case 'null': return null
    case 'json': return structuredClone(m.json)
    case 'huge': return HUGE
    case 'hugeUnicode': return HUGE_UNICODE
    case 'unicode': return m.text
    case 'numString': return typeof v === 'number' ? String(v) : typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : '42'
    case 'wrongType': return wrongType(v)
    case 'deep': return deepValue(1000)
    case 'bigNumber': return m.num
    case 'empty': return Array.isArray(v) ? [] : v !== null && typeof v === 'object' ? {} : ''
    case 'repeat': return Array.isArray(v) && v.length > 0 ? Array.from({ length: m.num === 201 ? 201 : 12 }, () => v[0]) : v
    case 'whitespace': return typeof v === 'string' ? ` ${v}\t` : v
    case 'negative': return typeof v === 'number' ? -v : v
    default: return v
  }
}
const DROP = Symbol('drop')

/** Applies the mutations to a deep copy of the value (the root may be replaced or dropped). */
function mutate (value: unknown, mutations: Mutation[]): unknown {
  let root: unknown = structuredClone(value)
  for (const m of mutations) {
    const paths = pathsOf(root)
    const path = paths[m.at % paths.length]
    if (path.length === 0) {
      const next = replacement(m, root)
      root = next === DROP ? undefined : next
      if (root === undefined) return undefined
      continue
    }
    let parent = root as Record<string | number, unknown>
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>
    const key = path[path.length - 1]
    if (m.op === 'caseKey' && !Array.isArray(parent) && typeof key === 'string') {
      const v = parent[key]
      delete parent[key]
      parent[m.num > 0 ? key.toUpperCase() : key.toLowerCase()] = v
      continue
    }
    if (m.op === 'addKey') {
      const target = parent[key]
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
        const name = ['extra', 'constructor', 'toString', 'hasOwnProperty', 'refid', 'REFID', 'People', m.text][Math.abs(Math.floor(m.num)) % 8] ?? 'extra'
        ;(target as Record<string, unknown>)[name] = structuredClone(m.json)
      }
      continue
    }
    const next = replacement(m, parent[key])
    if (next === DROP) {
      if (Array.isArray(parent)) parent.splice(key as number, 1)
      else delete parent[key]
    } else parent[key] = next
  }
  return root
}

// ---- Body serialization and headers ------------------------------------------------------------

const SERIALIZATIONS = ['json', 'json', 'json', 'json', 'json', 'json', 'json', 'json', 'json', 'json', 'json', 'json', 'truncated', 'truncated',
  'oversize', 'deep100k', 'bytes', 'empty', 'bom', 'trailing', 'gzip', 'proto', 'text'] as const
interface BodySpec {
  serialization: (typeof SERIALIZATIONS)[number]
  cutAt: number
  bytes: Uint8Array
}
const bodySpecArb: fc.Arbitrary<BodySpec> = fc.record({
  serialization: fc.constantFrom(...SERIALIZATIONS),
  cutAt: fc.double({ min: 0, max: 1, noNaN: true }),
  bytes: fc.uint8Array({ maxLength: 256 })
})

function serialize (value: unknown, spec: BodySpec): string | Buffer | undefined {
  const json = value === undefined ? '' : JSON.stringify(value)
  switch (spec.serialization) {
    case 'json': return value === undefined ? undefined : json
    case 'truncated': return json.slice(0, Math.floor(json.length * spec.cutAt))
    case 'oversize': return Array.isArray(value) ? OVERSIZE_ARRAY : OVERSIZE_OBJECT
    case 'deep100k': return DEEP_100K
    case 'bytes': return Buffer.from(spec.bytes)
    case 'empty': return ''
    case 'bom': return '\uFEFF' + json
    case 'trailing': return json + ' }garbage'
    case 'gzip': return gzipSync(json)
    case 'proto': return json.startsWith('{') ? '{"__proto__":{"polluted":1},' + json.slice(1) : '[{"constructor":{"prototype":{"polluted":1}}}]'
    case 'text': return 'clientNumbers=1000&refId=x'
  }
}

const CONTENT_TYPES = ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=UTF-8', 'application/json; charset=latin1',
  'application/json; charset=utf-16', 'application/problem+json', 'application/vnd.api+json', 'text/json', 'text/plain', 'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'application/octet-stream', 'application/xml', '*/*', 'application/*',
  'json', ';', 'application/json; boundary=', 'application/json, text/plain', 'application/json; charset="utf-8"; q=0.5']
const contentTypeArb = fc.oneof(
  w(24, fc.constant<string | undefined>('application/json')),
  w(6, fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined, '')),
  w(1, latin1(40).map((s) => s as string | undefined))
)
const contentEncodingArb = fc.oneof(
  w(24, fc.constant<string | undefined>(undefined)),
  w(3, fc.constantFrom<string | undefined>('gzip', 'br', 'deflate', 'identity', 'compress', 'x-gzip', 'gzip, deflate', '', 'zstd')),
  w(1, latin1(20).map((s) => s as string | undefined))
)
const extraHeadersArb = fc.oneof(
  w(12, fc.constant<Record<string, string>>({})),
  w(1, fc.constantFrom<Record<string, string>>(
    { 'content-length': '0' }, { 'content-length': '999999' }, { 'content-length': 'abc' }, { 'transfer-encoding': 'chunked' },
    { expect: '100-continue' }, { 'x-http-method-override': 'DELETE' }, { accept: 'application/xml' }, { 'accept-encoding': 'gzip, br' },
    { connection: 'close' }, { host: 'evil.example' }, { 'x-forwarded-for': '10.0.0.1' }, { cookie: 'a=b' },
    { refid: REF_POOL[0] }, { 'x-large': HUGE.slice(0, 60_000) }
  )),
  w(1, fc.dictionary(fc.constantFrom('x-a', 'x-b', 'accept', 'user-agent', 'denied', 'x-request-id'), latin1(40), { maxKeys: 3 }))
)

function headersOf (parts: { auth?: string; contentType?: string; contentEncoding?: string; extra?: Record<string, string> }): Record<string, string> {
  const h: Record<string, string> = { ...(parts.extra ?? {}) }
  if (parts.auth !== undefined) h.authorization = parts.auth
  if (parts.contentType !== undefined) h['content-type'] = parts.contentType
  if (parts.contentEncoding !== undefined) h['content-encoding'] = parts.contentEncoding
  return h
}

// ------------------------------------------------------------------------------------------------
// Endpoints, valid requests, and faults
// ------------------------------------------------------------------------------------------------

/** A valid (agency, client, credentials) triple: the skeleton a request starts from. */
interface Target {
  agency: number
  client: number
  auth: string
}
const clientOf = (agency: number, n: number) => agencyOf(agency).clients.find((c) => c.clientNumber === n)
const TARGETS: Target[] = [
  ...liveOf(AGENCY.main).slice(0, 3).map((c) => ({ agency: AGENCY.main, client: c.clientNumber, auth: DEMO })),
  { agency: AGENCY.main, client: withInvoice.clientNumber, auth: DEMO },
  { agency: AGENCY.main, client: withPolicy.clientNumber, auth: DEMO },
  { agency: AGENCY.main, client: withPolicy.clientNumber, auth: DEMO },
  { agency: AGENCY.limited, client: liveOf(AGENCY.limited)[0].clientNumber, auth: DEMO },
  { agency: AGENCY.disconnected, client: liveOf(AGENCY.disconnected)[0].clientNumber, auth: DEMO },
  { agency: AGENCY.northwindOnly, client: liveOf(AGENCY.northwindOnly)[0].clientNumber, auth: NORTHWIND },
  { agency: AGENCY.main, client: liveOf(AGENCY.main)[0].clientNumber, auth: NORTHWIND }
]
const targetArb = fc.constantFrom(...TARGETS)

interface Ids {
  refId: string
  refId2: string
  target: Target
}

interface Endpoint {
  name: string
  method: Method
  path: (agency: string, client: string) => string
  versions: readonly Version[]
  query: string[]
  body?: (version: Version, ids: Ids) => unknown
}

const policiesOf = (ids: Ids) => clientOf(ids.target.agency, ids.target.client)?.policies ?? []
const invoicesOf = (ids: Ids) => clientOf(ids.target.agency, ids.target.client)?.invoices ?? []
const emailOf = (agency: number) => agencyOf(agency).users.find((u) => u.active && u.email)?.email ?? activeEmail

const logNoteBody = (ids: Ids) => ({
  refId: ids.refId,
  ts: '2026-11-20T10:00:00Z',
  channel: 29,
  note: '<p>Called about renewal</p>',
  ...(policiesOf(ids).length > 0 ? { policyId: policiesOf(ids)[0].id } : {}),
  task: { assignedToRole: 'SpecifiedUser', assignedToEmail: emailOf(ids.target.agency), description: 'Call back', dueDate: '2026-11-25T09:00:00Z', title: 'Call back' }
})
const receiptBody = (ids: Ids) => [
  {
    refId: ids.refId,
    ts: '2026-11-20T10:00:00Z',
    channel: 4,
    logNote: 'Payment by card',
    payMethod: 'Check',
    ...(invoicesOf(ids).length > 0 ? { invoices: [{ invoiceId: invoicesOf(ids)[0].id, amount: 10.5 }], total: 10.5 } : {})
  },
  { RefId: ids.refId2, TS: '2026-11-20T10:00:00Z', Channel: '4', LogNote: 'Cash' }
]
const createBody = (ids: Ids) => ({
  People: [
    { FirstName: 'Ada', LastName: 'Lovelace', MainContactType: 'First', DateOfBirth: '1985-12-10', Contacts: [{ Type: 'HomeEmail', Value: 'ada@example.com' }] },
    { FirstName: 'William', LastName: 'King', MainContactType: 'Second' }
  ],
  Contacts: [{ Type: 'HomePhone', Value: '207-555-0100' }],
  MailingAddress: { Address1: '12 Analytical Way', City: 'Portland', State: 'ME', Zip: '04101' },
  Log: { Channel: 29, Note: `New client ${ids.refId}`, TS: '2026-11-20T10:00:00Z' },
  Status: 'Prospect',
  Policy: { PolicyNumber: 'NEW-POL-0001', LOBs: ['AUTOP', 'HOME'], EffectiveDate: '2026-12-01', State: 'ME', ApplicationType: 'Personal' },
  Task: { AssignedToRole: 'Csr', Description: 'Welcome call', DueDate: '2026-11-27T15:00:00Z', Title: 'Welcome' },
  Source: 'partner',
  OfficeId: agencyOf(ids.target.agency).defaultOfficeId
})
const v1LogBody = (ids: Ids) => ({
  Action: 1,
  Body: 'Spoke to the insured',
  Description: 'Call',
  RefId: ids.refId,
  TS: '2026-11-20T10:00:00Z',
  ...(policiesOf(ids).length > 0 ? { PolicyIndex: 0 } : {}),
  Suspense: { DueDate: '2026-12-01T00:00:00Z', SuspendedFor: 'Producer', Category: 'Docs' }
})

const ALL: readonly Version[] = ['4.0', '3.0', '1']
const READS: Endpoint[] = [
  { name: 'agencies', method: 'GET', path: () => '/vendor/agencies', versions: ALL, query: [] },
  { name: 'offices', method: 'GET', path: (a) => `/vendor/agency/${a}/offices`, versions: ALL, query: [] },
  { name: 'users', method: 'GET', path: (a) => `/vendor/agency/${a}/users`, versions: ['4.0'], query: [] },
  { name: 'changed clients', method: 'GET', path: (a) => `/vendor/agency/${a}/clients`, versions: ALL, query: ['asOf', 'officeId', 'deleted'] },
  { name: 'get client', method: 'GET', path: (a, c) => `/vendor/agency/${a}/client/${c}`, versions: ALL, query: ['include'] },
  {
    name: 'batch read',
    method: 'POST',
    path: (a) => `/vendor/agency/${a}/clients`,
    versions: ALL,
    query: ['include'],
    body: (v, ids) => (v === '1' ? [ids.target.client, 1001, 1002] : { clientNumbers: [ids.target.client, '1001', 1002, 99999] })
  },
  { name: 'search', method: 'GET', path: (a) => `/vendor/agency/${a}/clients/search`, versions: ['4.0', '3.0'], query: ['policyNumber', 'include'] }
]
const WRITES: Endpoint[] = [
  { name: 'log note', method: 'POST', path: (a, c) => `/vendor/agency/${a}/client/${c}/log`, versions: ['4.0', '3.0'], query: [], body: (_v, ids) => logNoteBody(ids) },
  { name: 'v1 log note', method: 'POST', path: (a, c) => `/vendor/agency/${a}/client/${c}`, versions: ['1'], query: [], body: (_v, ids) => v1LogBody(ids) },
  { name: 'receipts', method: 'POST', path: (a, c) => `/vendor/agency/${a}/client/${c}/receipts`, versions: ['4.0', '3.0'], query: [], body: (_v, ids) => receiptBody(ids) },
  { name: 'create client', method: 'POST', path: (a) => `/vendor/agency/${a}/client`, versions: ['4.0'], query: [], body: (_v, ids) => createBody(ids) }
]

/** Valid query values per parameter (the fault-free skeleton). */
const validQuery = (ep: Endpoint, target: Target): fc.Arbitrary<QuerySpec> => {
  const own: Record<string, fc.Arbitrary<string>> = {
    asOf: fc.constantFrom('2026-10-01T00:00:00Z', '2026-06-01', '2026-10-01T00:00:00.5'),
    officeId: fc.constantFrom('1', '2'),
    deleted: fc.constantFrom('true', 'false'),
    include: fc.subarray(['Details', 'People', 'Contacts', 'Claims', 'Policies', 'Invoices'], { minLength: 1 }).map((l) => l.join(',')),
    policyNumber: fc.constant(clientOf(target.agency, target.client)?.policies?.[0]?.policyNumber ?? 'NONE-0')
  }
  const required = ep.query.includes('policyNumber') ? ['policyNumber'] : []
  return fc.subarray(ep.query.filter((q) => !required.includes(q))).chain((keys) =>
    fc.tuple(...[...required, ...keys].map((k) => own[k].map((v) => [k, v] as [string, string]))).map((pairs) => ({ pairs, garbage: null, encode: true })))
}

const VENDOR_DIMS = ['version', 'agency', 'client', 'query', 'mutations', 'serialization', 'auth', 'contentType', 'contentEncoding', 'extra', 'method'] as const
type Dim = (typeof VENDOR_DIMS)[number]
/** Which parts of the request are wrong: none (a valid request), one, or a few. */
const faultsArb = <D extends string>(dims: readonly D[]) => fc.oneof(
  w(3, fc.constant<D[]>([])),
  w(6, fc.subarray([...dims], { minLength: 1, maxLength: 1 })),
  w(2, fc.subarray([...dims], { minLength: 2, maxLength: 4 }))
)

/** A vendor request to one endpoint, valid except for the faulty parts. */
function vendorRequest (endpoints: Endpoint[]) {
  return fc.constantFrom(...endpoints).chain((ep) =>
    fc.record({
      faults: faultsArb(VENDOR_DIMS),
      ids: fc.record({ refId: refIdArb, refId2: refIdArb, target: targetArb }),
      validVersion: fc.constantFrom(...ep.versions),
      version: versionParam(ep.versions),
      agency: agencySegment,
      client: clientSegment,
      query: querySpec(ep.query),
      mutations: fc.array(mutationArb, { minLength: 1, maxLength: 3 }),
      body: bodySpecArb.filter((b) => b.serialization !== 'json'),
      auth: credential,
      contentType: contentTypeArb,
      contentEncoding: contentEncodingArb,
      extra: extraHeadersArb,
      method: fc.constantFrom<Method>('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
      strayBody: fc.oneof(w(6, fc.constant(false)), w(1, fc.constant(true)))
    }).chain((s) => validQuery(ep, s.ids.target).map((vq) => ({ ...s, validQuery: vq }))).map((s): Req => {
      const bad = (d: Dim) => s.faults.includes(d)
      const versionParamValue = bad('version') ? s.version : s.validVersion
      const version = versionOfParam(versionParamValue)
      const method = bad('method') ? s.method : ep.method
      let payload: string | Buffer | undefined
      let contentType = bad('contentType') ? s.contentType : 'application/json'
      const contentEncoding = bad('contentEncoding') ? s.contentEncoding : undefined
      if (ep.body !== undefined && method !== 'GET') {
        const value = ep.body(version, s.ids)
        const body = bad('mutations') ? mutate(value, s.mutations) : value
        payload = bad('serialization') ? serialize(body, s.body) : body === undefined ? undefined : JSON.stringify(body)
      } else if (s.strayBody && bad('serialization') && method !== 'GET') {
        payload = serialize({ clientNumbers: [1000] }, s.body)
      }
      if (payload === undefined && !bad('contentType')) contentType = undefined
      const agency = bad('agency') ? s.agency : String(s.ids.target.agency)
      const client = bad('client') ? s.client : String(s.ids.target.client)
      const url = ep.path(agency, client) + queryString(versionParamValue, bad('query') ? s.query : s.validQuery)
      return {
        name: `${ep.name} ${version}`,
        method,
        url,
        headers: headersOf({
          auth: bad('auth') ? s.auth : s.ids.target.auth,
          contentType,
          contentEncoding: contentEncoding ?? (Buffer.isBuffer(payload) && s.body.serialization === 'gzip' ? 'gzip' : undefined),
          extra: bad('extra') ? s.extra : {}
        }),
        payload
      }
    })
  )
}

// ---- Attachments --------------------------------------------------------------------------------

const ATTACHMENT_BODIES = ['bytes', 'truncated', 'bomb', 'justOver', 'oversizeRaw', 'empty', 'deflate', 'trailing', 'multiMember', 'magicOnly', 'corruptCrc', 'plain'] as const
const HEADER_OPS = ['drop', 'badBase64', 'huge', 'random', 'empty', 'unicodeBase64', 'upper', 'spaces'] as const
const BAD_BASE64 = ['***', '=', 'YW=JJ', 'YWJj=', '====', 'Zm9v!', '\u00e9\u00e9', '%%', 'YWJj\tZGVm', 'A', 'AB', 'ABC', 'Zg', 'Zg=', '-_-_', '//8=']

function attachmentHeaders (version: Version, refId: string, policyId?: string): Record<string, string> {
  if (version === '1') {
    return {
      RefId: refId,
      TS: '2026-11-20T10:00:00Z',
      Action: '33',
      Desc: b64('Scan'),
      FileName: b64('scan'),
      FileExt: 'txt',
      LogBody: b64('Scan received'),
      LogDescription: b64('Scan'),
      SuspendedFor: 'Producer',
      SuspendedForInitials: '',
      SuspenseCategory: b64('Docs'),
      SuspenseDueDate: '2026-12-01T00:00:00Z',
      ...(policyId === undefined ? {} : { PolicyIndex: '0' })
    }
  }
  return {
    RefId: refId,
    TS: '2026-11-20T10:00:00Z',
    Channel: '33',
    Desc: b64('Signed application'),
    FileName: b64('application sign\u00e9e'),
    FileExt: 'pdf',
    LogNote: b64('Application received'),
    ...(policyId === undefined ? {} : { PolicyId: policyId })
  }
}

const ATTACHMENT_DIMS = ['version', 'target', 'auth', 'headers', 'task', 'body', 'contentType', 'contentEncoding', 'extra'] as const
type AttachmentDim = (typeof ATTACHMENT_DIMS)[number]

const attachmentRequest = fc.record({
  faults: faultsArb(ATTACHMENT_DIMS),
  target: targetArb,
  validVersion: fc.constantFrom(...ALL),
  version: versionParam(ALL),
  agency: agencySegment,
  client: clientSegment,
  refId: refIdArb,
  auth: credential,
  headerOps: fc.array(fc.record({ op: fc.constantFrom(...HEADER_OPS), at: fc.nat(), text: latin1(30), bad: fc.constantFrom(...BAD_BASE64) }), { minLength: 1, maxLength: 3 }),
  task: fc.record({
    TaskAssignedTo: fc.constantFrom('Producer', 'Csr', 'CSR', 'SpecifiedUser', 'Agent2', 'Boss', ''),
    TaskAssignedToEmail: fc.constantFrom(activeEmail, 'nobody@example.com', ''),
    TaskDescription: fc.constantFrom(b64('Review'), '***', ''),
    TaskDueDate: fc.constantFrom('2026-12-01T00:00:00Z', 'tomorrow', '9999-99-99T99:99:99Z'),
    TaskTitle: fc.constantFrom(b64('Review'), '=', ''),
    TaskCategory: fc.constantFrom(b64('Docs'), '!!')
  }).chain((task) => fc.subarray(Object.keys(task), { minLength: 1 }).map((keys) => Object.fromEntries(keys.map((k) => [k, task[k as keyof typeof task]])))),
  body: fc.constantFrom(...ATTACHMENT_BODIES),
  bytes: fc.uint8Array({ maxLength: 512 }),
  content: fc.uint8Array({ maxLength: 2048 }),
  cutAt: fc.nat(),
  contentType: fc.constantFrom<string | undefined>(undefined, 'application/json', 'application/gzip', 'application/x-gzip', 'text/plain',
    'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', '', 'image/png', '*/*', 'application/octet-stream; charset=utf-8'),
  contentEncoding: contentEncodingArb,
  extra: extraHeadersArb
}).map((s): Req => {
  const bad = (d: AttachmentDim) => s.faults.includes(d)
  const versionParamValue = bad('version') ? s.version : s.validVersion
  const version = versionOfParam(versionParamValue)
  const policyId = clientOf(s.target.agency, s.target.client)?.policies?.[0]?.id
  const headers: Record<string, string> = attachmentHeaders(version, s.refId, policyId)
  if (bad('task')) Object.assign(headers, s.task)
  if (bad('headers')) {
    for (const op of s.headerOps) {
      const names = Object.keys(headers)
      const name = names[op.at % names.length]
      switch (op.op) {
        case 'drop': delete headers[name]; break
        case 'badBase64': headers[name] = op.bad; break
        case 'huge': headers[name] = HUGE.slice(0, 50_000); break
        case 'random': headers[name] = op.text; break
        case 'empty': headers[name] = ''; break
        case 'unicodeBase64': headers[name] = b64(HUGE_UNICODE.slice(0, 300)); break
        case 'upper': headers[name.toUpperCase()] = headers[name]; delete headers[name]; break
        case 'spaces': headers[name] = ` ${headers[name]} `; break
      }
    }
  }
  let payload: Buffer | undefined = gzipSync(Buffer.concat([PDF, Buffer.from(s.content)]))
  if (bad('body')) {
    switch (s.body) {
      case 'bytes': payload = Buffer.from(s.bytes); break
      case 'truncated': payload = VALID_GZIP.subarray(0, s.cutAt % VALID_GZIP.length); break
      case 'bomb': payload = BOMB; break
      case 'justOver': payload = JUST_OVER; break
      case 'oversizeRaw': payload = OVERSIZE_RAW; break
      case 'empty': payload = undefined; break
      case 'deflate': payload = DEFLATE; break
      case 'trailing': payload = Buffer.concat([VALID_GZIP, Buffer.from(s.bytes)]); break
      case 'multiMember': payload = MULTI_MEMBER; break
      case 'magicOnly': payload = Buffer.from([0x1f, 0x8b]); break
      case 'corruptCrc': payload = CORRUPT_CRC; break
      case 'plain': payload = PDF; break
    }
  }
  const agency = bad('target') ? s.agency : String(s.target.agency)
  const client = bad('target') ? s.client : String(s.target.client)
  const url = `/vendor/agency/${agency}/client/${client}/attachment${queryString(versionParamValue, { pairs: [], garbage: null, encode: true })}`
  return {
    name: `attachment ${version}`,
    method: 'POST',
    url,
    headers: {
      ...headers,
      ...headersOf({
        auth: bad('auth') ? s.auth : s.target.auth,
        contentType: bad('contentType') ? s.contentType : 'application/octet-stream',
        contentEncoding: bad('contentEncoding') ? s.contentEncoding : undefined,
        extra: bad('extra') ? s.extra : {}
      })
    },
    payload
  }
})

// ---- Control plane ------------------------------------------------------------------------------

const CONTROL = ['health', 'patch', 'writes', 'content', 'reads'] as const
/** Read-only control endpoints registered since (routes/control/*.ts): fuzzed with their own queries, never mutated. */
const CONTROL_READS: { path: (agency: string, client: string) => string; query: string[] }[] = [
  { path: () => '/_sandbox/info', query: [] },
  { path: () => '/_sandbox/agencies', query: [] },
  { path: () => '/_sandbox/integrations', query: [] },
  { path: (a) => `/_sandbox/agencies/${a}/clients`, query: ['q', 'limit'] },
  { path: (a, c) => `/_sandbox/agencies/${a}/clients/${c}`, query: [] },
  { path: () => '/_sandbox/clock', query: [] },
  { path: () => '/_sandbox/requests', query: ['method', 'path', 'agencyId', 'status', 'since', 'limit'] },
  { path: () => '/_sandbox/faults', query: [] },
  { path: () => '/_sandbox/simulator', query: [] }
]
const patchBodyArb = fc.record({
  connected: fc.option(fc.boolean(), { nil: undefined }),
  active: fc.option(fc.boolean(), { nil: undefined }),
  supportsIncludes: fc.option(fc.boolean(), { nil: undefined }),
  defaultOfficeId: fc.option(fc.constantFrom(1, 2, 3, 99), { nil: undefined })
}, { requiredKeys: [] })

function controlRequest (h: () => Harness) {
  return fc.record({
    which: fc.constantFrom(...CONTROL),
    agency: agencySegment,
    patch: patchBodyArb,
    mutations: mutationsArb,
    body: bodySpecArb,
    query: querySpec(['kind', 'status', 'clientNumber']),
    read: fc.constantFrom(...CONTROL_READS).chain((r) => querySpec(r.query.length > 0 ? r.query : ['x']).map((query) => ({ r, query }))),
    client: clientSegment,
    refId: fc.oneof(w(3, fc.constant<string | null>(null)), w(2, fc.uuid({ version: 4 }).map((u) => u as string | null)),
      w(1, fc.constantFrom<string | null>('xyz', '%zz', 'x'.repeat(10_000), '00000000-0000-0000-0000-000000000000', encodeURIComponent('\u{1F4A5}')))),
    pick: fc.nat(),
    contentType: contentTypeArb,
    contentEncoding: contentEncodingArb,
    extra: extraHeadersArb,
    auth: fc.oneof(w(4, fc.constant<string | undefined>(undefined)), w(1, credential)),
    // Other methods only where they cannot wipe the world (DELETE an agency, start the simulator, move the clock).
    method: fc.oneof(w(20, fc.constant<Method | null>(null)), w(1, fc.constantFrom<Method | null>('GET', 'POST', 'PUT', 'OPTIONS')))
  // eslint-disable-next-line array-callback-return -- every case of the switch returns
  }).map((s): Req => {
    if (s.method !== null && s.method !== 'GET' && (s.which === 'reads' || s.which === 'health')) s.method = 'GET'
    const base = { auth: s.auth, extra: s.extra, contentEncoding: s.contentEncoding }
    switch (s.which) {
      case 'health':
        return { name: 'control health', method: s.method ?? 'GET', url: `/_sandbox/health${queryString(undefined, s.query)}`, headers: headersOf(base) }
      case 'patch': {
        const payload = serialize(mutate(s.patch, s.mutations), s.body)
        return {
          name: 'control patch agency',
          method: s.method ?? 'PATCH',
          url: `/_sandbox/agencies/${s.agency}`,
          headers: headersOf({ ...base, contentType: payload === undefined ? undefined : s.contentType }),
          payload
        }
      }
      case 'writes':
        return { name: 'control writes', method: s.method ?? 'GET', url: `/_sandbox/agencies/${s.agency}/writes${queryString(undefined, s.query)}`, headers: headersOf(base) }
      case 'reads':
        return {
          name: `control read ${s.read.r.path('{a}', '{c}')}`,
          method: s.method ?? 'GET',
          url: s.read.r.path(s.agency, s.client) + queryString(undefined, s.read.query),
          headers: headersOf(base)
        }
      case 'content': {
        const known = h().attachments
        const stored = known.length > 0 && s.refId === null ? known[s.pick % known.length] : undefined
        const agency = stored?.agencyId ?? s.agency
        const refId = stored?.refId ?? s.refId ?? REF_POOL[0]
        return { name: 'control attachment content', method: s.method ?? 'GET', url: `/_sandbox/agencies/${agency}/attachments/${refId}/content`, headers: headersOf(base) }
      }
    }
  })
}

// ------------------------------------------------------------------------------------------------
// The properties
// ------------------------------------------------------------------------------------------------

async function harness (t: Test): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-fuzz-'))
  const file = join(dir, 'sandbox.db')
  const app = await build(t, { config: { db: file } })
  const h = new Harness(app, file)
  t.teardown(() => {
    h.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return h
}

/** Runs a property over requests; failures are collected in the harness, not thrown, so every fault is listed. */
async function fuzz (h: Harness, arb: fc.Arbitrary<Req>, seed: number, numRuns: number, after?: (req: Req, res: Answer) => Promise<void>): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arb, async (req) => {
      const res = await h.send(req)
      if (res !== undefined && after !== undefined) await after(req, res)
    }),
    { seed, numRuns, endOnFailure: true }
  )
  await h.health('after the property')
}

t.test('vendor reads: any path, query, version, credentials and stray body', async (t) => {
  const h = await harness(t)
  await fuzz(h, vendorRequest(READS), BASE_SEED + 1, 800)
  h.report(t, 'vendor reads')
})

t.test('vendor writes: mutated, truncated, oversized and mistyped JSON bodies', async (t) => {
  const h = await harness(t)
  await fuzz(h, vendorRequest(WRITES), BASE_SEED + 2, 900)
  h.report(t, 'vendor writes')
  t.ok(h.changes > 100, `the read-only connection saw ${h.changes} commits of accepted writes, so it would see a rejected one's`)
})

t.test('attachments: bad headers, bad base64, not gzip, truncated gzip, gzip bombs, oversized bodies', async (t) => {
  const h = await harness(t)
  await fuzz(h, attachmentRequest, BASE_SEED + 3, 400, async (req, res) => {
    const refId = Object.entries(req.headers).find(([k]) => k.toLowerCase() === 'refid')?.[1]
    const agency = /^\/vendor\/agency\/([^/]+)\//.exec(req.url)?.[1]
    if ((res.statusCode === 200 || res.statusCode === 202) && refId !== undefined && agency !== undefined) h.attachments.push({ agencyId: agency, refId })
  })
  h.report(t, 'attachments')
  t.ok(h.attachments.length > 0, `some attachments were accepted (${h.attachments.length}), so the generators reach the domain`)
})

t.test('control plane: health, agency patch, writes listing, attachment content', async (t) => {
  const h = await harness(t)
  // A few stored attachments for the content endpoint to find.
  for (const agency of [AGENCY.main, AGENCY.disconnected]) {
    const refId = `7a0b8c9d-1e2f-4a3b-8c4d-5e6f7a8b9c0${agency === AGENCY.main ? 1 : 2}`
    const res = await h.send({
      name: 'seed attachment',
      method: 'POST',
      url: `/vendor/agency/${agency}/client/${liveOf(agency)[0].clientNumber}/attachment?version=4.0`,
      headers: { authorization: DEMO, 'content-type': 'application/octet-stream', ...attachmentHeaders('4.0', refId) },
      payload: VALID_GZIP
    })
    t.ok(res !== undefined && res.statusCode < 300, `seed attachment in ${agency}: ${res?.statusCode} ${res?.body}`)
    h.attachments.push({ agencyId: String(agency), refId })
  }
  const original = new Map(fixture.agencies.map((a) => [String(a.agencyId), {
    active: a.active ?? true, connected: a.connected ?? true, supportsIncludes: a.supportsIncludes ?? true, defaultOfficeId: a.defaultOfficeId
  }]))
  await fuzz(h, controlRequest(() => h), BASE_SEED + 4, 500, async (req, res) => {
    // Keep the world as the fixture made it, so later requests keep reaching the domain.
    const id = /^\/_sandbox\/agencies\/(\d+)$/.exec(req.url)?.[1]
    if (req.method === 'PATCH' && res.statusCode === 200 && id !== undefined) {
      const flags = original.get(String(Number(id)))
      if (flags !== undefined) {
        await h.send({ name: 'restore patch', method: 'PATCH', url: `/_sandbox/agencies/${Number(id)}`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(flags) })
      }
    }
  })
  h.report(t, 'control plane')
})

t.test('a real socket: broken HTTP, bodies shorter than announced, aborted uploads; the server keeps serving', async (t) => {
  const h = await harness(t)
  const address = await h.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = new URL(address)
  const raw = (text: string | Buffer, endAfterMs = 300) => new Promise<string>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1')
    let got = ''
    socket.on('data', (d) => (got += d.toString('latin1')))
    socket.on('error', () => resolve(got))
    socket.on('close', () => resolve(got))
    socket.write(text)
    setTimeout(() => socket.destroy(), endAfterMs)
  })
  const auth = `Authorization: ${DEMO}\r\n`
  const cases: [string, string | Buffer][] = [
    ['body shorter than Content-Length', `POST /vendor/agency/1001/clients?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"clientNumbers":[10`],
    ['aborted attachment upload', `POST /vendor/agency/1001/client/${CLIENT_NUMBERS[0]}/attachment?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/octet-stream\r\nRefId: ${REF_POOL[2]}\r\nTS: 2026-11-20T10:00:00Z\r\nChannel: 33\r\nDesc: ZA==\r\nFileName: ZA==\r\nFileExt: pdf\r\nLogNote: ZA==\r\nContent-Length: 5000000\r\n\r\n\x1f\x8b\x08\x00`],
    ['chunked body cut in the middle', `POST /vendor/agency/1001/client/${CLIENT_NUMBERS[0]}/log?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"refId":"6f1c2e`],
    ['garbage instead of HTTP', Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03])],
    ['negative Content-Length', `POST /vendor/agency/1001/clients?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: -1\r\n\r\n[1000]`],
    ['both Content-Length and chunked', `POST /vendor/agency/1001/clients?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n[1000]\r\n0\r\n\r\n`],
    ['header over 16 KiB', `GET /vendor/agencies?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}X-Big: ${'a'.repeat(40_000)}\r\n\r\n`],
    ['URL of 100 KiB', `GET /vendor/agency/${'9'.repeat(100_000)}/offices?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`],
    ['HTTP/1.0 without Host', 'GET /_sandbox/health HTTP/1.0\r\n\r\n'],
    ['pipelined requests', `GET /_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\nGET /vendor/agencies?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}\r\nGET /vendor/agency/1001/offices?version=4.0 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`]
  ]
  for (const [name, text] of cases) {
    const got = await raw(text)
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(got)?.[1] ?? 0)
    t.ok(status === 0 || status < 500, `${name}: ${status === 0 ? 'connection closed without an answer' : `answered ${status}`}`)
    const health = await fetch(`${address}/_sandbox/health`)
    t.equal(health.status, 200, `${name}: the server still answers health`)
  }
  t.same(await (await fetch(`${address}/_sandbox/agencies/1001/writes`)).json(), [], 'no aborted upload left a write behind')
  await h.health('after the socket cases')
  h.report(t, 'socket')
})

// ------------------------------------------------------------------------------------------------
// Faults the fuzzing found, kept as named regression cases
// ------------------------------------------------------------------------------------------------

t.test('regression fuzz-1: an agency id the schema coerces to a number but the vendor pipeline did not read answered 500', async (t) => {
  // Was: src/plugins/vendor.ts read the grant only when the raw segment matched /^\d{1,10}$/; ajv then
  // coerced "+1001", " 1001", "1e3", "1001.0", "0x3E9", "Infinity" to numbers, the route ran
  // without a grant and grantOf() threw a plain Error: 500.
  const app = await build(t)
  const c = liveOf(AGENCY.main)[0].clientNumber
  for (const segment of ['+1001', '%201001', '1e3', '1001.0', '0x3E9', 'Infinity', '0b1']) {
    for (const [method, path, payload] of [
      ['GET', `/vendor/agency/${segment}/offices?version=4.0`, undefined],
      ['GET', `/vendor/agency/${segment}/client/${c}?version=4.0`, undefined],
      ['POST', `/vendor/agency/${segment}/client/${c}/log?version=4.0`, JSON.stringify({ refId: REF_POOL[0], ts: '2026-11-20T10:00:00Z', channel: 1, note: 'n' })]
    ] as const) {
      const res = await app.inject({ method, url: path, headers: { authorization: DEMO, 'content-type': 'application/json' }, payload })
      const wrong = checkAnswer({ statusCode: res.statusCode, headers: res.headers, body: res.body })
      t.equal(wrong, undefined, `${method} ${path}: ${res.statusCode} ${res.body.slice(0, 120)}`)
    }
  }
})

t.test('regression fuzz-2: router errors (bad percent-encoding, path segment over 100 chars) were not problem bodies', async (t) => {
  // Was: Fastify answered FST_ERR_BAD_URL (400) and FST_ERR_MAX_PARAM_LENGTH (414) itself with
  // {"error","code","message","statusCode"} as application/json: no frameworkErrors handler in src/app.ts.
  const app = await build(t)
  for (const url of ['/vendor/agency/%zz/offices?version=4.0', '/vendor/agency/%E2%82/clients?version=4.0', `/vendor/agency/${'1'.repeat(101)}/offices?version=4.0`,
    `/vendor/agency/1001/client/${'9'.repeat(400)}?version=4.0`, `/_sandbox/agencies/${'x'.repeat(200)}/writes`]) {
    const res = await app.inject({ url, headers: { authorization: DEMO } })
    const wrong = checkAnswer({ statusCode: res.statusCode, headers: res.headers, body: res.body })
    t.equal(wrong, undefined, `${cut(url, 80)}: ${res.statusCode} ${res.headers['content-type']} ${res.body.slice(0, 120)}`)
  }
})

t.test('regression fuzz-3: a JSON scalar where a body must be an array answered 500 (receipts, version 1 batch read)', async (t) => {
  // Was: Fastify's ajv runs with coerceTypes "array": the root scalar validated as [scalar], but the coerced
  // root was not written back, so the handler got the scalar: routes/partner-api/writes.ts (receipts:
  // `request.body.map is not a function`) and src/domain/clients.ts batch (`reading 'length'`) threw.
  const app = await build(t)
  const c = liveOf(AGENCY.main)[0].clientNumber
  for (const body of ['42', '"42"', 'true', '"x"', 'null']) {
    for (const url of [`/vendor/agency/${AGENCY.main}/client/${c}/receipts?version=4.0`, `/vendor/agency/${AGENCY.main}/client/${c}/receipts?version=3.0`, `/vendor/agency/${AGENCY.main}/clients`]) {
      const res = await app.inject({ method: 'POST', url, headers: { authorization: DEMO, 'content-type': 'application/json' }, payload: body })
      const wrong = checkAnswer({ statusCode: res.statusCode, headers: res.headers, body: res.body })
      t.equal(wrong, undefined, `POST ${url} body ${body}: ${res.statusCode} ${res.body.slice(0, 100)}`)
      t.equal(res.statusCode, 400, `body ${body} is a 400 naming the body`)
    }
  }
})

t.test('regression fuzz-4: a path glob with many ** blocked the sandbox (catastrophic regex backtracking)', { timeout: 60_000 }, async (t) => {
  // Was: src/domain/journal.ts globToRegExp turned each `**` into `.*`: `**` x 12 + `x` is /^.*.*….*x$/, whose
  // backtracking grows with the power of the number of stars; testing it against a 40-character path never
  // ended and blocked the event loop: the vendor API and health stopped answering. GET /_sandbox/requests?path=
  // and fault rules (POST /_sandbox/faults, matched on every vendor request) both compiled globs this way.
  // Run in a child process, so the hang cannot take this test file with it.
  const { serveProcess } = await import('../helpers/process.js')
  const glob = '**'.repeat(12) + 'x'
  const timed = async (url: string, init: RequestInit = {}, ms = 3000) => {
    const started = Date.now()
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(ms) })
      await res.arrayBuffer()
      return { status: res.status, ms: Date.now() - started }
    } catch {
      return { status: 0, ms: Date.now() - started }
    }
  }
  for (const scenario of ['journal query', 'fault rule'] as const) {
    const served = await serveProcess({ SANDBOX_DB: ':memory:' })
    try {
      for (let i = 0; i < 3; i++) await timed(`${served.url}/vendor/agency/1001/client/1000/attachment?version=4.0`, { headers: { authorization: DEMO } })
      let res
      if (scenario === 'journal query') {
        res = await timed(`${served.url}/_sandbox/requests?path=${encodeURIComponent(glob)}`)
      } else {
        const added = await timed(`${served.url}/_sandbox/faults`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: { path: glob }, effect: { status: 503 } })
        })
        t.ok(added.status > 0 && added.status < 500, `the fault rule is accepted or refused at once (${added.status})`)
        res = await timed(`${served.url}/vendor/agency/1001/clients?version=4.0`, { headers: { authorization: DEMO } })
      }
      t.ok(res.status > 0, `${scenario} with path ${glob}: ${res.status === 0 ? `no answer in ${res.ms} ms` : `answered ${res.status} in ${res.ms} ms`}`)
      const health = await timed(`${served.url}/_sandbox/health`, {}, 2000)
      t.equal(health.status, 200, `${scenario}: health still answers (${health.status === 0 ? 'no answer' : health.status})`)
    } finally {
      served.child.kill('SIGKILL')
      await served.exited
    }
  }
})
