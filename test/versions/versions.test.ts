import { Type, type TSchema } from '@sinclair/typebox'
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { AgencyUserSchema } from '../../src/schemas/agency.js'
import { ClientSchema } from '../../src/schemas/client.js'
import { V1ClientSchema, toV1Client } from '../../src/versions/clients.js'
import { V1PolicySchema } from '../../src/versions/v1-policy.js'
import { agencyListSchema } from '../../src/versions/agencies.js'
import { officeListSchema } from '../../src/versions/offices.js'
import { API_VERSIONS } from '../../src/versions/index.js'
import { OPERATIONS, operationsOf, type OperationId } from '../../src/versions/operations.js'
import { clientToRow } from '../../src/domain/world.js'
import { AGENCY, DEMO, build, demoFixture, schemaErrors } from '../helpers/app.js'
import { attachment, b64, createClientBody, logNote, receipt, v1AttachmentHeaders } from '../helpers/writes.js'

const auth = { authorization: DEMO }
const agency = (id: number) => demoFixture().agencies.find((a) => a.agencyId === id)!
const live = (id: number) => agency(id).clients.filter((c) => !c.deleted)
const withQ = (path: string, version: string) => (version === '1' ? path : `${path}${path.includes('?') ? '&' : '?'}version=${version}`)

type Op = { name: string; method: 'GET' | 'POST'; path: string; payload?: (v: string) => unknown; headers?: Record<string, string>; ok: number[]; schema?: (v: string) => TSchema }

t.test('version matrix: every (version, operation) pair exists or is 404, and answers its schema', async (t) => {
  const app = await build(t)
  const c = live(AGENCY.main)[0]
  const file = attachment(Buffer.from('%PDF-1.4'))
  const v1File = v1AttachmentHeaders()
  const ops: Op[] = [
    { name: 'agencies', method: 'GET', path: '/vendor/agencies', ok: [200], schema: (v) => agencyListSchema[v as '4.0'] },
    { name: 'offices', method: 'GET', path: `/vendor/agency/${AGENCY.main}/offices`, ok: [200], schema: (v) => officeListSchema[v as '4.0'] },
    { name: 'changed clients', method: 'GET', path: `/vendor/agency/${AGENCY.main}/clients`, ok: [200], schema: () => Type.Array(Type.Integer()) },
    { name: 'client', method: 'GET', path: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}`, ok: [200], schema: (v) => (v === '1' ? V1ClientSchema : ClientSchema) },
    { name: 'client list', method: 'POST', path: `/vendor/agency/${AGENCY.main}/clients`, payload: (v) => (v === '1' ? [c.clientNumber] : { clientNumbers: [c.clientNumber] }), ok: [200], schema: (v) => Type.Array(v === '1' ? V1ClientSchema : ClientSchema) },
    { name: 'search', method: 'GET', path: `/vendor/agency/${AGENCY.main}/clients/search?policyNumber=${c.policies![0].policyNumber}`, ok: [200], schema: () => Type.Array(ClientSchema) },
    { name: 'users', method: 'GET', path: `/vendor/agency/${AGENCY.main}/users`, ok: [200], schema: () => Type.Array(AgencyUserSchema) },
    { name: 'log note', method: 'POST', path: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/log`, payload: () => logNote(), ok: [200] },
    { name: 'v1 log note', method: 'POST', path: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}`, payload: () => ({ Action: 1, Body: 'b', Description: 'd', RefId: randomUUID(), TS: '2026-11-20T10:00:00Z' }), ok: [200] },
    { name: 'attachment', method: 'POST', path: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/attachment`, ok: [200] },
    { name: 'receipts', method: 'POST', path: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/receipts`, payload: () => [receipt()], ok: [200] },
    { name: 'create client', method: 'POST', path: `/vendor/agency/${AGENCY.main}/client`, payload: () => createClientBody(), ok: [200] }
  ]
  const matrix: Record<string, string[]> = {
    agencies: ['4.0', '3.0', '1'],
    offices: ['4.0', '3.0', '1'],
    'changed clients': ['4.0', '3.0', '1'],
    client: ['4.0', '3.0', '1'],
    'client list': ['4.0', '3.0', '1'],
    search: ['4.0', '3.0'],
    users: ['4.0'],
    'log note': ['4.0', '3.0'],
    'v1 log note': ['1'],
    attachment: ['4.0', '3.0', '1'],
    receipts: ['4.0', '3.0'],
    'create client': ['4.0']
  }
  for (const op of ops) {
    for (const version of ['4.0', '3.0', '1']) {
      let headers: Record<string, string> = { ...auth, ...(op.headers ?? {}) }
      let payload: unknown = op.payload?.(version)
      if (op.name === 'attachment') {
        headers = { ...auth, ...(version === '1' ? { ...v1File, RefId: randomUUID() } : { ...file.headers, RefId: randomUUID() }) }
        payload = file.payload
      }
      const res = await app.inject({ method: op.method, url: withQ(op.path, version), headers, payload: payload as object })
      const exists = matrix[op.name].includes(version)
      if (!exists) {
        t.equal(res.statusCode, 404, `${op.name} is absent from ${version}`)
        continue
      }
      t.ok(op.ok.includes(res.statusCode), `${op.name} in ${version}: ${res.statusCode} ${res.body.slice(0, 200)}`)
      if (op.schema !== undefined) t.same(schemaErrors(op.schema(version), res.json()), [], `${op.name} in ${version} answers its schema`)
    }
  }
})

t.test('the operation table is the version matrix, and each version registers exactly its operations', async (t) => {
  const every = ['4.0', '3.0', '1']
  t.same(Object.fromEntries((Object.keys(OPERATIONS) as OperationId[]).map((id) => [id, API_VERSIONS.filter((v) => OPERATIONS[id].versions[v] !== undefined)])), {
    agencies: every,
    offices: every,
    users: ['4.0'],
    changedClients: every,
    getClient: every,
    batchClients: every,
    searchClients: ['4.0', '3.0'],
    logNote: every,
    receipts: ['4.0', '3.0'],
    attachment: every,
    createClient: ['4.0']
  }, 'the README\'s version matrix')
  t.same(OPERATIONS.logNote.versions['1']?.url, '/vendor/agency/:agencyId/client/:clientId', 'the version 1 log note is posted on the client')
  const app = await build(t)
  for (const version of API_VERSIONS) {
    const fromTable = operationsOf(version).map((id) => `${OPERATIONS[id].method} ${OPERATIONS[id].versions[version]?.url ?? OPERATIONS[id].url}`)
    const registered = app.routeTable.filter((r) => r.version === version && r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`)
    t.same(registered, fromTable, `version ${version}: the table's operations, in its order`)
  }
})

t.test('the same client in the three versions differs exactly as documented', async (t) => {
  const app = await build(t)
  const c = live(AGENCY.main).find((x) => (x.people ?? []).length > 1 && (x.contacts ?? []).some((k) => k.personId !== null))!
  const read = async (version: string) =>
    (await app.inject({ url: withQ(`/vendor/agency/${AGENCY.main}/client/${c.clientNumber}`, version), headers: auth })).json()
  const [v4, v3, v1] = [await read('4.0'), await read('3.0'), await read('1')]
  t.same(v3, v4, '3.0 and 4.0 answer the same default groups')

  const { clientNumber, details, ...groups } = v4
  const { id, allowCrossSell, clientType, details: v1details, ...v1groups } = v1
  t.equal(id, clientNumber, 'v1 names the client number id')
  t.equal(allowCrossSell, details.allowCrossSell, 'allowCrossSell moves to the top level')
  t.equal(clientType, details.clientType, 'clientType moves to the top level')
  const { id: _guid, allowCrossSell: _a, clientType: _c, mainContacts, ...restDetails } = details
  const legacyOf = new Map(v4.people.map((p: { id: string; legacyId: number }) => [p.id, p.legacyId]))
  t.same(v1details, { ...restDetails, mainContacts: mainContacts.map((g: string) => legacyOf.get(g)) }, 'details lose their GUID; mainContacts are legacy ids')
  for (const key of ['people', 'claims'] as const) {
    t.same(v1groups[key], groups[key].map(({ id: _g, legacyId, ...r }: { id: string; legacyId: number }) => ({ id: legacyId, ...r })), `${key}: legacy ids`)
  }
  // policies take the version 1 shape of the live sample: the schema's keys, legacy ids, risks under linesOfBusiness
  t.equal(v1groups.policies.length, groups.policies.length)
  v1groups.policies.forEach((p: Record<string, any>, i: number) => {
    const v4p = groups.policies[i]
    t.same(Object.keys(p), Object.keys(V1PolicySchema.properties), 'every key of the version 1 policy, none other')
    t.match(p, {
      id: v4p.legacyId,
      policyNumber: v4p.policyNumber,
      state: v4p.policyState,
      currentPremium: v4p.premium,
      term: v4p.term,
      title: v4p.title,
      type: v4p.type,
      typeName: v4p.type,
      displayOrder: v4p.policyIndex,
      statusDate: v4p.statusDate
    })
    t.same(p.linesOfBusiness.map((l: { code: string }) => l.code), v4p.loBs.map((l: { code: string }) => l.code))
    t.notOk('modified' in p, 'no modified in version 1')
  })
  t.same(v1groups.contacts, groups.contacts.map(({ id: _g, legacyId, personId, ...r }: { id: string; legacyId: number; personId: string | null }) =>
    ({ id: legacyId, ...r, personId: personId === null ? null : legacyOf.get(personId) })), 'contacts: legacy ids, personId too')
  t.same(Object.keys(v1).sort(), ['allowCrossSell', 'claims', 'clientType', 'contacts', 'details', 'id', 'people', 'policies'])
  t.same(toV1Client(clientToRow(AGENCY.main, c)), v1, 'the route answers the mapper')
})

t.test('a full version 1 sync', async (t) => {
  const app = await build(t)
  let res = await app.inject({ url: '/vendor/agencies', headers: auth })
  t.same(res.json(), [AGENCY.main, AGENCY.limited, AGENCY.disconnected])
  res = await app.inject({ url: `/vendor/agency/${AGENCY.main}/offices`, headers: auth })
  t.same(res.json().map((o: { officeId: number }) => o.officeId), agency(AGENCY.main).offices.map((o) => o.officeId).sort((a, b) => a - b))
  res = await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients`, headers: auth })
  const ids: number[] = res.json()
  t.same(ids, live(AGENCY.main).map((c) => c.clientNumber).sort((a, b) => a - b))
  const read: Record<string, unknown>[] = []
  for (let i = 0; i < ids.length; i += 200) {
    res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/clients`, headers: auth, payload: ids.slice(i, i + 200) })
    t.equal(res.statusCode, 200)
    read.push(...res.json())
  }
  t.same(read.map((c) => c.id), ids)
  const byNumber = new Map(live(AGENCY.main).map((c) => [c.clientNumber, c]))
  for (const c of read) t.same(c, toV1Client(clientToRow(AGENCY.main, byNumber.get(c.id as number)!)))
  res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/clients`, headers: auth, payload: ids.slice(0, 201) })
  t.equal(res.statusCode, 400)
  t.match(res.json().detail, /at most 200/)

  const c = live(AGENCY.main).find((x) => (x.policies ?? []).length > 1)!
  const refId = randomUUID()
  res = await app.inject({
    method: 'POST',
    url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}`,
    headers: auth,
    payload: {
      Action: 5,
      Body: 'Carrier called',
      Description: 'Carrier call',
      PolicyIndex: 1,
      RefId: refId,
      TS: '2026-11-20T10:00:00Z',
      Suspense: { Category: 'Follow-up', DueDate: '2026-11-30T09:00:00Z', SuspendedFor: 'Producer' }
    }
  })
  t.equal(res.statusCode, 200, res.body)
  const listed = (await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes?kind=log` })).json()
  t.match(listed[0], {
    refId,
    version: '1',
    data: {
      channel: 5,
      note: 'Carrier called',
      description: 'Carrier call',
      policyId: c.policies![1].id,
      task: { assignedToRole: 'Producer', category: 'Follow-up', dueDate: '2026-11-30T09:00:00Z', title: 'Carrier call', description: 'Carrier called' }
    }
  })

  res = await app.inject({
    method: 'POST',
    url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}`,
    headers: auth,
    payload: { Action: 5, Body: 'x', Description: 'd'.repeat(141), PolicyIndex: 9, RefId: randomUUID(), TS: '2026-11-20T10:00:00Z' }
  })
  t.equal(res.statusCode, 400)
  t.ok(res.json().errors.some((e: { field: string }) => e.field === 'Description'))
  res = await app.inject({
    method: 'POST',
    url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}`,
    headers: auth,
    payload: { Action: 5, Body: 'x', Description: 'd', PolicyIndex: 9, RefId: randomUUID(), TS: '2026-11-20T10:00:00Z' }
  })
  t.equal(res.statusCode, 400)
  t.match(res.json().errors, [{ field: 'PolicyIndex' }])

  const user = agency(AGENCY.main).users.find((u) => u.active)!
  const text = Buffer.from('plain text note\n')
  res = await app.inject({
    method: 'POST',
    url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/attachment`,
    headers: {
      ...auth,
      'content-type': 'application/octet-stream',
      RefId: refId,
      TS: '2026-11-20T10:00:00Z',
      Action: '33',
      Desc: b64('A note'),
      FileName: b64('note'),
      FileExt: 'txt',
      LogBody: b64('Note attached'),
      LogDescription: b64('Note'),
      PolicyIndex: '0',
      SuspendedFor: 'SpecifiedUser',
      SuspendedForInitials: user.username,
      SuspenseCategory: b64('Docs'),
      SuspenseDueDate: '2026-12-01T00:00:00Z'
    },
    payload: gzipSync(text)
  })
  t.equal(res.statusCode, 200, res.body)
  const [att] = (await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes?kind=attachment` })).json()
  t.match(att.data, {
    fileExt: 'txt',
    fileName: 'note',
    logNote: 'Note attached',
    logDescription: 'Note',
    policyId: c.policies![0].id,
    task: { assignedToRole: 'SpecifiedUser', assignedToInitials: user.username, category: 'Docs' }
  })
  const content = await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/attachments/${refId}/content` })
  t.ok(content.rawPayload.equals(text))

  for (const path of ['/clients/search?policyNumber=X', `/client/${c.clientNumber}/receipts`, '/client', '/users', `/client/${c.clientNumber}/log`]) {
    const method = path.includes('search') || path.includes('users') ? 'GET' : 'POST'
    res = await app.inject({ method, url: `/vendor/agency/${AGENCY.main}${path}`, headers: auth, payload: method === 'POST' ? {} : undefined })
    t.equal(res.statusCode, 404, `version 1 has no ${path}`)
  }
})

t.test('a full version 3.0 sync, with and without include support', async (t) => {
  const app = await build(t)
  let res = await app.inject({ url: '/vendor/agencies?version=3.0', headers: auth })
  t.same(res.json(), [AGENCY.main, AGENCY.limited, AGENCY.disconnected])
  for (const id of [AGENCY.main, AGENCY.limited]) {
    res = await app.inject({ url: `/vendor/agency/${id}/clients?version=3.0`, headers: auth })
    const ids: number[] = res.json()
    t.same(ids, live(id).map((c) => c.clientNumber).sort((a, b) => a - b))
    res = await app.inject({ method: 'POST', url: `/vendor/agency/${id}/clients?version=3.0&include=Details`, headers: auth, payload: { clientNumbers: ids.slice(0, 200) } })
    t.equal(res.json().length, Math.min(200, ids.length))
    const keys = Object.keys(res.json()[0])
    if (id === AGENCY.main) {
      t.same(keys, ['clientNumber', 'details'], 'includes honoured where supported')
      t.notOk(res.headers.denied)
    } else {
      t.same(keys, ['clientNumber', 'details', 'people', 'contacts', 'claims', 'policies'], 'every granted group where includes are unsupported')
      t.equal(res.headers.denied, undefined, 'no Denied header: the request did not ask for invoices')
    }
  }
  const c = live(AGENCY.main)[0]
  res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/log?version=3.0`, headers: auth, payload: { ...logNote(), channel: undefined, Channel: 9 } })
  // `action` is no alias of Channel in 3.0 (test/fidelity/observed-live.test.ts)
  t.equal(res.statusCode, 200, 'PascalCase Channel binds')
  const file = attachment(Buffer.from('x'), { FileExt: 'eml' })
  res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${c.clientNumber}/attachment?version=3.0`, headers: { ...auth, ...file.headers }, payload: file.payload })
  t.equal(res.statusCode, 200)
  const listed = (await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes` })).json()
  t.same(listed.map((w: { version: string; kind: string }) => [w.version, w.kind]), [['3.0', 'log'], ['3.0', 'attachment']])
  t.equal(listed[0].data.channel, 9)
})
