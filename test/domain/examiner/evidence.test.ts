import t from 'tap'
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { BUILD } from '../../../src/build-stamp.js'
import { PACKAGE_VERSION } from '../../../src/config.js'
import { RULES, RULES_VERSION, type Report, type Session } from '../../../src/schemas/examiner.js'
import { AGENCY, build, demoFixture, overPostgres } from '../../helpers/app.js'
import { clientIds, readInBatches, reportOf, vendor } from '../../helpers/examiner.js'

/**
 * Evidence before a verdict: a session that saw nothing, or no sync, never passes; a session of a
 * Client Id the world does not have is refused; every rule of a report has its outcome, and the
 * report names the build that judged it and the data the world started from.
 */

const ctl = (app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: unknown, token?: string) =>
  app.inject({ method, url: `/_sandbox${url}`, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as string }) })
const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex')
const outcomes = (report: Report) => Object.fromEntries(report.judgedBy.rules.map((r) => [r.id, r.outcome]))

t.test('a session that recorded nothing ends no-evidence, never pass', async (t) => {
  const app = await build(t)
  const { id } = (await ctl(app, 'POST', '/sessions', { name: 'empty', clientId: 'abc' })).json() as Session
  const summary = (await ctl(app, 'POST', `/sessions/${id}/end`)).json()
  t.equal(summary.verdict, 'no-evidence')
  t.same(summary.evidence, { requests: 0, listings: 0, clientReads: 0 })
  const report = await reportOf(app, id)
  t.equal(report.verdict, 'no-evidence', 'the kept report says so too')
  t.same(Object.values(outcomes(report)).filter((o) => o !== 'not-exercised'), [], 'no rule passed: nothing was exercised')
  const junit = (await ctl(app, 'GET', `/sessions/${id}/report?format=junit`)).body
  t.match(junit, /<testcase classname="agency-sandbox.examiner" name="evidence" time="0">\n {6}<failure message="no evidence: the session recorded no request of Client Id abc" type="no-evidence">/)
})

t.test('requests without a sync (no listing, no client read) are no evidence; a listing or a read is', async (t) => {
  const app = await build(t)
  const { id } = (await ctl(app, 'POST', '/sessions', { clientId: 'abc' })).json() as Session
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/offices?version=4.0`)
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`, { authorization: 'Basic ' + Buffer.from('abc:wrong').toString('base64') })
  let report = await reportOf(app, id)
  t.same(report.evidence, { requests: 3, listings: 0, clientReads: 0 }, 'a read refused with 401 reads nothing')
  t.equal(report.verdict, 'fail', 'an error finding still fails: it is evidence of a fault')
  const clean = (await ctl(app, 'POST', '/sessions', { clientId: 'abc' })).json() as Session
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  report = await reportOf(app, clean.id)
  t.equal(report.verdict, 'no-evidence', 'the agencies call alone is no sync')
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`)
  report = await reportOf(app, clean.id)
  t.same(report.evidence, { requests: 2, listings: 0, clientReads: 1 })
  t.equal(report.verdict, 'pass', 'one client read is a sync the rules can judge')
})

t.test('a session for a Client Id the world does not have is a 400 naming its Client Ids; nothing is started', async (t) => {
  const app = await build(t)
  const res = await ctl(app, 'POST', '/sessions', { clientId: 'abd' })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { errors: [{ field: 'clientId' }] })
  t.match(res.json().detail, /^clientId: 'abd' is not a Client Id of world default; its Client Ids are abc, .*northwind-crm/)
  t.equal((await ctl(app, 'POST', '/sessions', { clientId: 'abc@w0123456789' })).statusCode, 400, 'a world\'s Client Id is not the default world\'s')
  t.same((await ctl(app, 'GET', '/sessions')).json(), [], 'no session was started')
})

t.test('in a world, the fixture\'s bare Client Id is taken as the world\'s own, and the answer says which it records', async (t) => {
  const app = await build(t)
  const world = (await ctl(app, 'POST', '/worlds', { name: 'ci run' })).json() as { id: string, token: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  const started = await ctl(app, 'POST', `/worlds/${world.id}/sessions`, { clientId: 'abc' })
  t.equal(started.statusCode, 201)
  const session = started.json() as Session
  t.equal(session.clientId, `abc@${world.id}`, 'the Client Id it records')
  t.equal((await ctl(app, 'POST', `/worlds/${world.id}/sessions`, { clientId: `abc@${world.id}` })).json().clientId, `abc@${world.id}`, 'the full one as it is')
  const other = await ctl(app, 'POST', `/worlds/${world.id}/sessions`, { clientId: 'abc@w0123456789' })
  t.equal(other.statusCode, 400, 'another world\'s Client Id is not taken as this one\'s')
  t.match(other.json().detail, `its Client Ids are abc@${world.id}`)
  const abc = world.integrations.find((i) => i.clientId === `abc@${world.id}`)!
  const authorization = 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64')
  await vendor(app, 'GET', '/vendor/agencies?version=4.0', { authorization })
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`, { authorization })
  const report = (await ctl(app, 'GET', `/worlds/${world.id}/sessions/${session.id}/report`)).json() as Report
  t.equal(report.session.recorded, 2, 'the world\'s requests are recorded')
  t.equal(report.verdict, 'pass')
})

t.test('a real run lists every rule with its outcome, the build that judged it and the data the world started from', async (t) => {
  const app = await build(t)
  const { id } = (await ctl(app, 'POST', '/sessions', { name: 'full sync', clientId: 'abc' })).json() as Session
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  await readInBatches(app, AGENCY.main, await clientIds(app, AGENCY.main))
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0&deleted=true&asOf=2000-01-01T00:00:00Z`)
  await ctl(app, 'POST', `/sessions/${id}/end`)
  const report = await reportOf(app, id)
  t.same(report.judgedBy.rules.map((r) => r.id), RULES.map((r) => r.id), 'every rule, in catalogue order')
  t.same(report.judgedBy.rules.map((r) => r.severity), RULES.map((r) => r.severity))
  const outcome = outcomes(report)
  t.match(outcome, { 'sync-missed': 'pass', 'batch-over-limit': 'pass', 'auth-failed': 'pass', 'full-sync-repeated': 'pass', 'deletion-missed': 'pass' }, 'what the run did, it passed')
  t.match(outcome, { 'write-retried-new-refid': 'not-exercised', 'refid-conflict': 'not-exercised', 'retry-after-ignored': 'not-exercised', 'mirror-missing': 'not-exercised', 'create-rate-exceeded': 'not-exercised' },
    'what it never did is not-exercised, not pass')
  t.equal(outcome['checklist-incomplete'], 'not-exercised', 'the go-live checklist\'s items were not exercised')
  t.ok(report.judgedBy.rules.every((r) => r.count === (report.findings.find((f) => f.rule === r.id)?.count ?? 0)), 'each rule\'s count is its finding\'s')
  t.equal(report.verdict, 'pass')
  t.same(report.judgedBy, { version: PACKAGE_VERSION, build: BUILD, rulesVersion: RULES_VERSION, rules: report.judgedBy.rules })
  t.match(report.judgedBy.build, /^(git:[0-9a-f]{40}|sha256:[0-9a-f]{64})$/, 'the build that judged (npm run build stamped it)')
  t.same(report.world, { id: 'default', name: 'default', tenant: null, startDigest: sha256(JSON.stringify(demoFixture())) },
    'the default world, started from the fixture given in memory (its JSON text)')
})

t.test('a world\'s report names its tenant, and the digest of what its data was loaded from, reset after reset', async (t) => {
  const app = await build(t)
  const tenant = (await ctl(app, 'POST', '/tenants', { name: 'Northwind partner programme' })).json() as { id: string, token: string }
  const world = (await ctl(app, 'POST', '/worlds', { name: 'tenant run' }, tenant.token)).json() as { id: string, token: string }
  const facts = async () => {
    const { id } = (await ctl(app, 'POST', `/worlds/${world.id}/sessions`, {}, world.token)).json() as Session
    return ((await ctl(app, 'GET', `/worlds/${world.id}/sessions/${id}/report`, undefined, world.token)).json() as Report).world
  }
  const started = await facts()
  t.match(started, { id: world.id, name: 'tenant run', tenant: { id: tenant.id, name: 'Northwind partner programme' } })
  t.match(started.startDigest, /^[0-9a-f]{64}$/, 'the snapshot it began as')
  t.not(started.startDigest, sha256(JSON.stringify(demoFixture())), 'a snapshot, not the fixture\'s text')
  const fixture = demoFixture()
  fixture.agencies[0].name = 'Renamed agency'
  const posted = Buffer.from(JSON.stringify(fixture, null, 1))
  const reset = await app.inject({ method: 'POST', url: `/_sandbox/worlds/${world.id}/reset`, headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/json' }, payload: posted })
  t.equal(reset.statusCode, 200, reset.body)
  t.equal((await facts()).startDigest, sha256(posted), 'reset to a posted fixture: the digest of the bytes posted')
  await ctl(app, 'POST', `/worlds/${world.id}/reset`, undefined, world.token)
  t.equal((await facts()).startDigest, started.startDigest, 'reset to its start: its start\'s digest again')
  const other = (await ctl(app, 'POST', '/worlds', { name: 'another' })).json() as { id: string }
  const { id: otherSession } = (await ctl(app, 'POST', `/worlds/${other.id}/sessions`)).json() as Session
  t.equal(((await ctl(app, 'GET', `/worlds/${other.id}/sessions/${otherSession}/report`)).json() as Report).world.startDigest, started.startDigest,
    'two worlds made from the start-up fixture share its snapshot, and so its digest')
})

t.test('the default world reset to a posted fixture names that fixture; its start again after a plain reset', async (t) => {
  const app = await build(t)
  const digest = async () => {
    const { id } = (await ctl(app, 'POST', '/sessions')).json() as Session
    return (await reportOf(app, id)).world.startDigest
  }
  const posted = Buffer.from(JSON.stringify(demoFixture()) + '\n')
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: { 'content-type': 'application/json' }, payload: posted })).statusCode, 200)
  t.equal(await digest(), sha256(posted))
  await ctl(app, 'POST', '/reset')
  t.equal(await digest(), sha256(JSON.stringify(demoFixture())))
})

t.test('the rules version is raised with the catalogue', async (t) => {
  // the catalogue as the version last raised for it saw it: a change of a rule's id or severity needs RULES_VERSION raised, and this digest
  const catalogue = sha256(RULES.map((r) => `${r.id} ${r.severity}`).join('\n'))
  t.same({ RULES_VERSION, catalogue }, { RULES_VERSION: 2, catalogue: 'c38ef2ed36aac41b114b7d344f1c59bd7d663ec2e153f72882d6042327c1b4c4' }, 'RULES_VERSION and the catalogue it was raised for')
})

t.test('a report kept before reports named their judge is answered with what can still be told, never a 500', { skip: overPostgres }, async (t) => {
  const app = await build(t)
  const { id } = (await ctl(app, 'POST', '/sessions', { clientId: 'abc' })).json() as Session
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`)
  await ctl(app, 'POST', `/sessions/${id}/end`)
  const { evidence: _evidence, judgedBy: _judgedBy, world: _world, ...older } = await reportOf(app, id)
  app.worlds.default.db.prepare('UPDATE examiner_sessions SET report = ? WHERE session_id = ?').run(JSON.stringify(older), id)
  const res = await ctl(app, 'GET', `/sessions/${id}/report`)
  t.equal(res.statusCode, 200)
  const kept = res.json() as Report
  t.equal(kept.verdict, older.verdict, 'its verdict as it was judged')
  t.same(kept.evidence, { requests: 2, listings: 0, clientReads: 1 }, 'its evidence read from its coverage')
  t.same(kept.judgedBy, { version: 'unknown', build: 'unknown', rulesVersion: 1, rules: [] })
  t.same(kept.world, { id: 'default', name: 'default', tenant: null, startDigest: 'unknown' })
})
