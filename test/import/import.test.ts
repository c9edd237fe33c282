import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../helpers/process.js'
import { control, DEMO_AUTH, importArgs, importTo, sandbox, tempDir } from '../helpers/import-instances.js'
import { agencyListings, basic, mismatches, readsFromState, type StateAgency } from '../helpers/import-reads.js'

/**
 * `agency-sandbox import` from a sandbox process holding the demo data: a second sandbox
 * served from the written fixture answers every vendor read as the upstream does, byte for byte.
 */

const ABC_AGENCIES = [1001, 1002, 1004]

interface Fixture { integrations: Array<{ clientId: string; clientSecret: string; agencies: Array<{ agencyId: number; scopes: string[] }> }>; agencies: StateAgency[] }

t.test('usage errors exit 2 and name the option', async (t) => {
  const missing = await runCli(['import', '--client-id', 'abc', '--client-secret', '1', '--out', 'x.json'])
  t.equal(missing.code, 2)
  t.match(missing.stderr, /--from is required/)
  const version = await runCli(['import', '--from', 'http://127.0.0.1:1', '--client-id', 'a', '--client-secret', 'b', '--out', 'x', '--version', '2.0'])
  t.equal(version.code, 2)
  t.match(version.stderr, /--version must be 4.0 or 3.0/)
  const seed = await runCli(['import', '--from', 'http://127.0.0.1:1', '--client-id', 'a', '--client-secret', 'b', '--out', 'x', '--seed', '3'])
  t.match(seed.stderr, /--seed goes with --anonymize/)
  const help = await runCli(['import', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /--resume/)
})

t.test('an imported demo world answers every vendor read byte for byte', async (t) => {
  const dir = tempDir(t)
  const upstream = await sandbox(t)
  // a field the sandbox's model does not list, as the live service may answer
  await control(upstream.url, 'PATCH', '/agencies/1001/clients/1003', { details: { preferredLanguage: 'pt-BR', loyalty: { tier: 2, since: '2019-04-01' } } })
  const out = join(dir, 'demo.json')
  const run = await importTo(upstream.url, out)
  t.match(run.stdout, /wrote .*: 3 agencies, 304 clients and 6 deleted clients/)
  t.equal((await runCli(['validate', out])).code, 0, 'the fixture validates')
  const text = readFileSync(out, 'utf8')
  const harbor = (JSON.parse(text) as { agencies: Array<{ agencyId: number, offices: Array<{ officeId: number, archived?: boolean }> }> })
    .agencies.find((a) => a.agencyId === 1001)!
  t.same(harbor.offices.map((o) => [o.officeId, o.archived === true]), [[0, false], [1, false], [2, false], [3, false], [4, true]],
    'the agency-level office 0 and the archived office are kept, with archived')
  t.match(text, /"preferredLanguage":"pt-BR","loyalty":\{"tier":2,"since":"2019-04-01"\}/, 'fields the sandbox does not know are kept')
  t.notMatch(text, /"clientSecret":"123"/, 'the upstream secret is not copied')
  t.not(run.secret, DEMO_AUTH.clientSecret)

  const again = join(dir, 'again.json')
  await importTo(upstream.url, again)
  t.ok(readFileSync(again).equals(readFileSync(out)), 'the same upstream gives the same bytes')

  const state = await control<Fixture>(upstream.url, 'GET', '/state')
  const fixture = JSON.parse(text) as Fixture
  // deleted clients: the same numbers, with the deletion time and office the upstream holds
  for (const id of ABC_AGENCIES) {
    const upstreamDeleted = state.agencies.find((a) => a.agencyId === id)!.clients.filter((c) => c.deleted === true)
      .map((c) => [c.clientNumber, Date.parse(c.details.modified), c.details.officeId])
    const imported = fixture.agencies.find((a) => a.agencyId === id)!.clients.filter((c) => c.deleted === true)
      .map((c) => [c.clientNumber, Date.parse(c.details.modified), c.details.officeId])
    t.same(imported, upstreamDeleted, `agency ${id}: deleted clients with their times and offices`)
  }

  const served = await sandbox(t, out)
  const reads = [...agencyListings, ...state.agencies.filter((a) => ABC_AGENCIES.includes(a.agencyId)).flatMap((a) => readsFromState(a, true))]
  const bad = await mismatches({ url: upstream.url, auth: basic('abc', '123') }, { url: served.url, auth: basic('abc', run.secret) }, reads)
  t.same(bad, [], `${reads.length} reads answer alike`)
  t.ok(reads.length > 1100, `every client in 4.0, 3.0 and 1, batches, listings with and without asOf, searches (${reads.length} reads)`)
})

t.test('version 3.0: the same data, scopes inferred; --agencies and --keep-secret', async (t) => {
  const dir = tempDir(t)
  const upstream = await sandbox(t)
  const out = join(dir, 'v3.json')
  const run = await importTo(upstream.url, out, ['--version', '3.0'])
  const fixture = JSON.parse(readFileSync(out, 'utf8')) as Fixture
  const scopes = Object.fromEntries(fixture.integrations[0].agencies.map((s) => [s.agencyId, s.scopes]))
  // user-list learned by trying 4.0 users, invoice-read by the invoices a 3.0 read answers;
  // the write scope is assumed (reads cannot tell), client-create does not exist in 3.0
  t.same(scopes, {
    1001: ['client-read', 'create-log-attachment-task', 'user-list', 'invoice-read'],
    1002: ['client-read', 'create-log-attachment-task'],
    1004: ['client-read', 'create-log-attachment-task', 'user-list', 'invoice-read']
  })
  const state = await control<Fixture>(upstream.url, 'GET', '/state')
  const served = await sandbox(t, out)
  const reads = [
    ...agencyListings.filter((r) => !r.path.includes('4.0')),
    ...state.agencies.filter((a) => ABC_AGENCIES.includes(a.agencyId)).flatMap((a) => readsFromState(a, true, 40))
  ]
  const bad = await mismatches({ url: upstream.url, auth: basic('abc', '123') }, { url: served.url, auth: basic('abc', run.secret) }, reads)
  t.same(bad, [], `${reads.length} reads answer alike`)

  const only = join(dir, 'only-1002.json')
  const kept = await runCli(importArgs(upstream.url, only, ['--agencies', '1002', '--keep-secret']))
  t.equal(kept.code, 0, kept.stderr)
  const one = JSON.parse(readFileSync(only, 'utf8')) as Fixture
  t.same(one.agencies.map((a) => a.agencyId), [1002])
  t.equal(one.integrations[0].clientSecret, '123', '--keep-secret copies the secret')
  t.same(one.agencies[0].clients.length, 30)
  // 1002 has includes switched off for 3.0 in the demo: learned from a 3.0 read
  t.equal((one.agencies[0] as unknown as { supportsIncludes: boolean }).supportsIncludes, false)
})

t.test('answers the fixture cannot hold: a top-level field left out, a refused client left out, both said', async (t) => {
  const dir = tempDir(t)
  const upstream = await sandbox(t)
  const path = '/vendor/agency/1002/clients?version=4.0&include=Details,People,Contacts,Claims,Policies'
  const numbers = Array.from({ length: 30 }, (_, i) => 1000 + i)
  const res = await fetch(upstream.url + path, { method: 'POST', headers: { authorization: basic('abc', '123'), 'content-type': 'application/json' }, body: JSON.stringify({ clientNumbers: numbers }) })
  const clients = await res.json() as Array<Record<string, unknown> & { policies: Array<Record<string, unknown>> }>
  clients[0].legacyNotes = 'kept upstream only'
  clients[1].policies[0].policyNumber = true // a number would be converted to its text, as a fixture's is
  // the upstream answers the batch read with these (a fault rule stands in for any answer)
  await control(upstream.url, 'POST', '/faults', { match: { method: 'POST', path: '/vendor/agency/1002/clients' }, effect: { status: 200, body: clients } })
  const out = join(dir, 'odd.json')
  const run = await runCli(importArgs(upstream.url, out, ['--agencies', '1002']))
  t.equal(run.code, 0, run.stderr)
  t.match(run.stderr, /agency 1002: clients' top-level field legacyNotes left out/)
  t.match(run.stderr, /agency 1002: client 1001 left out: the fixture refuses it: policies\[0\]\.policyNumber/)
  t.match(run.stdout, /clients the fixture refuses: 1 left out \(see the warnings above\)/)
  t.equal((await runCli(['validate', out])).code, 0, 'what is written validates')
  const fixture = JSON.parse(readFileSync(out, 'utf8')) as Fixture
  t.equal(fixture.agencies[0].clients.length, 29)
})
