import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../helpers/process.js'
import { control, DEMO_AUTH, importArgs, importTo, sandbox, tempDir } from './instances.js'
import { agencyListings, basic, mismatches, readsFromState, type StateAgency } from './reads.js'

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
  const out = join(dir, 'demo.json')
  const run = await importTo(upstream.url, out)
  t.match(run.stdout, /wrote .*: 3 agencies, 304 clients and 6 deleted clients/)
  t.equal((await runCli(['validate', out])).code, 0, 'the fixture validates')
  const text = readFileSync(out, 'utf8')
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
