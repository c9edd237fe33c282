import { Ajv, type ValidateFunction } from 'ajv'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { AGENCY, DEMO, basic, build } from '../helpers/app.js'
import { INCLUDE_SUBSETS } from '../helpers/typed-client-answers.js'
import { attachment, createClientBody, logNote, receipt, v1AttachmentHeaders } from '../helpers/writes.js'

/**
 * [B: Errors in the OpenAPI documents] The documents say what is served: every answer of every
 * version, successes and errors (400, 401, 403 of both kinds, 404, 409, 413, 415, 429 from the
 * create-client rate and from a fault rule, 503 from a fault rule), has its status declared on
 * its operation, its content type among the status's, and its body valid against the schema
 * declared for it. The bodies are checked twice: as declared, and with every open object closed
 * (additionalProperties false), so that a field an answer carries and the document leaves out is
 * a failure too.
 */

const ROW = '[B: Errors in the OpenAPI documents]'
type Json = Record<string, any>
type DocName = '4.0' | '3.0' | '1'

interface Served {
  doc: DocName
  method: 'get' | 'post'
  /** The document's path template. */
  path: string
  status: number
  contentType: string
  body: string
  label: string
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A copy of the document in which every open object with properties is closed. */
function closed (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed)
  if (!isObject(node)) return node
  const out: Json = {}
  for (const [k, v] of Object.entries(node)) out[k] = closed(v)
  if (isObject(out.properties) && out.additionalProperties === true) out.additionalProperties = false
  return out
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

/** Checks served answers against the documents, as declared (`strict` false) or closed. */
class Checker {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false })
  private readonly compiled = new Map<string, ValidateFunction>()

  constructor (readonly docs: Record<DocName, Json>, readonly strict: boolean) {
    for (const [name, doc] of Object.entries(docs)) this.ajv.addSchema(strict ? closed(doc) as Json : doc, `doc-${name}${strict ? '-closed' : ''}`)
  }

  problems (s: Served): string[] {
    const where = `${s.label} (${s.doc} ${s.method.toUpperCase()} ${s.path} ${s.status})`
    const op = this.docs[s.doc].paths[s.path]?.[s.method]
    if (op === undefined) return [`${where}: no such operation in the document`]
    const response = op.responses[String(s.status)]
    if (response === undefined) return [`${where}: status not declared (declared: ${Object.keys(op.responses).join(', ')})`]
    const type = s.contentType.split(';')[0].trim()
    if (s.body === '' && response.content === undefined) return []
    const media = response.content?.[type]
    if (media === undefined) return [`${where}: content type ${type} not declared (declared: ${Object.keys(response.content ?? {}).join(', ')})`]
    const key = `${s.doc} ${s.path} ${s.method} ${s.status} ${type}`
    let validate = this.compiled.get(key)
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `doc-${s.doc}${this.strict ? '-closed' : ''}#/${pointer('paths', s.path, s.method, 'responses', String(s.status), 'content', type, 'schema')}` })
      this.compiled.set(key, validate)
    }
    const value = type === 'text/plain' ? s.body : JSON.parse(s.body)
    if (validate(value)) return []
    return (validate.errors ?? []).map((e) => `${where}: ${e.instancePath.replace(/\/\d+/g, '/*')} ${e.message} ${JSON.stringify(e.params)}`)
  }
}

const template = (path: string) => path.replace(/\/agency\/\d+/, '/agency/{agencyId}').replace(/\/client\/\d+/, '/client/{clientId}')

/** Serves requests and keeps each answer with its operation. */
class Recorder {
  readonly served: Served[] = []
  constructor (private readonly app: FastifyInstance) {}

  async call (label: string, doc: DocName, method: 'GET' | 'POST', path: string, options: { query?: string, payload?: unknown, headers?: Record<string, string> } = {}): Promise<Served> {
    const query = [doc === '1' ? '' : `version=${doc}`, options.query ?? ''].filter((q) => q !== '').join('&')
    const res = await this.app.inject({
      method,
      url: `${path}${query === '' ? '' : `?${query}`}`,
      headers: { authorization: DEMO, ...options.headers },
      ...(options.payload === undefined ? {} : { payload: options.payload as object })
    })
    const served: Served = {
      doc, method: method === 'GET' ? 'get' : 'post', path: template(path), status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), body: res.body, label
    }
    this.served.push(served)
    return served
  }
}

const A = `/vendor/agency/${AGENCY.main}`

/** Every operation of every version, answered 200 (and 202 for writes to a disconnected agency). */
async function successes (r: Recorder, created: number[]): Promise<void> {
  const someClient = 1000
  for (const doc of ['4.0', '3.0', '1'] as const) {
    await r.call('agencies', doc, 'GET', '/vendor/agencies')
    await r.call('offices', doc, 'GET', `${A}/offices`)
    await r.call('changed clients', doc, 'GET', `${A}/clients`)
    const numbers = [someClient, 1001, 1002, ...created]
    for (const n of numbers) await r.call(`client ${n}`, doc, 'GET', `${A}/client/${n}`, { query: doc === '1' ? '' : `include=${INCLUDE_SUBSETS.at(-1)}` })
    await r.call('batch', doc, 'POST', `${A}/clients`, { payload: doc === '1' ? numbers : { clientNumbers: numbers } })
    if (doc !== '1') {
      await r.call('search', doc, 'GET', `${A}/clients/search`, { query: 'policyNumber=NEW-POL-0001' })
      for (const include of INCLUDE_SUBSETS) await r.call(`batch ${include}`, doc, 'POST', `${A}/clients`, { query: `include=${include}`, payload: { clientNumbers: numbers } })
      await r.call('log note', doc, 'POST', `${A}/client/${someClient}/log`, { payload: logNote() })
      await r.call('receipts', doc, 'POST', `${A}/client/${someClient}/receipts`, { payload: [receipt(), { ...receipt(), total: undefined }] })
      const file = attachment(Buffer.from('%PDF-1.4 answers'))
      await r.call('attachment', doc, 'POST', `${A}/client/${someClient}/attachment`, { headers: file.headers, payload: file.payload })
      await r.call('pending log note', doc, 'POST', `/vendor/agency/${AGENCY.disconnected}/client/1000/log`, { payload: logNote() })
      await r.call('pending receipts', doc, 'POST', `/vendor/agency/${AGENCY.disconnected}/client/1000/receipts`, { payload: [receipt()] })
    } else {
      await r.call('v1 log note', doc, 'POST', `${A}/client/${someClient}`, { payload: { Action: 1, Body: 'b', Description: 'd', RefId: randomUUID(), TS: '2026-11-20T10:00:00Z' } })
      await r.call('v1 attachment', doc, 'POST', `${A}/client/${someClient}/attachment`, { headers: v1AttachmentHeaders(), payload: attachment(Buffer.from('scan')).payload })
    }
  }
  await r.call('users', '4.0', 'GET', `${A}/users`)
  await r.call('create client', '4.0', 'POST', `${A}/client`, { payload: createClientBody() })
}

/** Every kind of error each version answers. */
async function errors (app: FastifyInstance, r: Recorder): Promise<void> {
  const wrong = { authorization: basic('abc', 'wrong') }
  for (const doc of ['4.0', '3.0', '1'] as const) {
    await r.call('401', doc, 'GET', `${A}/client/1000`, { headers: wrong })
    await r.call('401 agencies', doc, 'GET', '/vendor/agencies', { headers: wrong })
    await r.call('403 agency', doc, 'GET', `/vendor/agency/${AGENCY.optedOut}/client/1000`)
    await r.call('403 agency offices', doc, 'GET', '/vendor/agency/9999/offices')
    await r.call('404', doc, 'GET', `${A}/client/999999`)
    await r.call('400 asOf', doc, 'GET', `${A}/clients`, { query: 'asOf=yesterday' })
    await r.call('400 batch', doc, 'POST', `${A}/clients`, { payload: doc === '1' ? ['x'] : { clientNumbers: 'x' } })
    await r.call('415', doc, 'POST', `${A}/clients`, { payload: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    await r.call('413', doc, 'POST', `${A}/clients`, { payload: JSON.stringify({ clientNumbers: [1], pad: 'x'.repeat(1_100_000) }), headers: { 'content-type': 'application/json' } })
    const note = logNote()
    const logPath = doc === '1' ? `${A}/client/1000` : `${A}/client/1000/log`
    const first = doc === '1' ? { Action: 1, Body: 'b', Description: 'd', RefId: note.refId, TS: note.ts } : note
    await r.call('log note', doc, 'POST', logPath, { payload: first })
    await r.call('409', doc, 'POST', logPath, { payload: doc === '1' ? { ...first, Body: 'other' } : { ...note, note: 'other' } })
    await r.call('404 write', doc, 'POST', logPath.replace('/client/1000', '/client/999999'), { payload: first })
  }
  await r.call('403 scope', '4.0', 'GET', `/vendor/agency/${AGENCY.limited}/users`)
  await r.call('403 scope create', '4.0', 'POST', `/vendor/agency/${AGENCY.limited}/client`, { payload: createClientBody() })
  await r.call('400 create', '4.0', 'POST', `${A}/client`, { payload: createClientBody({ People: [] }) })
  // the create-client rate: 30 at once, of which 25 at most are created in that second
  await Promise.all(Array.from({ length: 30 }, () => r.call('create at the rate', '4.0', 'POST', `${A}/client`, { payload: createClientBody({ Policy: undefined }) })))
  // fault rules: 503 and 429 on reads, with the sandbox's problem body
  for (const status of [503, 429]) {
    const rule = await app.inject({ method: 'POST', url: '/_sandbox/faults', payload: { match: { path: '/vendor/**' }, effect: { status }, times: 11 } })
    if (rule.statusCode >= 300) throw new Error(rule.body)
    for (const doc of ['4.0', '3.0', '1'] as const) {
      await r.call(`fault ${status}`, doc, 'GET', '/vendor/agencies')
      await r.call(`fault ${status}`, doc, 'GET', `${A}/client/1000`)
      await r.call(`fault ${status}`, doc, 'POST', `${A}/clients`, { payload: doc === '1' ? [1000] : { clientNumbers: [1000] } })
    }
    await r.call(`fault ${status}`, '4.0', 'GET', `${A}/offices`)
    await r.call(`fault ${status}`, '4.0', 'GET', `${A}/users`)
    await app.inject({ method: 'DELETE', url: '/_sandbox/faults' })
  }
}

async function documents (app: FastifyInstance): Promise<Record<DocName, Json>> {
  const docs: Partial<Record<DocName, Json>> = {}
  for (const name of ['4.0', '3.0', '1'] as const) docs[name] = (await app.inject({ url: `/openapi/${name}.json` })).json()
  return docs as Record<DocName, Json>
}

t.test(`${ROW} every answer, errors included, is declared with its status, content type and schema, and carries no field the document leaves out`, async (t) => {
  const app = await build(t)
  const r = new Recorder(app)
  const created: number[] = []
  for (const body of [
    createClientBody(),
    createClientBody({ People: [{ MainContactType: 'First', DriverLicenseNumber: 'D1' }], Policy: { LOBs: ['AUTOP'] } }),
    createClientBody({ BusinessDetail: { BusinessType: 'LLC', CompanyName: 'Harbor LLC', DbaName: 'Harbor', FeinNum: '123456789', LicenseNum: 'L-1', Naics: '114112', Website: 'harbor.example' } })
  ]) {
    const res = await app.inject({ method: 'POST', url: `${A}/client?version=4.0`, headers: { authorization: DEMO }, payload: body })
    created.push(res.json().clientNumber)
  }
  await successes(r, created)
  await errors(app, r)
  const docs = await documents(app)
  for (const strict of [false, true]) {
    const checker = new Checker(docs, strict)
    const problems = r.served.flatMap((s) => checker.problems(s))
    // each kind once: the same departure in many answers (or many items of one) is one line
    const kinds = [...new Set(problems.map((p) => p.replace(/^[^(]*/, '')))]
    t.same(kinds.slice(0, 30), [], `${strict ? 'closed' : 'as declared'}: ${r.served.length} answers, ${problems.length} problems`)
  }
  const seen = (status: number, type: string) => r.served.some((s) => s.status === status && s.contentType.startsWith(type))
  for (const [status, type] of [[200, 'application/json'], [200, 'text/plain'], [202, 'text/plain'], [202, 'application/json'], [400, 'application/problem+json'],
    [401, 'text/plain'], [403, 'text/plain'], [403, 'application/problem+json'], [404, 'application/problem+json'], [409, 'application/problem+json'],
    [413, 'application/problem+json'], [415, 'application/problem+json'], [429, 'application/problem+json'], [503, 'application/problem+json']] as const) {
    t.ok(seen(status, type), `a ${status} ${type} answer was checked`)
  }
  t.ok(r.served.some((s) => s.status === 429 && s.label === 'create at the rate'), 'the create-client rate answered 429')
})

t.test(`${ROW} nothing an operation cannot answer, an operationId per operation, closed sets of strings as enum`, async (t) => {
  const app = await build(t)
  const docs = await documents(app)
  const control = (await app.inject({ url: '/openapi/control.json' })).json() as Json
  for (const [name, doc] of [...Object.entries(docs), ['control', control]] as [string, Json][]) {
    const ids: string[] = []
    for (const ops of Object.values(doc.paths as Json)) for (const op of Object.values(ops as Json)) ids.push((op as Json).operationId)
    t.ok(ids.every((id) => typeof id === 'string' && /^[a-zA-Z][A-Za-z0-9]*$/.test(id)), `${name}: every operation has an operationId`)
    t.equal(new Set(ids).size, ids.length, `${name}: ${ids.length} operationIds, each once`)
    const text = JSON.stringify(doc)
    t.notMatch(text, /"anyOf":\[\{"type":"string","enum":\["[^"]*"\]\},\{"type":"string","enum"/, `${name}: no anyOf of single strings`)
  }
  const v4 = docs['4.0'].paths
  t.same(Object.keys(v4['/vendor/agency/{agencyId}/client/{clientId}'].get.responses).sort(), ['200', '400', '401', '403', '404', '429', '503'], 'get client: no 409, no 413')
  t.same(Object.keys(v4['/vendor/agencies'].get.responses).sort(), ['200', '400', '401', '429', '503'], 'the agencies listing names no agency: no 403, no 404')
  t.same(Object.keys(v4['/vendor/agency/{agencyId}/offices'].get.responses[403].content), ['text/plain'], 'offices need no scope: the agency sentence only')
  t.same(Object.keys(v4['/vendor/agency/{agencyId}/client/{clientId}'].get.responses[403].content).sort(), ['application/problem+json', 'text/plain'])
  t.notOk('409' in v4['/vendor/agency/{agencyId}/client/{clientId}/receipts'].post.responses, 'receipts answer a used RefId per item, inside a 200')
  t.equal(docs['4.0'].components.schemas.Contact.properties.type.enum.length, 14, 'ContactType is an enum of 14')
  t.match(docs['4.0'].components.schemas.AdditionalInterest.properties, { type: { type: 'string' }, name: { type: 'string' }, loanNumber: { type: 'string' }, vehicleNumber: { type: 'integer' } })
  t.match(docs['4.0'].components.schemas.Driver.properties, { personId: {}, firstName: {}, lastName: {}, relationship: {}, personalInfo: {}, licenseNumber: {}, licenseState: {} })
})
