import t from 'tap'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startServer } from '../../src/server.js'
import { DEMO, demoFixture, testConfig } from '../helpers/app.js'
import { runCli, serveProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

t.test('over a real socket: health, then a 4.0 read with Basic auth', async (t) => {
  const server = await startServer(testConfig({ port: 0 }), { fixture: demoFixture() })
  t.teardown(() => server.close())
  const health = await fetch(server.url + '/_sandbox/health')
  t.equal(health.status, 200)
  t.match(await health.json(), { status: 'ok' })
  const res = await fetch(server.url + '/vendor/agencies?version=4.0', { headers: { authorization: DEMO } })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /application\/json/)
  t.ok(((await res.json()) as unknown[]).length >= 3)
  const denied = await fetch(server.url + '/vendor/agencies?version=4.0')
  t.equal(denied.status, 401)
})

t.test('the CLI serves, never logs credentials, stops cleanly on SIGTERM and keeps data', async (t) => {
  const dir = tempDir(t, 'sandbox-cli-')
  const db = join(dir, 'data', 'sandbox.db')
  const first = await serveProcess({ SANDBOX_DB: db })
  t.teardown(() => first.child.kill('SIGKILL'))
  t.ok(first.lines.some((l) => l.includes('fixtures/demo.json')), 'first start seeds from the demo fixture')
  const res = await fetch(first.url + '/vendor/agencies?version=4.0', { headers: { authorization: DEMO } })
  t.equal(res.status, 200)
  await fetch(first.url + '/vendor/agencies?version=4.0', { headers: { authorization: 'Basic bm9ib2R5OnNlY3JldA==' } })
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0, 'SIGTERM exits 0')
  const log = first.lines.join('\n')
  t.notOk(log.includes(DEMO.slice(6)), 'the Authorization header is not logged')
  t.notOk(log.includes('bm9ib2R5OnNlY3JldA=='), 'nor a wrong one')
  t.match(log, /shutting down/)
  t.notOk(existsSync(db + '-wal'), 'the database was closed cleanly (WAL checkpointed)')

  const second = await serveProcess({ SANDBOX_DB: db })
  t.teardown(() => second.child.kill('SIGKILL'))
  t.ok(second.lines.some((l) => l.includes('kept existing data')), 'a later start keeps the data')
  second.child.kill('SIGINT')
  t.equal(await second.exited, 0, 'SIGINT exits 0')
})

t.test('a bad fixture fails start-up listing every error with its path', async (t) => {
  const dir = tempDir(t, 'sandbox-bad-')
  const file = join(dir, 'bad.json')
  const fixture = demoFixture() as unknown as { agencies: { agencyId: unknown; defaultOfficeId: number; users: { username: string }[] }[] }
  fixture.agencies[0].agencyId = 'one'
  fixture.agencies[1].users[0].username = 'TOOLONG'
  writeFileSync(file, JSON.stringify(fixture))
  const res = await runCli(['serve'], { SANDBOX_DB: ':memory:', SANDBOX_FIXTURES: file, PORT: '0', LOG_LEVEL: 'silent' })
  t.equal(res.code, 1)
  t.match(res.stderr, /agencies\[0\]\.agencyId/)
  t.match(res.stderr, /agencies\[1\]\.users\[0\]\.username/)
})

t.test('validate and help exit codes', async (t) => {
  const dir = tempDir(t, 'sandbox-val-')
  const good = join(dir, 'good.json')
  writeFileSync(good, JSON.stringify(demoFixture()))
  let res = await runCli(['validate', good])
  t.equal(res.code, 0)
  t.match(res.stdout, /valid fixture/)

  const bad = join(dir, 'bad.json')
  const fixture = demoFixture()
  fixture.integrations[0].agencies[0].agencyId = 4242
  fixture.agencies[0].clients[1].clientNumber = fixture.agencies[0].clients[0].clientNumber
  writeFileSync(bad, JSON.stringify(fixture))
  res = await runCli(['validate', bad])
  t.equal(res.code, 1)
  t.match(res.stderr, /integrations\[0\]\.agencies\[0\]\.agencyId: agency 4242 is not defined/)
  t.match(res.stderr, /agencies\[0\]\.clients\[1\]\.clientNumber: duplicate clientNumber/)

  writeFileSync(bad, '{ not json')
  res = await runCli(['validate', bad])
  t.equal(res.code, 1)
  t.match(res.stderr, /cannot read JSON/)

  res = await runCli(['--help'])
  t.equal(res.code, 0)
  t.match(res.stdout, /serve.*validate.*generate/s)
  res = await runCli(['serve', '--help'])
  t.equal(res.code, 0)
  t.match(res.stdout, /SANDBOX_DB/)
  res = await runCli(['bogus'])
  t.equal(res.code, 2)
  res = await runCli(['serve', '--nope'])
  t.equal(res.code, 2)
  res = await runCli(['serve'], { PORT: 'eighty' })
  t.equal(res.code, 1)
  t.match(res.stderr, /PORT=eighty/)
})

t.test('hosted settings: the idle release, the lease and the instance URL, each refused outside its range', async (t) => {
  const { loadConfig } = await import('../../src/config.js')
  t.equal(loadConfig({}).hostedIdleReleaseSeconds, 600, 'ten minutes unless set')
  t.equal(loadConfig({ SANDBOX_HOSTED_IDLE_RELEASE_SECONDS: '0' }).hostedIdleReleaseSeconds, 0, '0: kept')
  t.throws(() => loadConfig({ SANDBOX_HOSTED_IDLE_RELEASE_SECONDS: '86401' }), /SANDBOX_HOSTED_IDLE_RELEASE_SECONDS=86401 is not a whole number of seconds from 0 to 86400/)
  t.equal(loadConfig({}).hostedLeaseMs, 2000, 'a lease of 2 s unless set')
  t.throws(() => loadConfig({ SANDBOX_HOSTED_LEASE_MS: '100' }), /SANDBOX_HOSTED_LEASE_MS=100 is not a whole number of milliseconds from 500 to 60000/)
  t.equal(loadConfig({ SANDBOX_INSTANCE_URL: 'http://sandbox-a:8080/' }).instanceUrl, 'http://sandbox-a:8080')
  t.throws(() => loadConfig({ SANDBOX_INSTANCE_URL: 'sandbox-a:8080/x' }), /SANDBOX_INSTANCE_URL/)
  t.throws(() => loadConfig({ SANDBOX_INSTANCE_URL: 'http://a:8080/path' }), /without a path/)
})

t.test('the simulator can be started by a setting', async (t) => {
  const { loadConfig } = await import('../../src/config.js')
  t.throws(() => loadConfig({ SANDBOX_SIMULATOR_RATE: 'lots' }), /SANDBOX_SIMULATOR_RATE/)
  t.same(loadConfig({ SANDBOX_SIMULATOR_RATE: '600', SANDBOX_SIMULATOR_SEED: '3' }).simulator, { ratePerMinute: 600, seed: 3 })
  const server = await startServer(testConfig({ port: 0, simulator: { ratePerMinute: 6000, seed: 3 } }), { fixture: demoFixture() })
  t.teardown(() => server.close())
  await new Promise((resolve) => setTimeout(resolve, 400))
  const status = await (await fetch(server.url + '/_sandbox/simulator')).json() as { running: boolean; changes: number }
  t.equal(status.running, true)
  t.ok(status.changes > 0, `made ${status.changes} changes`)
})
