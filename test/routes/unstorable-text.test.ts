import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { AGENCY, build, DEMO, demoFixture, type Teardown } from '../helpers/app.js'
import { attachment, b64, createClientBody, logNote } from '../helpers/writes.js'

/**
 * Text the store cannot hold: a NUL character or a lone surrogate in any text a caller sends
 * (names, fault rules, notes, client fields, integrations, fixtures, base64 attachment headers)
 * is a 400 naming the field, in SQLite and in PostgreSQL alike (this file runs over both:
 * test/hosted/suite-on-postgres.test.ts); nothing is stored. A surrogate pair (an emoji) is text.
 */

const TOKEN = 'unstorable-admin-token'
const ADMIN = { authorization: `Bearer ${TOKEN}` }

/** Each a string JSON.stringify writes as an escape: the only way JSON can carry them. */
const BAD = [
  { what: 'a NUL', text: 'a\u0000b' },
  { what: 'a lone high surrogate', text: 'a\ud800b' },
  { what: 'a lone low surrogate', text: 'a\udc00' },
  { what: 'a high surrogate at the end', text: 'name\udbff' },
  { what: 'two high surrogates', text: '\ud800\ud800\udc00' }
]

interface Case {
  name: string
  url: string
  /** The body with `text` in the field named `field`. */
  body: (text: string) => unknown
  field: string
  headers?: Record<string, string>
}

/** A small fixture (read where it arrives) with `text` as an agency's name; `large`: the demo's whole (read on the fixture worker). */
const fixtureWith = (text: string, large = false) => {
  const fixture = demoFixture()
  if (!large) for (const agency of fixture.agencies) agency.clients = agency.clients.slice(0, 2)
  fixture.agencies[0].name = text
  return fixture
}

const CASES: Case[] = [
  { name: 'world name', url: '/_sandbox/worlds', body: (s) => ({ name: s }), field: 'name', headers: ADMIN },
  { name: "a world's fixture", url: '/_sandbox/worlds', body: (s) => ({ fixture: fixtureWith(s) }), field: 'fixture.agencies[0].name', headers: ADMIN },
  { name: 'tenant name', url: '/_sandbox/tenants', body: (s) => ({ name: s }), field: 'name', headers: ADMIN },
  { name: 'session name', url: '/_sandbox/sessions', body: (s) => ({ name: s }), field: 'name', headers: ADMIN },
  { name: 'fault rule path', url: '/_sandbox/faults', body: (s) => ({ match: { path: s }, effect: { status: 503 } }), field: 'match.path', headers: ADMIN },
  { name: 'fault rule method', url: '/_sandbox/faults', body: (s) => ({ match: { method: s }, effect: { status: 503 } }), field: 'match.method', headers: ADMIN },
  { name: 'fault rule client id', url: '/_sandbox/faults', body: (s) => ({ match: { clientId: s }, effect: { status: 503 } }), field: 'match.clientId', headers: ADMIN },
  { name: 'fault rule answer body', url: '/_sandbox/faults', body: (s) => ({ effect: { status: 503, body: { message: [s] } } }), field: 'effect.body.message[0]', headers: ADMIN },
  { name: 'fault rule header', url: '/_sandbox/faults', body: (s) => ({ effect: { status: 503, headers: { 'x-why': s } } }), field: 'effect.headers.x-why', headers: ADMIN },
  { name: 'integration secret', url: '/_sandbox/integrations', body: (s) => ({ clientId: 'x', clientSecret: s, name: 'X', agencies: [] }), field: 'clientSecret', headers: ADMIN },
  { name: 'reset fixture', url: '/_sandbox/reset', body: (s) => fixtureWith(s), field: 'agencies[0].name', headers: ADMIN },
  { name: 'a field name', url: '/_sandbox/sessions', body: (s) => ({ [s]: 1 }), field: '', headers: ADMIN },
  { name: 'log note', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, body: (s) => logNote({ note: s }), field: 'note', headers: { authorization: DEMO } },
  {
    name: 'client field',
    url: `/vendor/agency/${AGENCY.main}/client?version=4.0`,
    body: (s) => createClientBody({ People: [{ FirstName: s, LastName: 'Lovelace', MainContactType: 'First' }] }),
    field: 'People[0].FirstName',
    headers: { authorization: DEMO }
  }
]

async function app (t: Teardown): Promise<FastifyInstance> {
  return await build(t, { config: { controlToken: TOKEN } })
}

t.test('a NUL or a lone surrogate in a text is a 400 naming the field, and nothing is stored', async (t) => {
  const sandbox = await app(t)
  const before = await sandbox.inject({ url: '/_sandbox/state', headers: ADMIN })
  const worlds = async () => (await sandbox.inject({ url: '/_sandbox/worlds', headers: ADMIN })).json().worlds.length as number
  const count = { worlds: await worlds() }
  for (const c of CASES) {
    for (const bad of BAD) {
      const res = await sandbox.inject({
        method: 'POST',
        url: c.url,
        headers: { ...c.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(c.body(bad.text))
      })
      t.equal(res.statusCode, 400, `${c.name}, ${bad.what}: 400 (${res.body.slice(0, 200)})`)
      const field = (res.json() as { errors?: Array<{ field: string, message: string }> }).errors?.[0]
      if (c.field === '') t.match(field?.message, /field name/, `${c.name}: the field name is refused`)
      else t.equal(field?.field, c.field, `${c.name}, ${bad.what}: names ${c.field}`)
      t.match(field?.message, bad.what === 'a NUL' ? /NUL/ : /surrogate/, 'and says why')
    }
  }
  // a large body is read on the fixture worker, by the same parser (a few seconds each: one of each kind)
  for (const bad of [BAD[0], BAD[1]]) {
    const res = await sandbox.inject({ method: 'POST', url: '/_sandbox/reset', headers: { ...ADMIN, 'content-type': 'application/json' }, payload: JSON.stringify(fixtureWith(bad.text, true)) })
    t.equal(res.statusCode, 400, `a large reset fixture, ${bad.what}: 400`)
    t.equal(res.json().errors?.[0]?.field, 'agencies[0].name', 'naming the field')
  }
  t.equal(await worlds(), count.worlds, 'no world was created')
  t.equal((await sandbox.inject({ url: '/_sandbox/tenants', headers: ADMIN })).json().tenants.length, 0, 'no tenant')
  t.same((await sandbox.inject({ url: '/_sandbox/sessions', headers: ADMIN })).json(), [], 'no session')
  t.same((await sandbox.inject({ url: '/_sandbox/faults', headers: ADMIN })).json(), [], 'no fault rule')
  t.equal((await sandbox.inject({ url: '/_sandbox/state', headers: ADMIN })).body, before.body, 'the data is as it was')
})

t.test('a NUL in a base64 attachment header is a 400 naming the header', async (t) => {
  const sandbox = await app(t)
  const pdf = Buffer.from('%PDF-1.4 a test file')
  for (const header of ['FileName', 'Desc', 'LogNote']) {
    const { headers, payload } = attachment(pdf, { [header]: b64('scan\u0000.pdf') })
    const res = await sandbox.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/attachment?version=4.0`, headers: { ...headers, authorization: DEMO }, payload })
    t.equal(res.statusCode, 400, header)
    t.equal(res.json().errors?.[0]?.field, header, `names ${header}`)
    t.match(res.json().errors?.[0]?.message, /NUL/)
  }
  t.same((await sandbox.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes`, headers: ADMIN })).json(), [], 'nothing was written')
})

t.test('surrogate pairs and other escapes are text as before', async (t) => {
  const sandbox = await app(t)
  const name = 'Nächtlicher Abgleich \ud83d\ude00 \u00e9'
  // written with every character escaped, as some serializers send text (Python's json.dumps)
  const escaped = JSON.stringify({ name }).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  const session = await sandbox.inject({ method: 'POST', url: '/_sandbox/sessions', headers: { ...ADMIN, 'content-type': 'application/json' }, payload: escaped })
  t.equal(session.statusCode, 201)
  t.equal(session.json().name, name)
  const world = await sandbox.inject({ method: 'POST', url: '/_sandbox/worlds', headers: { ...ADMIN, 'content-type': 'application/json' }, payload: escaped })
  t.equal(world.statusCode, 201)
  t.equal(world.json().name, name)
  const note = await sandbox.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, headers: { authorization: DEMO }, payload: logNote({ refId: randomUUID(), note: 'ok \ud83d\ude00' }) })
  t.equal(note.statusCode, 200)
})
