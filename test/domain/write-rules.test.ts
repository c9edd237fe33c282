import t from 'tap'
import { Ajv, type ValidateFunction } from 'ajv'
import type { TSchema } from '@sinclair/typebox'
import { ApiError } from '../../src/errors.js'
import {
  checkEffectiveDate, checkPeopleRules, pascalPath
} from '../../src/domain/write-rules.js'
import { decodeBase64Header } from '../../src/versions/attachment-headers.js'
import { compileItemValidator } from '../../src/domain/item-validator.js'
import { bindPart } from '../../src/schemas/bind.js'
import { LOB_CODES } from '../../src/schemas/lob.js'
import {
  AGENT_ROLES, AttachmentHeadersSchema, ClientCreateRequestSchema, LogCreateSchema, LogNoteBodySchema,
  ReceiptItemSchema, ReceiptSchema, ReceiptsBodySchema, SuspenseSchema, TASK_CREATE_ROLES, TaskSchema,
  V1AttachmentHeadersSchema, V1LogNoteBodySchema, type ClientCreateRequest, type PersonCreate
} from '../../src/schemas/writes.js'

/** The options Fastify's validator compiler uses, with the app's custom ones (allErrors, verbose). */
const ajv = new Ajv({ allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: true, verbose: true })
const compile = (schema: TSchema) => ajv.compile(schema as object)

/** A JSON body bound to its schema as the vendor pipeline binds it (faults left out). */
const bindKeys = (value: unknown, schema: TSchema, warnings: string[], at = '') => bindPart(value, schema, 'body', warnings, at).value

const GUID = '3f2504e0-4f89-11d3-9a0c-0305e82c3301'
const GUID2 = '9b2e6a4c-1d7f-4c3a-8e5b-2f6d0a1c9e47'
const TS = '2026-11-20T10:00:00Z'

/** `/people/0/firstName` → `people[0].firstName` */
function pointerPath (pointer: string): string {
  let out = ''
  for (const part of pointer.split('/').slice(1)) out = /^\d+$/.test(part) ? `${out}[${part}]` : out === '' ? part : `${out}.${part}`
  return out
}

/** Validates a copy (ajv mutates: coercion, removal) and returns the failing fields, PascalCase, deduplicated. */
function failing (validate: ValidateFunction, data: unknown): string[] {
  if (validate(structuredClone(data))) return []
  const fields = (validate.errors ?? []).map((e) => {
    const pointer = e.keyword === 'required' ? `${e.instancePath}/${String(e.params.missingProperty)}` : e.instancePath
    return pascalPath(pointerPath(pointer)) || '(body)'
  })
  return [...new Set(fields)]
}

/** The single field error of the 400 ApiError `fn` throws, or a description of what happened instead. */
function fieldErrorOf (fn: () => unknown): unknown {
  try {
    return { returned: fn() }
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 400 || e.errors?.length !== 1) return { threw: String(e) }
    return e.errors[0]
  }
}

/** A copy of `base` with the value at a dotted path (`people.0.firstName`) replaced; undefined deletes. */
function withValue<T> (base: T, path: string, value: unknown): T {
  const copy = structuredClone(base) as Record<string, unknown>
  const keys = path.split('.')
  let at: Record<string, unknown> = copy
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>
  const last = keys[keys.length - 1]
  if (value === undefined) delete at[last]
  else at[last] = value
  return copy as T
}

/** A create-client body that sets every field the schema knows. */
const fullClient = (): ClientCreateRequest => ({
  businessDetail: {
    businessType: 'LLC',
    companyName: 'Harbor Bakery LLC',
    dbaName: 'Harbor Bakes',
    feinNum: '123456789',
    licenseNum: 'LIC-0042',
    naics: '311811',
    website: 'https://harbor.example'
  },
  contacts: [{ type: 'HomePhone', value: '207-555-0100' }],
  log: { channel: 29, note: 'New client from the partner portal', policyId: GUID, ts: TS },
  mailingAddress: { address1: '12 Analytical Way', address2: 'Suite 1', city: 'Portland', state: 'ME', zip: '04101' },
  officeId: 1,
  people: [
    {
      firstName: 'Ada',
      lastName: 'Lovelace',
      mainContactType: 'First',
      dateOfBirth: '1985-12-10',
      driverLicenseNumber: 'D1234567',
      contacts: [{ type: 'HomeEmail', value: 'ada@example.com' }]
    },
    { firstName: 'William', lastName: 'King', mainContactType: 'Second', dateOfBirth: '1980-01-02T00:00:00' }
  ],
  policy: { applicationType: 'Personal', effectiveDate: '2026-12-01', loBs: ['AUTOP', 'HOME'], policyNumber: 'NEW-POL-0001', state: 'ME' },
  source: 'partner',
  status: 'Prospect',
  task: { assignedToRole: 'Csr', assignedToEmail: 'csr@example.com', category: 'Onboarding', description: 'Welcome call', dueDate: TS, title: 'Welcome' }
})

const person = (mainContactType: string): PersonCreate => ({ firstName: 'P', mainContactType } as PersonCreate)

t.test('every schema compiles under ajv as Fastify configures it (strict mode)', async (t) => {
  for (const [name, schema] of Object.entries({
    ClientCreateRequestSchema,
    LogNoteBodySchema,
    ReceiptSchema,
    ReceiptsBodySchema,
    AttachmentHeadersSchema,
    V1LogNoteBodySchema,
    V1AttachmentHeadersSchema,
    SuspenseSchema,
    TaskSchema,
    LogCreateSchema
  })) {
    t.doesNotThrow(() => compile(schema), name)
  }
  t.notOk(JSON.stringify(LogNoteBodySchema).includes('aliases'), 'aliases never reach ajv or the OpenAPI output')
  t.equal((LogNoteBodySchema.properties.channel as TSchema).aliases, undefined, 'channel has no alias: action is not channel in 3.0/4.0')
})

t.test('create client: a full valid body passes, PascalCase binds', async (t) => {
  const validate = compile(ClientCreateRequestSchema)
  t.same(failing(validate, fullClient()), [])
  t.same(failing(validate, { people: [{ mainContactType: 'First' }], log: { channel: 1, note: 'x', ts: TS } }), [], 'minimal body')
  const warnings: string[] = []
  const bound = bindKeys({
    People: [{ FirstName: 'Ada', MainContactType: 'First', Nickname: 'A' }],
    Log: { Channel: 29, Note: 'x', TS },
    Policy: { LOBs: ['AUTOP'] }
  }, ClientCreateRequestSchema, warnings)
  t.same(bound, { people: [{ firstName: 'Ada', mainContactType: 'First' }], log: { channel: 29, note: 'x', ts: TS }, policy: { loBs: ['AUTOP'] } })
  t.same(warnings, ['ignored unknown key people[0].Nickname'])
  t.same(failing(validate, bound), [])
  t.same(failing(validate, {}), ['Log', 'People'], 'Log and People are required')
})

t.test('create client: each max length at the limit passes, one past fails at its path', async (t) => {
  const validate = compile(ClientCreateRequestSchema)
  const cases: [string, number, string][] = [
    ['people.0.firstName', 14, 'People[0].FirstName'],
    ['people.0.lastName', 24, 'People[0].LastName'],
    ['people.0.driverLicenseNumber', 25, 'People[0].DriverLicenseNumber'],
    ['people.0.contacts.0.value', 128, 'People[0].Contacts[0].Value'],
    ['businessDetail.companyName', 60, 'BusinessDetail.CompanyName'],
    ['businessDetail.dbaName', 60, 'BusinessDetail.DBAName'],
    ['businessDetail.licenseNum', 30, 'BusinessDetail.LicenseNum'],
    ['businessDetail.naics', 6, 'BusinessDetail.NAICS'],
    ['businessDetail.website', 128, 'BusinessDetail.Website'],
    ['source', 14, 'Source'],
    ['log.note', 3000, 'Log.Note'],
    ['task.title', 50, 'Task.Title'],
    ['task.category', 50, 'Task.Category'],
    ['task.description', 4000, 'Task.Description'],
    ['mailingAddress.address1', 40, 'MailingAddress.Address1'],
    ['mailingAddress.address2', 40, 'MailingAddress.Address2'],
    ['mailingAddress.city', 19, 'MailingAddress.City'],
    ['mailingAddress.zip', 10, 'MailingAddress.Zip'],
    ['contacts.0.value', 128, 'Contacts[0].Value'],
    ['policy.policyNumber', 25, 'Policy.PolicyNumber']
  ]
  for (const [path, limit, field] of cases) {
    t.same(failing(validate, withValue(fullClient(), path, 'x'.repeat(limit))), [], `${field} of ${limit} passes`)
    t.same(failing(validate, withValue(fullClient(), path, 'x'.repeat(limit + 1))), [field], `${field} of ${limit + 1} fails`)
  }
  t.same(failing(validate, withValue(fullClient(), 'log.note', '')), ['Log.Note'], 'empty Log.Note fails')
  t.same(failing(validate, withValue(fullClient(), 'businessDetail.companyName', '')), ['BusinessDetail.CompanyName'], 'empty CompanyName fails')
})

t.test('create client: State exactly 2, FeinNum digits, OfficeId Int16', async (t) => {
  const validate = compile(ClientCreateRequestSchema)
  for (const path of ['mailingAddress.state', 'policy.state']) {
    const field = pascalPath(path)
    t.same(failing(validate, withValue(fullClient(), path, 'M')), [field], `${field} of 1 fails`)
    t.same(failing(validate, withValue(fullClient(), path, 'ME')), [], `${field} of 2 passes`)
    t.same(failing(validate, withValue(fullClient(), path, 'MEX')), [field], `${field} of 3 fails`)
  }
  const fein = (v: string) => failing(validate, withValue(fullClient(), 'businessDetail.feinNum', v))
  t.same(fein('123456789'), [])
  t.same(fein('1'), [])
  t.same(fein('1234567890'), ['BusinessDetail.FeinNum'])
  t.same(fein('12-345678'), ['BusinessDetail.FeinNum'])
  t.same(fein(''), ['BusinessDetail.FeinNum'])
  const office = (v: number) => failing(validate, withValue(fullClient(), 'officeId', v))
  t.same([office(0), office(1), office(32767), office(32768)], [['OfficeId'], [], [], ['OfficeId']])
})

t.test('create client: item counts', async (t) => {
  const validate = compile(ClientCreateRequestSchema)
  const people = (n: number) => Array.from({ length: n }, (_, i) => person(i === 0 ? 'First' : 'Other'))
  t.same(failing(validate, withValue(fullClient(), 'people', people(0))), ['People'], '0 people fails')
  t.same(failing(validate, withValue(fullClient(), 'people', people(1))), [], '1 person passes')
  t.same(failing(validate, withValue(fullClient(), 'people', people(11))), [], '11 people pass')
  t.same(failing(validate, withValue(fullClient(), 'people', people(12))), ['People'], '12 people fail')

  const contacts = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'OtherPhone', value: `555-010${i}` }))
  t.same(failing(validate, withValue(fullClient(), 'contacts', contacts(5))), [], '5 client contacts pass')
  t.same(failing(validate, withValue(fullClient(), 'contacts', contacts(6))), ['Contacts'], '6 client contacts fail')
  t.same(failing(validate, withValue(fullClient(), 'people.0.contacts', contacts(5))), [], '5 person contacts pass')
  t.same(failing(validate, withValue(fullClient(), 'people.0.contacts', contacts(6))), ['People[0].Contacts'], '6 person contacts fail')

  t.same(failing(validate, withValue(fullClient(), 'policy.loBs', LOB_CODES.slice(0, 12))), [], '12 LOBs pass')
  t.same(failing(validate, withValue(fullClient(), 'policy.loBs', LOB_CODES.slice(0, 13))), ['Policy.LOBs'], '13 LOBs fail')
  t.same(failing(validate, withValue(fullClient(), 'policy.loBs', ['AUTOP', 'NOPE'])), ['Policy.LOBs[1]'], 'unknown LOB code fails at its index')
})

t.test('create client: enumerations', async (t) => {
  const validate = compile(ClientCreateRequestSchema)
  const cases: [string, string, string][] = [
    ['businessDetail.businessType', 'FamilyTrust', 'Corp'],
    ['status', 'DeadFile', 'Customer'],
    ['contacts.0.type', 'SocialMedia', 'Email'],
    ['people.1.mainContactType', 'Other', 'Primary'],
    ['policy.applicationType', 'Platform', 'Auto'],
    ['task.assignedToRole', 'Agent3', 'Boss']
  ]
  for (const [path, good, bad] of cases) {
    const field = pascalPath(path.replace(/\.(\d+)/g, '[$1]'))
    t.same(failing(validate, withValue(fullClient(), path, good)), [], `${field} ${good} passes`)
    t.same(failing(validate, withValue(fullClient(), path, bad)), [field], `${field} ${bad} fails`)
    t.same(failing(validate, withValue(fullClient(), path, good.toLowerCase())), [field], `${field} is case-sensitive`)
  }
  for (const role of [...TASK_CREATE_ROLES, 'CSR']) {
    t.same(failing(validate, withValue(fullClient(), 'task.assignedToRole', role)), [], `create-client task role ${role}`)
  }
  const task = compile(TaskSchema)
  for (const role of [...AGENT_ROLES, 'Csr']) {
    t.same(failing(task, { assignedToRole: role, description: 'd', dueDate: TS, title: 't' }), [], `write task role ${role}`)
  }
})

t.test('create client: EffectiveDate on or after 1970-01-01 (code rule)', async (t) => {
  t.same(checkEffectiveDate({ effectiveDate: '1970-01-01' }), [])
  t.same(checkEffectiveDate({ effectiveDate: '1970-01-01T00:00:00' }), [])
  t.same(checkEffectiveDate({ effectiveDate: '1969-12-31' }), [{ field: 'Policy.EffectiveDate', message: 'must be on or after 1970-01-01' }])
  t.match(checkEffectiveDate({ effectiveDate: '2023-02-29' }), [{ field: 'Policy.EffectiveDate', message: /real calendar date/ }])
  t.same(checkEffectiveDate({}), [], 'absent')
  t.same(checkEffectiveDate({ effectiveDate: 'soon' }), [], 'a malformed value is left to the schema')
  const validate = compile(ClientCreateRequestSchema)
  t.same(failing(validate, withValue(fullClient(), 'policy.effectiveDate', '1969-12-31')), [], 'the schema alone accepts 1969')
  t.same(failing(validate, withValue(fullClient(), 'policy.effectiveDate', '2026-12-01T00:00:00')), [], 'a time part is accepted')
  t.same(failing(validate, withValue(fullClient(), 'policy.effectiveDate', '12/01/2026')), ['Policy.EffectiveDate'])
  t.same(failing(validate, withValue(fullClient(), 'people.0.dateOfBirth', '1985-12-10T00:00:00Z')), [], 'DateOfBirth with a time')
  t.same(failing(validate, withValue(fullClient(), 'people.0.dateOfBirth', '10 Dec 1985')), ['People[0].DateOfBirth'])
})

t.test('create client: exactly one First, at most one Second (code rule)', async (t) => {
  t.same(checkPeopleRules([person('First')]), [], '1 First')
  t.same(checkPeopleRules([person('First'), person('Second'), person('Other')]), [], '1 First and 1 Second')
  t.same(checkPeopleRules([person('Other'), person('Second')]), [
    { field: 'People', message: 'exactly one person must have MainContactType First; found 0' }
  ], '0 First')
  t.same(checkPeopleRules([person('First'), person('Other'), person('None'), person('First')]), [
    { field: 'People', message: 'exactly one person must have MainContactType First; found 2 (People[0], People[3])' }
  ], '2 First')
  t.same(checkPeopleRules([person('First'), person('Second'), person('Second')]), [
    { field: 'People', message: 'at most one person may have MainContactType Second; found 2 (People[1], People[2])' }
  ], '2 Second')
  t.equal(checkPeopleRules([person('Second'), person('Second')]).length, 2, 'both faults at once')
  t.same(checkPeopleRules([]), [], 'an empty list is the schema\'s fault (minItems)')
})

t.test('version 1 log note', async (t) => {
  const validate = compile(V1LogNoteBodySchema)
  const body = {
    action: 29,
    body: 'Called',
    description: 'Call',
    policyIndex: 0,
    refId: GUID,
    ts: TS,
    suspense: { category: 'Follow-up', dueDate: TS, suspendedFor: 'CSR', suspendedForInitials: 'ABC' }
  }
  t.same(failing(validate, body), [])
  t.same(failing(validate, withValue(body, 'description', 'x'.repeat(140))), [])
  t.same(failing(validate, withValue(body, 'description', 'x'.repeat(141))), ['Description'])
  t.same(failing(validate, withValue(body, 'body', 'x'.repeat(3000))), [])
  t.same(failing(validate, withValue(body, 'body', 'x'.repeat(3001))), ['Body'])
  t.same(failing(validate, withValue(body, 'body', '')), ['Body'])
  t.same(failing(validate, withValue(body, 'action', 57)), ['Action'])
  t.same(failing(validate, withValue(body, 'policyIndex', -1)), ['PolicyIndex'])
  t.same(failing(validate, withValue(body, 'suspense.suspendedForInitials', 'ABCD')), ['Suspense.SuspendedForInitials'])
  t.same(failing(validate, withValue(body, 'suspense.suspendedFor', 'Boss')), ['Suspense.SuspendedFor'])
  t.same(failing(validate, withValue(body, 'suspense.dueDate', undefined)), ['Suspense.DueDate'])
  t.same(failing(validate, { action: 1, body: 'b', description: 'd', refId: GUID, ts: TS }), [], 'without optional fields')
})

t.test('log note (4.0/3.0): channel range, no alias, no maximum on Note', async (t) => {
  const validate = compile(LogNoteBodySchema)
  const note = { channel: 29, note: '<p>Called about renewal</p>', refId: GUID, ts: TS }
  for (const [channel, ok] of [[0, false], [1, true], [56, true], [57, false]] as const) {
    t.same(failing(validate, { ...note, channel }), ok ? [] : ['Channel'], `channel ${channel}`)
  }
  t.same(failing(validate, { ...note, note: 'x'.repeat(10_000) }), [], 'a long note passes')
  t.same(failing(validate, { ...note, note: '' }), ['Note'])
  t.same(failing(validate, { ...note, refId: 'not-a-guid', ts: 'tomorrow' }), ['RefId', 'TS'])
  t.same(failing(validate, { ...note, task: { assignedToRole: 'CSR', description: 'd', dueDate: TS, title: 't' }, policyId: GUID2 }), [])

  const warnings: string[] = []
  const bound = bindKeys({ Action: 33, NOTE: 'n', RefId: GUID, TS }, LogNoteBodySchema, warnings)
  t.same(bound, { note: 'n', refId: GUID, ts: TS }, 'action is not channel: it is ignored')
  t.same(warnings, ['ignored unknown key Action'])
  t.same(failing(validate, bound), ['Channel'])
  t.same(bindKeys({ action: 1, Note: 'n', ts: TS }, LogCreateSchema, []), { note: 'n', ts: TS }, 'create-client Log too')
  for (const body of [{ channel: 1, action: 2 }, { action: 2, channel: 1 }]) {
    const both: string[] = []
    t.same(bindKeys(body, LogNoteBodySchema, both), { channel: 1 }, 'channel binds whatever the key order')
    t.same(both, ['ignored unknown key action'])
  }
})

t.test('receipts: body array bounds; items validated one by one', async (t) => {
  const body = compile(ReceiptsBodySchema)
  t.equal(body([]), false, '0 items')
  t.equal(body([{}]), true, '1 item (items are checked later)')
  t.equal(body(Array.from({ length: 100 }, () => ({}))), true, '100 items')
  t.equal(body(Array.from({ length: 101 }, () => ({}))), false, '101 items')
  t.equal(body({ refId: GUID }), false, 'an object is not an array')

  const check = compileItemValidator(ReceiptItemSchema)
  const receipt = {
    channel: 4,
    invoices: [{ invoiceId: GUID, amount: 50.25 }],
    logNote: 'Payment by card',
    officeId: 1,
    payMethod: 'Check',
    policyId: GUID2,
    refId: GUID,
    ts: TS,
    total: 50.25,
    task: { assignedToRole: 'SpecifiedUser', assignedToEmail: 'a@example.com', description: 'd', dueDate: TS, title: 't' }
  }
  t.same(check(receipt), [])
  t.same(check({ channel: 1, logNote: 'n', refId: GUID, ts: TS, total: 1 }), [], 'only required fields')
  t.same(check({ channel: 1, logNote: 'n', refId: GUID, ts: TS }), [{ field: 'Total', message: 'is required' }], 'total is required')
  t.same(check({ ...receipt, invoices: [{ invoiceId: GUID, amount: -1 }] }), [{ field: 'Invoices[0].Amount', message: 'must be greater than 0' }])
  t.same(check({ ...receipt, invoices: [{ invoiceId: GUID, amount: 0 }] }), [{ field: 'Invoices[0].Amount', message: 'must be greater than 0' }])
  t.same(check({ ...receipt, invoices: [{ amount: 1 }] }), [{ field: 'Invoices[0].InvoiceId', message: 'is required' }])
  t.same(check({ ...receipt, logNote: undefined }), [{ field: 'LogNote', message: 'is required' }], 'one message for a missing field')
  t.same(check({ ...receipt, logNote: '' }), [{ field: 'LogNote', message: 'must not be empty' }])
  t.same(check({ ...receipt, payMethod: 'x'.repeat(51) }), [{ field: 'PayMethod', message: 'must be at most 50 characters' }])
  t.same(check({ ...receipt, payMethod: 'x'.repeat(50) }), [])
  t.same(check({ ...receipt, channel: 57 }), [{ field: 'Channel', message: 'must be at most 56' }])
  t.same(check({ ...receipt, channel: 1.5 }), [{ field: 'Channel', message: 'must be an integer' }])
  t.same(check({ ...receipt, officeId: 0 }), [{ field: 'OfficeId', message: 'must be at least 1' }])
  t.same(check({ ...receipt, total: '50' }), [{ field: 'Total', message: 'must be a number' }])
  t.match(check({ ...receipt, refId: 'x' }), [{ field: 'RefId', message: /^must be a UUID/ }])
  t.match(check({ ...receipt, ts: 'yesterday' }), [{ field: 'TS', message: /^must be ISO 8601/ }])
  t.same(check({ ...receipt, task: { ...receipt.task, assignedToRole: 'Boss' } }), [
    { field: 'Task.AssignedToRole', message: 'must be one of SpecifiedUser, Producer, CSR, Agent1, Agent2, Agent3, Csr' }
  ], 'a union of literals is one message')
  t.same(check({ ...receipt, task: { assignedToRole: 'Producer' } }), [
    { field: 'Task.Description', message: 'is required' },
    { field: 'Task.DueDate', message: 'is required' },
    { field: 'Task.Title', message: 'is required' }
  ])
  t.same(check({ ...receipt, invoices: {} }), [{ field: 'Invoices', message: 'must be a JSON array' }])
  t.same(check({ ...receipt, surprise: 1 }), [{ field: 'Surprise', message: 'is not a known field' }])
  t.same(check(null), [{ field: '(item)', message: 'must be a JSON object' }])
  t.same(compileItemValidator(ReceiptItemSchema, '(receipt)')('x'), [{ field: '(receipt)', message: 'must be a JSON object' }])

  const bound = bindKeys({ RefId: GUID, TS, Channel: 4, LogNote: 'n', Invoices: [{ InvoiceID: GUID, AMOUNT: 1 }], Total: 1 }, ReceiptItemSchema, [])
  t.same(check(bound), [], 'a PascalCase receipt binds')
})

t.test('attachment headers', async (t) => {
  const v4 = compile(AttachmentHeadersSchema)
  const headers = {
    'content-type': 'application/octet-stream',
    channel: '33',
    desc: 'ZA==',
    fileext: 'pdf',
    filename: 'Zg==',
    lognote: 'bg==',
    refid: GUID,
    ts: TS
  }
  t.same(failing(v4, headers), [], 'other HTTP headers are allowed')
  t.same(failing(v4, { ...headers, policyid: GUID2, taskassignedto: 'CSR', tasktitle: 'dA==' }), [])
  for (const [channel, ok] of [['0', false], ['1', true], ['9', true], ['10', true], ['49', true], ['56', true], ['57', false], ['09', false], ['1x', false]] as const) {
    t.same(failing(v4, { ...headers, channel }), ok ? [] : ['Channel'], `channel ${channel}`)
  }
  t.same(failing(v4, { ...headers, refid: undefined, ts: 'now', policyid: 'p' }).sort(), ['Policyid', 'Refid', 'TS'])
  for (const name of ['desc', 'fileext', 'filename', 'lognote']) {
    t.not(failing(v4, withValue(headers, name, undefined)).length, 0, `${name} is required`)
  }

  const v1 = compile(V1AttachmentHeadersSchema)
  const h1 = {
    action: '29',
    desc: 'ZA==',
    fileext: 'txt',
    filename: 'Zg==',
    logbody: 'Yg==',
    logdescription: 'ZA==',
    refid: GUID,
    suspendedfor: 'Producer',
    suspendedforinitials: 'ABC',
    suspensecategory: 'Yw==',
    suspenseduedate: TS,
    ts: TS
  }
  t.same(failing(v1, h1), [])
  t.same(failing(v1, { ...h1, policyindex: '2' }), [])
  t.same(failing(v1, { ...h1, policyindex: '-2' }), ['Policyindex'])
  for (const name of Object.keys(h1)) t.not(failing(v1, withValue(h1, name, undefined)).length, 0, `v1 ${name} is required`)
})

t.test('decodeBase64Header', async (t) => {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
  t.equal(decodeBase64Header('FileName', b64('application signée')), 'application signée')
  t.equal(decodeBase64Header('Desc', ''), '')
  t.equal(decodeBase64Header('Desc', 'YWJj'), 'abc')
  t.equal(decodeBase64Header('Desc', 'YWI='), 'ab')
  t.equal(decodeBase64Header('Desc', 'YQ=='), 'a')
  // .NET's Convert.FromBase64String refuses a length that is not a multiple of 4.
  for (const unpadded of ['YWI', 'YQ', 'abc', 'YWJjZA']) {
    t.same(fieldErrorOf(() => decodeBase64Header('Desc', unpadded)),
      { field: 'Desc', message: "must be padded base64: its length must be a multiple of 4, so add the '=' padding" },
      `padding is required: ${unpadded}`)
  }
  t.equal(decodeBase64Header('Desc', b64('<p>ünïcødé ✓</p>')), '<p>ünïcødé ✓</p>')
  for (const bad of ['###', '***', 'abcde', 'YW Jj', 'YWJj\n', 'YWI==', 'YQ=', '-_-_', 'abc=']) {
    t.same(fieldErrorOf(() => decodeBase64Header('Desc', bad)), { field: 'Desc', message: 'must be base64 (UTF-8 text)' },
      `rejects ${JSON.stringify(bad)}`)
  }
})

t.test('pascalPath', async (t) => {
  const cases: [string, string][] = [
    ['people[2].lastName', 'People[2].LastName'],
    ['policy.loBs[1]', 'Policy.LOBs[1]'],
    ['businessDetail.feinNum', 'BusinessDetail.FeinNum'],
    ['businessDetail.dbaName', 'BusinessDetail.DBAName'],
    ['businessDetail.naics', 'BusinessDetail.NAICS'],
    ['ts', 'TS'],
    ['log.ts', 'Log.TS'],
    ['refId', 'RefId'],
    ['policyId', 'PolicyId'],
    ['invoices[0].amount', 'Invoices[0].Amount'],
    ['[3].refId', '[3].RefId'],
    ['(body)', '(body)'],
    ['People[0].FirstName', 'People[0].FirstName']
  ]
  for (const [from, to] of cases) t.equal(pascalPath(from), to, from)
})
