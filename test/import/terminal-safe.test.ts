import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ESCAPES } from '../../bench/attack/hostile-upstream.js'
import { FakeUpstream, kindOf, sendJson, world } from '../../bench/attack/fake-upstream.js'
import { ROOT } from '../../src/config.js'
import { runCli, serveProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/import-instances.js'

/**
 * Text from elsewhere never reaches the terminal raw: what another instance answers (compare),
 * what a session holds or a server answers (report, every format), what a fixture's keys spell
 * (validate, serve). Window titles, screen clears, forged lines, clipboard writes, 8-bit CSI
 * and bidi overrides are printed as visible escapes, or in JSON and XML as escapes of their own
 * that keep the value. (The import's own lines: hostile-upstream.test.ts.)
 */

/** Characters a terminal acts on: C0 (but the line feed), DEL, C1, bidi embeddings, overrides and isolates. */
const ACTS_ON_TERMINAL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/ // eslint-disable-line no-control-regex
const raw = (text: string) => text.match(new RegExp(`.{0,30}${ACTS_ON_TERMINAL.source}.{0,30}`))?.[0]

t.test('compare: differences quoting the other instance, in text and JSON', async (t) => {
  const plain = await FakeUpstream.start(() => false)
  const hostile = await FakeUpstream.start((a, res) => {
    const kind = kindOf(a)
    if (kind === 'offices') return (sendJson(res, 200, world.offices().map((o) => ({ ...o, [`note${ESCAPES}`]: 1 }))), true)
    if (kind === 'client') {
      res.writeHead(200, { 'content-type': 'text/plain', denied: 'Invoices\u009b2J' })
      res.end(`not JSON ${ESCAPES}`)
      return true
    }
    return false
  })
  t.teardown(async () => {
    await plain.stop()
    await hostile.stop()
  })
  const args = ['compare', '--from', plain.origin, '--client-id', 'abc', '--client-secret', '123', '--to', hostile.origin, '--sample', '2']
  const text = await runCli(args)
  t.equal(text.code, 1, text.stderr)
  t.match(text.stdout, 'note\\x1B]0;pwned\\x07\\x1B[2J', 'a field name shown escaped')
  t.match(text.stdout, 'not JSON: not JSON \\x1B]0;pwned', 'a body shown escaped')
  t.equal(raw(text.stdout + text.stderr), undefined, 'nothing raw in the text report')
  const json = await runCli([...args, '--format', 'json'])
  t.equal(raw(json.stdout + json.stderr), undefined, 'nothing raw in the JSON report')
  const report = JSON.parse(json.stdout) as { differences: Array<{ field?: string; to: string }> }
  t.ok(report.differences.some((d) => d.field === `[].note${ESCAPES}`), 'the JSON keeps the field name as it is (its escapes are JSON\'s)')
  t.ok(report.differences.some((d) => d.to.includes('\u009b2J')), 'and the 8-bit CSI of the Denied header')
})

t.test('report: a session named with escape sequences, every format; an error body', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:' })
  t.teardown(() => { served.child.kill('SIGTERM') })
  const control = async (path: string, body?: unknown) =>
    (await fetch(`${served.url}/_sandbox${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) })).json() as Promise<{ id: number }>
  const { id } = await control('/sessions', { name: ESCAPES, clientId: 'abc' })
  await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: { authorization: 'Basic ' + Buffer.from('abc:wrong').toString('base64') } })
  await control(`/sessions/${id}/end`)
  for (const format of ['text', 'json', 'junit', 'html']) {
    const run = await runCli(['report', '--url', served.url, '--session', String(id), '--format', format])
    t.equal(run.code, 1, `${format}: the wrong secret is an error finding`)
    t.equal(raw(run.stdout + run.stderr), undefined, `${format}: nothing raw`)
    if (format === 'json') t.equal((JSON.parse(run.stdout) as { session: { name: string } }).session.name, ESCAPES, 'json: the same name, escaped as JSON')
  }

  const broken = createServer((_req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' })
    res.end(`failed ${ESCAPES}`)
  })
  await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { broken.close() })
  const failed = await runCli(['report', '--url', `http://127.0.0.1:${(broken.address() as AddressInfo).port}`, '--session', '1'])
  t.equal(failed.code, 1)
  t.match(failed.stderr, 'answered 500 failed \\x1B]0;pwned')
  t.equal(raw(failed.stdout + failed.stderr), undefined, 'the error line: nothing raw')
})

t.test('validate and serve: a fixture whose keys hold escape sequences', async (t) => {
  const dir = tempDir(t)
  const file = join(dir, 'hostile.json')
  const fixture = JSON.parse(readFileSync(join(ROOT, 'fixtures', 'demo.json'), 'utf8')) as { agencies: Array<Record<string, unknown>> }
  fixture.agencies[0][`x${ESCAPES}`] = true
  writeFileSync(file, JSON.stringify(fixture))
  const validated = await runCli(['validate', file])
  t.equal(validated.code, 1)
  t.match(validated.stderr, 'agencies[0]')
  t.match(validated.stderr, '\\x1B]0;pwned')
  t.equal(raw(validated.stdout + validated.stderr), undefined, 'validate: nothing raw')
  const served = await runCli(['serve', '--fixtures', file, '--db', ':memory:', '--port', '0'])
  t.equal(served.code, 1)
  t.equal(raw(served.stdout + served.stderr), undefined, 'serve refusing it: nothing raw')
})
