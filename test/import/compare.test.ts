import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../helpers/process.js'
import { control, DEMO_AUTH, importTo, sandbox, tempDir } from '../helpers/import-instances.js'

/**
 * `agency-sandbox compare`: the demo sandbox against a sandbox seeded from its import reports
 * nothing and exits 0; against a copy where one field changed type it reports exactly that
 * field, in every request that reads it, and exits 1.
 */

interface Difference { endpoint: string; request: string; kind: string; field?: string; from: string; to: string }
interface Report { requests: number; endpoints: number; differences: Difference[] }

const compare = (from: string, to: string, extra: string[] = []) =>
  runCli(['compare', '--from', from, '--client-id', DEMO_AUTH.clientId, '--client-secret', DEMO_AUTH.clientSecret, '--to', to, '--agency', '1001', ...extra])

t.test('compare: no difference, then exactly the changed field', async (t) => {
  const dir = tempDir(t)
  const upstream = await sandbox(t)
  const out = join(dir, 'demo.json')
  await importTo(upstream.url, out, ['--keep-secret'])
  const [same, changedFile] = [out, join(dir, 'changed.json')]

  // client 1000 (the first of agency 1001, always in the sample): clientSince becomes a date alone
  // (the fixture takes both; a number would be converted at load and read back as before)
  const fixture = JSON.parse(readFileSync(out, 'utf8')) as { agencies: Array<{ agencyId: number; clients: Array<{ clientNumber: number; details: Record<string, unknown> }> }> }
  const client = fixture.agencies.find((a) => a.agencyId === 1001)!.clients.find((c) => c.clientNumber === 1000)!
  t.match(client.details.clientSince, /^\d{4}-\d{2}-\d{2}T00:00:00$/)
  client.details.clientSince = String(client.details.clientSince).slice(0, 10)
  writeFileSync(changedFile, JSON.stringify(fixture))

  const [alike, changed] = await Promise.all([sandbox(t, same), sandbox(t, changedFile)])

  const text = await compare(upstream.url, alike.url)
  t.equal(text.code, 0, text.stderr)
  t.match(text.stdout, /no differences: status, Content-Type, Denied, fields, types and value formats alike/)
  const json = await compare(upstream.url, alike.url, ['--format', 'json'])
  const report = JSON.parse(json.stdout) as Report
  t.same(report.differences, [])
  t.ok(report.requests > 50 && report.endpoints > 20, `${report.requests} requests over ${report.endpoints} endpoints`)

  const diffText = await compare(upstream.url, changed.url)
  t.equal(diffText.code, 1, 'a difference exits 1')
  t.match(diffText.stdout, /details\.clientSince: format: string \(date-time without zone\) \(from\) \/ string \(date\) \(to\)/)
  const diff = JSON.parse((await compare(upstream.url, changed.url, ['--format', 'json'])).stdout) as Report
  t.ok(diff.differences.length > 0)
  t.same(diff.differences.filter((d) => !(d.kind === 'format' && /^(\[\]\.)?details\.clientSince$/.test(d.field ?? ''))), [], 'only that field differs')
  t.ok(diff.differences.every((d) => d.from === 'string (date-time without zone)' && /string \(date\)/.test(d.to)))
  // every read of client 1000 shows it: one by one in 4.0 (default and every group), 3.0 and 1,
  // the batch reads and the search by its policy number
  const endpoints = new Set(diff.differences.map((d) => d.endpoint))
  t.same([...endpoints].sort(), [
    'GET /vendor/agency/{agencyId}/client/{clientId}',
    'GET /vendor/agency/{agencyId}/client/{clientId}?version=3.0',
    'GET /vendor/agency/{agencyId}/client/{clientId}?version=4.0',
    'GET /vendor/agency/{agencyId}/client/{clientId}?version=4.0&include=…',
    'GET /vendor/agency/{agencyId}/clients/search?version=3.0&policyNumber=…',
    'GET /vendor/agency/{agencyId}/clients/search?version=4.0&policyNumber=…&include=…',
    'POST /vendor/agency/{agencyId}/clients',
    'POST /vendor/agency/{agencyId}/clients?version=4.0&include=…'
  ])
})

t.test('compare: status, Content-Type, Denied and body differences, and usage', async (t) => {
  const [upstream, twin] = await Promise.all([sandbox(t), sandbox(t)])
  const alike = await compare(upstream.url, twin.url)
  t.equal(alike.code, 0, 'two sandboxes of the demo data answer alike')
  const client1000 = await (await fetch(`${upstream.url}/vendor/agency/1001/client/1000?version=4.0`, { headers: { authorization: 'Basic YWJjOjEyMw==' } })).json()
  for (const rule of [
    { match: { method: 'GET', path: '/vendor/agency/1001/offices' }, effect: { status: 503 } },
    { match: { method: 'GET', path: '/vendor/agency/1001/users' }, effect: { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'no users' } },
    { match: { method: 'GET', path: '/vendor/agency/1001/client/1000', version: '4.0' }, effect: { status: 200, headers: { denied: 'Invoices' }, body: client1000 } }
  ]) await control(twin.url, 'POST', '/faults', rule)
  const run = await compare(upstream.url, twin.url, ['--format', 'json'])
  t.equal(run.code, 1)
  const d = (JSON.parse(run.stdout) as Report).differences
  t.same(d.filter((x) => x.kind === 'status').map((x) => `${x.request} ${x.from} ${x.to}`).sort(), [
    'GET /vendor/agency/1001/offices 200 503',
    'GET /vendor/agency/1001/offices?version=3.0 200 503',
    'GET /vendor/agency/1001/offices?version=4.0 200 503'
  ])
  t.match(d.filter((x) => x.request === 'GET /vendor/agency/1001/users?version=4.0'), [
    { kind: 'body', from: 'JSON', to: 'not JSON: no users' },
    { kind: 'header', field: 'Content-Type', from: 'application/json; charset=utf-8', to: 'text/plain; charset=utf-8' }
  ])
  const allGroups = d.filter((x) => x.request.startsWith('GET /vendor/agency/1001/client/1000?version=4.0&include='))
  t.match(allGroups, [{ kind: 'header', field: 'Denied', from: '(none)', to: 'Invoices' }, { kind: 'presence', field: 'invoices', from: 'present', to: 'absent' }])
  t.equal(allGroups.length, 2, 'fields under an absent one are not repeated')

  const usage = await runCli(['compare', '--from', upstream.url, '--client-id', 'abc', '--client-secret', '123'])
  t.equal(usage.code, 2)
  t.match(usage.stderr, /--to is required/)
})
