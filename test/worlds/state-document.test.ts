import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { INLINE_STATE_BYTES } from '../../src/domain/worlds/world.js'
import { AGENCY, build, DEMO, grownDemoFixture } from '../helpers/app.js'
import { liveClient, vendor } from '../helpers/fidelity.js'
import { attachment, createClientBody, logNote } from '../helpers/writes.js'

/**
 * GET /_sandbox/state of a world larger than a few hundred KiB is written on the fixture worker
 * from a snapshot of the world's database: the answer is byte for byte the document the world
 * itself makes (World.state()), whatever the world holds.
 */

/** The state the world writes itself, as the answer was made before it moved to the worker. */
const inline = (app: FastifyInstance, id?: string) => JSON.stringify((id === undefined ? app.worlds.default : app.worlds.get(id)!).state())

/** Writes of every kind: applied (a log note, a created client, an attachment) and pending (a note to a disconnected agency). */
async function writeEveryKind (app: FastifyInstance, auth = DEMO) {
  const main = liveClient(AGENCY.main).clientNumber
  const log = await vendor(app, 'POST', `${AGENCY.main}/client/${main}/log`, 'version=4.0', logNote(), { authorization: auth })
  const created = await vendor(app, 'POST', `${AGENCY.main}/client`, 'version=4.0', createClientBody(), { authorization: auth })
  const file = attachment(Buffer.from('%PDF-1.4 state document'))
  const attached = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${main}/attachment?version=4.0`, headers: { ...file.headers, authorization: auth }, payload: file.payload })
  const pending = await vendor(app, 'POST', `${AGENCY.disconnected}/client/${liveClient(AGENCY.disconnected).clientNumber}/log`, 'version=4.0', logNote(), { authorization: auth })
  return [log, created, attached, pending].map((res) => res.statusCode)
}

t.test('the demo world\'s state is the document the world makes, written on the fixture worker', async (t) => {
  const app = await build(t)
  t.ok(app.worlds.default.bytes() > INLINE_STATE_BYTES, 'the demo world is larger than a world whose state is written inline')
  const res = await app.inject({ url: '/_sandbox/state' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, inline(app), 'byte for byte')
})

t.test('with writes applied, attachments and pending writes, the state is still the world\'s own document', async (t) => {
  const app = await build(t)
  t.same(await writeEveryKind(app), [200, 200, 200, 202], 'a note, a client, an attachment, a pending note')
  const state = (await app.inject({ url: '/_sandbox/state' })).body
  t.equal(state, inline(app), 'byte for byte')
  const { writes } = JSON.parse(state) as { writes: Array<{ kind: string, status: string, content?: string }> }
  t.ok(writes.some((w) => w.kind === 'attachment' && w.content !== undefined), 'the attachment with its content')
  t.ok(writes.some((w) => w.status === 'pending'), 'the pending write')
})

t.test('a world on a database file (write-ahead log, with writes not yet folded into the file): the same document', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const app = await build(t, { config: { db: join(dir, 'sandbox.db') } })
  t.same(await writeEveryKind(app), [200, 200, 200, 202])
  const res = await app.inject({ url: '/_sandbox/state' })
  t.equal(res.statusCode, 200, res.body.slice(0, 300))
  t.equal(res.body, inline(app), 'byte for byte')
})

t.test('a created world\'s state, under /_sandbox/worlds/{id}/state, is its own document', async (t) => {
  const app = await build(t)
  const world = (await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {} })).json() as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  const abc = world.integrations.find((i) => i.clientId === `abc@${world.id}`)!
  const auth = 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64')
  t.same(await writeEveryKind(app, auth), [200, 200, 200, 202])
  const res = await app.inject({ url: `/_sandbox/worlds/${world.id}/state` })
  t.equal(res.statusCode, 200)
  t.equal(res.body, inline(app, world.id), 'byte for byte, with the world\'s own Client Ids')
  t.not(res.body, (await app.inject({ url: '/_sandbox/state' })).body, 'not the default world\'s')
})

t.test('an empty world\'s state is written inline, and is the same document', async (t) => {
  const app = await build(t, { fixture: { integrations: [], agencies: [] } as never })
  t.ok(app.worlds.default.bytes() <= INLINE_STATE_BYTES)
  t.equal((await app.inject({ url: '/_sandbox/state' })).body, inline(app))
})

t.test('clients are written a page at a time: agencies past a page, and text that looks like the page marker, give the same document', async (t) => {
  const fixture = grownDemoFixture((_fixture, clients) => clients >= 2_600)
  const agency = fixture.agencies.find((a) => a.agencyId === AGENCY.main)!
  // a NUL and the marker's words in a client's text, as JSON writes them and as they are
  agency.clients[1].details.source = '\u0000clients 00000000-0000-4000-8000-000000000000 1001'
  agency.clients[2].details.source = '"\\u0000clients 1001"'
  const app = await build(t, { fixture })
  const res = await app.inject({ url: '/_sandbox/state' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, inline(app), 'byte for byte the document of the world as one object')
  t.equal(JSON.parse(res.body).agencies.find((a: { agencyId: number }) => a.agencyId === AGENCY.main).clients.length, agency.clients.length, 'every client, past several pages')
})
