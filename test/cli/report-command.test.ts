import t from 'tap'
import { createServer } from 'node:net'
import { RULES } from '../../src/schemas/examiner.js'
import { DEMO, basic } from '../helpers/app.js'
import { runCli, serveProcess } from '../helpers/process.js'
import { descendants, parseXml } from '../helpers/xml.js'

/** `agency-sandbox report` against a real sandbox process with a control token. */

const TOKEN = 'report-cli-token'

t.test('agency-sandbox report: formats, --fail-on, exit codes', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:', SANDBOX_CONTROL_TOKEN: TOKEN })
  t.teardown(() => { served.child.kill('SIGTERM') })
  const { url } = served
  const control = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${url}/_sandbox${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    t.ok(res.ok, `${method} ${path} answered ${res.status}`)
    return res
  }
  const vendor = (path: string, authorization = DEMO) => fetch(`${url}/vendor${path}`, { headers: { authorization } })
  /** A session of abc's requests made by `run`, ended. */
  const session = async (name: string, run: () => Promise<unknown>) => {
    const started = await (await control('POST', '/sessions', { name, clientId: 'abc' })).json() as { id: number }
    await run()
    await control('POST', `/sessions/${started.id}/end`)
    return started.id
  }
  const report = (args: string[]) => runCli(['report', '--url', url, '--token', TOKEN, ...args])

  // failing: a 401 (auth-failed is an error); warning only: an agency never listed; clean: the agencies call and a read;
  // no evidence: the agencies call alone (no sync)
  const failing = await session('wrong secret <b>', () => vendor('/agencies?version=4.0', basic('abc', 'wrong')))
  const warning = await session('read without agencies', () => vendor('/agency/1001/client/1000?version=4.0'))
  const clean = await session('agencies and a read', async () => {
    await vendor('/agencies?version=4.0')
    await vendor('/agency/1001/client/1000?version=4.0')
  })
  const unseen = await session('agencies only', () => vendor('/agencies?version=4.0'))

  await t.test('text by default: the verdict and findings; exit 1 on an error', async (t) => {
    const run = await report(['--session', String(failing)])
    t.equal(run.code, 1, run.stderr)
    t.match(run.stdout, /^Session \d+ "wrong secret <b>" · abc · /)
    t.match(run.stdout, '\nVerdict: FAIL (1 error, 0 warnings, ')
    t.match(run.stdout, /ERROR +auth-failed ×1\n/)
    t.match(run.stdout, '  FAIL  auth-failed ×1')
    t.match(run.stderr, `session ${failing}: verdict fail; 1 finding at --fail-on error: auth-failed`)
  })

  await t.test('--format junit: what the server renders, one test case per rule, the error a failure', async (t) => {
    const run = await report(['--session', String(failing), '--format', 'junit'])
    t.equal(run.code, 1)
    const served = await (await control('GET', `/sessions/${failing}/report?format=junit`)).text()
    t.equal(run.stdout, served, 'the same XML as GET …/report?format=junit')
    const root = parseXml(run.stdout)
    t.equal(descendants(root, 'testcase').length, RULES.length + 1, 'the evidence, then every rule')
    t.same(descendants(root, 'failure').map((f) => f.attrs.type), ['auth-failed'])
  })

  await t.test('--format html and json', async (t) => {
    const html = await report(['--session', String(clean), '--format', 'html'])
    t.equal(html.code, 0, html.stderr)
    t.match(html.stdout, /^<!doctype html>/)
    t.match(html.stdout, 'data-verdict="pass"')
    t.match(html.stderr, `session ${clean}: verdict pass; no finding at --fail-on error`)
    const json = await report(['--session', String(clean), '--format', 'json'])
    t.equal(json.code, 0)
    const served = await (await control('GET', `/sessions/${clean}/report`)).text()
    t.equal(json.stdout, served, 'the report the server answers, byte for byte')
  })

  await t.test('no evidence fails whatever --fail-on says; a session still open is refused, named', async (t) => {
    const run = await report(['--session', String(unseen), '--format', 'junit'])
    t.equal(run.code, 1)
    t.match(run.stderr, `session ${unseen}: verdict no-evidence: the run did no sync: no changed-clients listing answered and no client read; a run the examiner did not see proves nothing`)
    t.match(run.stdout, '<failure message="no evidence: the run did no sync')
    const open = await (await control('POST', '/sessions', { clientId: 'abc' })).json() as { id: number }
    const provisional = await report(['--session', String(open.id)])
    t.equal(provisional.code, 1)
    t.match(provisional.stderr, `answered 409 Session ${open.id} is still open: its report so far is provisional and unsigned; end it first`)
    t.equal(provisional.stdout, '')
  })

  await t.test('--fail-on warning fails a warn verdict; --fail-on error does not', async (t) => {
    const lenient = await report(['--session', String(warning), '--format', 'text'])
    t.match(lenient.stdout, 'Verdict: WARN')
    t.equal(lenient.code, 0, 'a warning does not reach --fail-on error (the default)')
    const strict = await report(['--session', String(warning), '--fail-on', 'warning'])
    t.equal(strict.code, 1, 'a warning reaches --fail-on warning')
    t.match(strict.stderr, 'at --fail-on warning: agency-not-listed')
    const clean2 = await report(['--session', String(clean), '--fail-on', 'warning'])
    t.equal(clean2.code, 0, 'an info finding never fails')
  })

  await t.test('a report that cannot be read: exit 1 with the reason', async (t) => {
    const unknown = await report(['--session', '999999'])
    t.equal(unknown.code, 1)
    t.match(unknown.stderr, /answered 404 No session 999999/)
    t.equal(unknown.stdout, '')
    const noToken = await runCli(['report', '--url', url, '--session', String(clean)])
    t.equal(noToken.code, 1)
    t.match(noToken.stderr, 'protects its control API: pass --token (its SANDBOX_CONTROL_TOKEN, a tenant\'s token or the world\'s)')
    const badToken = await runCli(['report', '--url', url, '--session', String(clean), '--token', 'nope'])
    t.match(badToken.stderr, 'refused the control token')
    // a token may begin with a dash (a base64url one does once in 64): it is the option's value, not a usage error
    const dashed = await runCli(['report', '--url', url, '--session', String(clean), '--token', '-Xy_9dashed'])
    t.equal(dashed.code, 1, dashed.stderr)
    t.match(dashed.stderr, 'refused the control token')
    // a port that was free a moment ago: nothing listens there
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const closed = await runCli(['report', '--url', `http://127.0.0.1:${port}`, '--session', '1'])
    t.equal(closed.code, 1)
    t.match(closed.stderr, `cannot reach http://127.0.0.1:${port}: ECONNREFUSED`)
  })
})

t.test('agency-sandbox report: usage errors exit 2 and name the option', async (t) => {
  const cases: [string[], string][] = [
    [['--session', '1'], '--url is required'],
    [['--url', 'http://127.0.0.1:9'], '--session is required'],
    [['--url', 'ftp://x', '--session', '1'], '--url must be an http(s) URL'],
    [['--url', 'not a url', '--session', '1'], '--url must be an http(s) URL such as'],
    [['--url', 'http://127.0.0.1:9', '--session', 'abc'], '--session must be a session id'],
    [['--url', 'http://127.0.0.1:9', '--session', '0'], '--session must be a session id'],
    [['--url', 'http://127.0.0.1:9', '--session', '1', '--format', 'xml'], '--format must be one of text, json, junit, html'],
    [['--url', 'http://127.0.0.1:9', '--session', '1', '--fail-on', 'info'], '--fail-on must be error or warning'],
    [['--url', 'http://127.0.0.1:9', '--session', '1', '--world', 'w1/../x'], '--world must be a world id (w and ten letters or digits, as POST /_sandbox/worlds answers) or default, got \'w1/../x\''],
    [['--url', 'http://127.0.0.1:9', '--session', '1', 'extra'], 'report takes no positional arguments'],
    [['--url', 'http://127.0.0.1:9', '--session', '1', '--colour'], 'Unknown option \'--colour\''],
    [['--url', 'http://127.0.0.1:9', '--session', '1', '--token', '--world', 'default'], 'Option \'--token\' argument is ambiguous']
  ]
  for (const [args, message] of cases) {
    const run = await runCli(['report', ...args])
    t.equal(run.code, 2, `${args.join(' ')}: exit 2`)
    t.match(run.stderr, message, `${args.join(' ')}: ${message}`)
    t.match(run.stderr, 'Usage: agency-sandbox report', 'with the command\'s usage')
  }
  const help = await runCli(['report', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, '--fail-on error|warning')
  const main = await runCli(['--help'])
  t.match(main.stdout, /\n {2}report +print an ended examiner session's report/)
})
