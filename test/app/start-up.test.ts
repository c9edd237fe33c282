import t from 'tap'
import { runCli, serveProcess } from '../helpers/process.js'
import { DEMO } from '../helpers/app.js'

const settle = () => new Promise((resolve) => setTimeout(resolve, 300))

t.test('the start-up line says where everything is; one log line per request; the console\'s own calls stay out of info', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:' })
  t.teardown(() => served.child.kill('SIGKILL'))
  const listening = JSON.parse(served.lines.find((l) => /listening on/.test(l))!) as Record<string, unknown>
  t.match(listening, {
    url: served.url,
    console: `${served.url}/_sandbox/ui`,
    docs: `${served.url}/docs`,
    db: ':memory:',
    controlToken: false,
    demo: 'Client Id abc, Client Secret 123'
  })
  t.match(String(listening.fixture), /fixtures\/demo\.json$/)

  const before = served.lines.length
  t.equal((await fetch(`${served.url}/vendor/agency/1001/client/1000?version=4.0`, { headers: { authorization: DEMO } })).status, 200)
  // the console: its page (which gives its cookie), its files, and a call of its own (with the cookie)
  const cookie = (await fetch(`${served.url}/_sandbox/ui/`)).headers.get('set-cookie')!.split(';')[0]!
  await fetch(`${served.url}/_sandbox/info`, { headers: { 'x-sandbox-console': '1', cookie } })
  await fetch(`${served.url}/_sandbox/ui/app.js`)
  await settle()
  const lines = served.lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>)
  t.equal(lines.length, 1, 'one line for the partner request, none for the console\'s')
  t.match(lines[0], { level: 30, method: 'GET', path: '/vendor/agency/1001/client/1000', status: 200, integration: 'abc', agency: 1001 })
  t.type(lines[0].ms, 'number')
  t.notMatch(JSON.stringify(lines), /YWJjOjEyMw|authorization/i, 'no credentials')

  const root = await fetch(`${served.url}/`, { redirect: 'manual' })
  t.equal(root.status, 302)
  t.equal(root.headers.get('location'), '/_sandbox/ui/', '/ leads to the console')

  const busy = await runCli(['serve', '--port', served.url.split(':').at(-1)!, '--db', ':memory:'], { LOG_PRETTY: 'false' })
  t.equal(busy.code, 1, 'a busy port fails the start')
  t.match(busy.stderr, /port 127\.0\.0\.1:\d+ is already in use; stop the other process or choose another port with --port N/)
  t.notMatch(busy.stderr, /at .*\(.*\.js:\d+/, 'no stack trace')
})

t.test('serve --help: settings aligned, defaults said plainly', async (t) => {
  const res = await runCli(['serve', '--help'])
  t.equal(res.code, 0)
  t.notMatch(res.stdout, /default \(/, 'no "(default (none))"')
  const settings = res.stdout.split('\n').filter((l) => /^ {2}[A-Z_]+ {2,}/.test(l))
  t.ok(settings.length >= 10)
  t.equal(new Set(settings.map((l) => l.search(/ {2}\S/))).size, 1, 'every meaning starts in the same column')
})
