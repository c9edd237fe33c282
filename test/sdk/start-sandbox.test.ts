import t from 'tap'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runInNewContext } from 'node:vm'
import { startSandbox, ControlError } from '../../src/index.js'
import { runCli } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

const basic = 'Basic ' + Buffer.from('abc:123').toString('base64')

t.test('startSandbox: a partner test suite drives the sandbox from code', async (t) => {
  const started = Date.now()
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  t.comment(`started in ${Date.now() - started} ms`) // start-up speed is measured by npm run bench, not asserted here
  t.match(sandbox.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.equal(runInNewContext('typeof gc'), 'undefined', 'the V8 flags of the caller\'s process are left alone (no expose-gc)')
  const { control } = sandbox
  t.match(await control.health(), { status: 'ok' })

  await control.clock.set('2027-03-01T12:00:00Z', true)
  await control.agencies.patch(1001, { connected: false })
  const res = await fetch(`${sandbox.url}/vendor/agency/1001/client/1000/log?version=4.0`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/json' },
    body: JSON.stringify({ refId: randomUUID(), ts: '2027-03-01T11:59:00Z', channel: 29, note: 'from a partner test' })
  })
  t.equal(res.status, 202)
  t.equal((await control.agencies.writes(1001, { status: 'pending' })).length, 1)
  t.match(await control.agencies.patch(1001, { connected: true }), { appliedPendingWrites: 1 })
  t.equal((await control.clients.get(1001, 1000)).details.modified, '2027-03-01T12:00:00.000Z')

  const rule = await control.faults.add({ match: { path: '/vendor/agencies' }, effect: { status: 503 }, times: 1 })
  t.equal((await fetch(`${sandbox.url}/vendor/agencies?version=4.0`, { headers: { authorization: basic } })).status, 503)
  t.equal((await fetch(`${sandbox.url}/vendor/agencies?version=4.0`, { headers: { authorization: basic } })).status, 200)
  t.match(await control.faults.list(), [{ id: rule.id, hits: 1 }])
  const journal = await control.requests.list({ method: 'GET' })
  t.same(journal.map((e) => e.status), [503, 200])
  await control.requests.clear()
  t.same(await control.requests.list(), [])

  const state = await control.state()
  await control.clients.delete(1001, 1000)
  await control.reset(state)
  t.equal((await control.clients.get(1001, 1000)).deleted, false)
  await t.rejects(control.clients.get(1001, 424242), ControlError)
  await control.reset()
  t.equal((await control.agencies.writes(1001)).length, 0)
})

t.test('startSandbox with a control token and a fixture file', async (t) => {
  const sandbox = await startSandbox({ controlToken: 'tok', fixture: join(process.cwd(), 'fixtures', 'demo.json') })
  t.teardown(() => sandbox.close())
  t.match(await sandbox.control.info(), { settings: { controlToken: true } })
  const res = await fetch(`${sandbox.url}/_sandbox/info`)
  t.equal(res.status, 401)
})

t.test('startSandbox with a fixture document of an earlier format converts it; an invalid one throws its grouped errors', async (t) => {
  const doc = JSON.parse(readFileSync(join(process.cwd(), 'fixtures', 'demo.json'), 'utf8'))
  const client = doc.agencies[0].clients[0]
  client.details.agencyNum = 1001
  client.policies[0].term = 12
  client.policies[0].coverages[0].premium = 1822.19
  delete client.policies[0].title
  const sandbox = await startSandbox({ fixture: doc })
  t.teardown(() => sandbox.close())
  const read = await (await fetch(`${sandbox.url}/vendor/agency/1001/client/${client.clientNumber}?version=4.0`, { headers: { authorization: basic } })).json()
  t.match(read, { details: { agencyNum: '1001' }, policies: [{ term: '12M', title: '', coverages: [{ premium: '1822.19' }] }] })
  t.equal(client.details.agencyNum, 1001, "the caller's document is left as it was")

  client.policies[0].coverages[0].premium = true
  await t.rejects(startSandbox({ fixture: doc }), {
    name: 'FixtureError',
    message: /^invalid fixture \(given to startSandbox\): 1 error in 1 group\n {2}agencies\[0\]\.clients\[0\]\.policies\[0\]\.coverages\[0\]\.premium: must be a string or null, e\.g\. "412\.00" \(found true\)$/
  })
})

t.test('CLI generate: deterministic fixtures of any size, valid by the CLI validate', async (t) => {
  const dir = tempDir(t, 'sandbox-gen-')
  const a = join(dir, 'a.json')
  const b = join(dir, 'b.json')
  let res = await runCli(['generate', '--agencies', '2', '--clients', '150', '--seed', '9', '--out', a])
  t.equal(res.code, 0, res.stderr)
  t.match(res.stderr, /wrote .*2 agencies x 150 clients/)
  res = await runCli(['generate', '--agencies', '2', '--clients', '150', '--seed', '9', '--out', b])
  t.equal(readFileSync(a, 'utf8'), readFileSync(b, 'utf8'), 'same seed, same bytes')
  const fixture = JSON.parse(readFileSync(a, 'utf8'))
  t.equal(fixture.agencies.length, 2)
  t.equal(fixture.agencies[0].clients.length, 150)
  res = await runCli(['validate', a])
  t.equal(res.code, 0)
  res = await runCli(['generate', '--clients', 'many'])
  t.equal(res.code, 2)
  t.match(res.stderr, /--clients must be a whole number/)
  res = await runCli(['generate', '--help'])
  t.equal(res.code, 0)
  t.match(res.stdout, /--seed/)
})
