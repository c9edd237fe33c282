import { gzipSync } from 'node:zlib'
import t from 'tap'
import { AGENCY, build, demoFixture } from '../helpers/app.js'
import { auth, fieldsOf, liveClient, vendor, writesOf } from '../helpers/fidelity.js'
import { b64, createClientBody, logNote, v1AttachmentHeaders } from '../helpers/writes.js'

/**
 * Facts the spec's own tables state (agency-api.md). The tables' field rules, limits and version
 * matrix are also checked where each operation is tested (test/routes/*.test.ts,
 * test/write-rules.test.ts, test/versions.test.ts); the tests here are those the fidelity
 * review leans on.
 */

const main = AGENCY.main

// The spec's Enumerations list, copied from the spec (not from the source), in its order: a .NET
// enum numbers its members in declaration order from 0, so this order is what a number means.
const SPEC_ENUMERATIONS = {
  ClientStatus: ['Active', 'DeadFile', 'Prospect', 'Lead'],
  BusinessType: ['None', 'Corporation', 'IndividualOrSoleProprietor', 'SubchapterS', 'LLC', 'Partnership', 'JointVenture', 'NonProfit', 'FamilyTrust'],
  ContactType: ['None', 'WorkPhone', 'WorkEmail', 'CellPhone', 'HomePhone', 'HomeEmail', 'OtherPhone', 'OtherEmail', 'MessagePhone', 'Pager', 'Fax',
    'SocialMedia', 'ClientWebsite', 'OtherWebsite'],
  MainContactType: ['None', 'First', 'Second', 'Other'],
  ApplicationType: ['Undefined', 'Agricultural', 'Commercial', 'EmployeeBenefits', 'Health', 'Life', 'Other', 'Personal', 'SuretyBond', 'Platform'],
  AgentRole: ['SpecifiedUser', 'Producer', 'CSR', 'Agent1', 'Agent2', 'Agent3']
} as const

t.test('[Spec: Enumerations] each member binds by name in any case and by its number in the spec\'s order, and reads back canonical', async (t) => {
  const app = await build(t)
  const { ContactType, MainContactType, ClientStatus, BusinessType, ApplicationType, AgentRole } = SPEC_ENUMERATIONS
  // one client per ApplicationType number, cycling the status and business type numbers
  for (let i = 0; i < ApplicationType.length; i++) {
    const byName = i % 2 === 0
    const body = createClientBody({
      Status: byName ? ClientStatus[i % 4].toLowerCase() : i % 4,
      BusinessDetail: { BusinessType: byName ? BusinessType[i % 9].toUpperCase() : i % 9, CompanyName: `Company ${i}` },
      Policy: { ApplicationType: byName ? ApplicationType[i].toLowerCase() : String(i) },
      // every MainContactType and ContactType, by number
      People: MainContactType.map((_m, p) => ({
        FirstName: `P${p}`,
        MainContactType: p,
        Contacts: ContactType.map((_c, n) => n).filter((n) => n % 4 === p).map((n) => ({ Type: n, Value: `v${n}` }))
      })),
      Contacts: []
    })
    const res = await vendor(app, 'POST', `${main}/client`, 'version=4.0', body)
    t.equal(res.statusCode, 200, `client ${i}: ${res.body}`)
    const client = (await vendor(app, 'GET', `${main}/client/${res.json().clientNumber}`, 'version=4.0')).json()
    t.equal(client.details.status, ClientStatus[i % 4])
    t.equal(client.details.businessType, BusinessType[i % 9])
    t.equal(client.policies[0].applicationType, ApplicationType[i])
    t.same(client.people.map((p: { mainContactType: string }) => p.mainContactType), MainContactType)
    t.same(client.contacts.map((c: { type: string }) => c.type).sort(), [...ContactType].sort())
  }
  const users = demoFixture().agencies.find((a) => a.agencyId === main)!.users
  const c = liveClient()
  for (let n = 0; n < AgentRole.length; n++) {
    const task = { assignedToRole: n, assignedToEmail: users[0].email, description: 'd', dueDate: '2026-12-01T00:00:00Z', title: 't' }
    const res = await vendor(app, 'POST', `${main}/client/${c.clientNumber}/log`, 'version=4.0', logNote({ task }))
    t.equal(res.statusCode, 200, `AgentRole ${n}`)
  }
  const roles = (await writesOf(app, main, '?kind=log')).map((w) => (w.data.task as { assignedToRole: string }).assignedToRole)
  t.same(roles, AgentRole, 'AgentRole by number')
})

t.test('[Spec: Log note body] Channel is a LogAction from 1 to 56 and required', async (t) => {
  const app = await build(t)
  const c = liveClient()
  for (const [channel, status] of [[1, 200], [56, 200], [0, 400], [57, 400], [undefined, 400]] as const) {
    const res = await vendor(app, 'POST', `${main}/client/${c.clientNumber}/log`, 'version=4.0', logNote({ channel }))
    t.equal(res.statusCode, status, `channel ${channel}`)
    if (status === 400) t.same(fieldsOf(res.json()), ['Channel'])
  }
})

t.test('[Spec: Version 1 log note body] version 1 names the channel Action', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const note = { Action: 9, Body: 'Called', Description: 'Call', RefId: logNote().refId, TS: '2026-11-20T10:00:00Z' }
  let res = await vendor(app, 'POST', `${main}/client/${c.clientNumber}`, '', note)
  t.equal(res.statusCode, 200)
  t.equal((await writesOf(app, main))[0].data.channel, 9)
  const { Action: _action, ...withoutAction } = note
  res = await vendor(app, 'POST', `${main}/client/${c.clientNumber}`, '', { ...withoutAction, Channel: 9 })
  t.equal(res.statusCode, 400, 'version 1 has no Channel')
  t.same(fieldsOf(res.json()), ['Action'])
})

t.test('[Spec: Versioning] version=4.0 and version=3.0 select the version; without the parameter the request is version 1', async (t) => {
  const app = await build(t)
  const list = async (query: string) => (await app.inject({ url: `/vendor/agencies${query}`, headers: auth })).json()
  t.type((await list('?version=4.0'))[0], 'object', '4.0: entries with scopes')
  t.type((await list('?version=3.0'))[0], 'number', '3.0: ids')
  t.type((await list(''))[0], 'number', 'version 1: ids')
})

t.test('[Spec: version 1 log note limits] the version 1 attachment\'s LogBody (3,000) and LogDescription (140 characters) are limited as the log note\'s', async (t) => {
  const app = await build(t)
  const c = liveClient()
  const v1 = (logBody: string, logDescription: string) => vendor(app, 'POST', `${main}/client/${c.clientNumber}/attachment`, '', gzipSync(Buffer.from('text')) as unknown as object,
    { ...v1AttachmentHeaders(), LogBody: b64(logBody), LogDescription: b64(logDescription) })

  t.equal((await v1('é'.repeat(3000), 'é'.repeat(140))).statusCode, 200, 'at the limits (characters, not bytes)')
  let res = await v1('x'.repeat(3001), 'ok')
  t.equal(res.statusCode, 400)
  t.same(fieldsOf(res.json()), ['LogBody'])
  res = await v1('ok', 'x'.repeat(141))
  t.equal(res.statusCode, 400)
  t.same(fieldsOf(res.json()), ['LogDescription'])
  t.equal((await writesOf(app, main, '?kind=attachment')).length, 1, 'nothing recorded past the limits')
})
