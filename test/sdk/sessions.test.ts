import t from 'tap'
import { startSandbox, ControlError, type Report } from '../../src/index.js'
import { RULES } from '../../src/schemas/examiner.js'
import { descendants, parseXml } from '../helpers/xml.js'

/** The SDK's control.sessions: a partner's suite records a run and reads its report from code. */

const basic = (secret: string) => 'Basic ' + Buffer.from(`abc:${secret}`).toString('base64')

t.test('control.sessions: start, list, get, mirror, end, report in each format', async (t) => {
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const { sessions } = sandbox.control
  const vendor = (path: string, secret = '123') => fetch(`${sandbox.url}/vendor${path}`, { headers: { authorization: basic(secret) } })

  const session = await sessions.start({ name: 'sdk run', clientId: 'abc' })
  t.match(session, { name: 'sdk run', clientId: 'abc', recorded: 0, capped: false })
  t.notOk('endedAt' in session, 'open')
  const everyone = await sessions.start()
  t.equal(everyone.clientId, null, 'without clientId every integration is recorded')

  t.equal((await vendor('/agencies?version=4.0')).status, 200)
  t.equal((await vendor('/agencies?version=4.0', 'wrong')).status, 401)
  const ids = await (await vendor('/agency/1002/clients?version=4.0')).json() as number[]
  const batch = await fetch(`${sandbox.url}/vendor/agency/1002/clients?version=4.0`, {
    method: 'POST', headers: { authorization: basic('123'), 'content-type': 'application/json' }, body: JSON.stringify({ clientNumbers: ids })
  })
  const clients = await batch.json() as { clientNumber: number, details: { modified: string } }[]

  t.same((await sessions.list()).map((s) => s.id), [session.id, everyone.id], 'both sessions, oldest first')
  const mirror = clients.slice(1).map((c) => ({ clientNumber: c.clientNumber, modified: c.details.modified }))
  t.same(await sessions.mirror(session.id, { agencyId: 1002, clients: mirror }), { agencyId: 1002, clients: mirror.length })

  const summary = await sessions.end(session.id)
  t.equal(summary.verdict, 'fail')
  t.match(summary.session, { id: session.id, recorded: 4 })
  t.ok(summary.session.endedAt !== undefined, 'ended')
  t.ok(summary.findings.some((f) => f.rule === 'auth-failed'), 'the 401 is a finding')
  t.ok(summary.findings.some((f) => f.rule === 'mirror-missing'), 'the client left out of the mirror is a finding')
  t.equal((await sessions.get(session.id)).endedAt, summary.session.endedAt)

  const report: Report = await sessions.report(session.id)
  t.equal(report.verdict, 'fail')
  t.same(report.findings.map((f) => f.rule), summary.findings.map((f) => f.rule), 'the report has the summary\'s findings')
  const declared = report.sync.find((s) => s.source === 'declared')!
  t.same(declared.missing, { count: 1, clientNumbers: [clients[0]!.clientNumber] })
  t.same(await sessions.report(session.id, 'json'), report)
  const junit = await sessions.report(session.id, 'junit')
  t.equal(typeof junit, 'string')
  t.equal(descendants(parseXml(junit), 'testcase').length, RULES.length + 1, 'JUnit XML as text: the evidence and every rule')
  const html = await sessions.report(session.id, 'html')
  t.match(html, /^<!doctype html>/)
  t.match(html, 'data-verdict="fail"')

  const missing = await sessions.get(999_999).catch((e: unknown) => e)
  t.ok(missing instanceof ControlError, 'an unknown session throws ControlError')
  t.equal((missing as ControlError).status, 404)
})
