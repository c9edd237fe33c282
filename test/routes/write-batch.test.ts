/**
 * A world whose data is a file commits the partner writes of one turn of the event loop together
 * (src/domain/worlds/write-batch.ts), and answers each as if it were alone: a write refused
 * (404, 400, 409) keeps nothing of itself and takes nothing from the others, a RefId sent twice in
 * one turn is one write, and every write answered is committed. A world in memory commits each
 * write at once. The crash test (test/reliability/crash.test.ts) kills the process while writing:
 * nothing acknowledged is lost.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { AGENCY, build, DEMO, demoFixture, overPostgres } from '../helpers/app.js'
import { attachment, logNote, receipt } from '../helpers/writes.js'

const auth = { authorization: DEMO }
const clients = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients
const [live, other] = clients.filter((c) => !c.deleted)
const gone = clients.find((c) => c.deleted)!

const post = (app: FastifyInstance, path: string, payload: unknown) =>
  app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/${path}?version=4.0`, headers: auth, payload: payload as object })
const logWrites = async (app: FastifyInstance) =>
  ((await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes?kind=log` })).json() as Array<{ refId: string }>).map((w) => w.refId)

/** An app over a database file, and a count of the commits of its default world's data. */
async function overFile (t: Parameters<typeof build>[0]): Promise<{ app: FastifyInstance, commits: () => number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-write-batch-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const app = await build(t, { config: { db: join(dir, 'sandbox.db') } })
  let commits = 0
  app.worlds.default.sql.onCommit(() => { commits++ })
  return { app, commits: () => commits }
}

t.test('writes sent at once are committed together, each answered as alone', { skip: overPostgres }, async (t) => {
  const { app, commits } = await overFile(t)
  const before = await logWrites(app)
  const notes = Array.from({ length: 4 }, () => logNote())
  const answers = await Promise.all(notes.map((note) => post(app, `client/${live.clientNumber}/log`, note)))
  t.same(answers.map((a) => a.statusCode), [200, 200, 200, 200])
  t.ok(commits() < notes.length, `${notes.length} notes in ${commits()} commit(s)`)
  t.same((await logWrites(app)).filter((id) => !before.includes(id)).sort(), notes.map((n) => n.refId).sort(), 'every note answered is kept')
})

t.test('a write refused keeps nothing of itself and takes nothing from the others of its commit', { skip: overPostgres }, async (t) => {
  const { app, commits } = await overFile(t)
  const before = await logWrites(app)
  const kept = logNote()
  const refused = [logNote(), logNote(), logNote({ ts: '2026-13-40T10:00:00Z' })]
  const answers = await Promise.all([
    post(app, `client/${live.clientNumber}/log`, kept),
    // its RefId inserted, then refused by the update of a client that is not live: the insert is undone
    post(app, `client/${gone.clientNumber}/log`, refused[0]),
    post(app, 'client/999999/log', refused[1]),
    post(app, `client/${other.clientNumber}/log`, refused[2])
  ])
  t.same(answers.map((a) => a.statusCode), [200, 404, 404, 400])
  t.equal(commits(), 1, 'one commit')
  t.same((await logWrites(app)).filter((id) => !before.includes(id)), [kept.refId], 'only the write answered 200 is kept')
})

t.test('a RefId sent twice in one commit is one write; with another body, a 409', { skip: overPostgres }, async (t) => {
  const { app } = await overFile(t)
  const before = await logWrites(app)
  const note = logNote()
  let answers = await Promise.all([post(app, `client/${live.clientNumber}/log`, note), post(app, `client/${live.clientNumber}/log`, note)])
  t.same(answers.map((a) => [a.statusCode, a.body]), [[200, 'Created'], [200, 'Created']])
  t.same((await logWrites(app)).filter((id) => !before.includes(id)), [note.refId], 'kept once')
  const reused = logNote()
  answers = await Promise.all([
    post(app, `client/${live.clientNumber}/log`, reused),
    post(app, `client/${live.clientNumber}/log`, { ...reused, note: 'another note' })
  ])
  t.same(answers.map((a) => a.statusCode), [200, 409])
})

t.test('receipts share the commit of their turn; attachments go through it too', { skip: overPostgres }, async (t) => {
  const { app, commits } = await overFile(t)
  // the first receipt loads the item check; the two after it arrive in one turn
  t.equal((await post(app, `client/${live.clientNumber}/receipts`, [receipt()])).statusCode, 200)
  const before = commits()
  const answers = await Promise.all([
    post(app, `client/${live.clientNumber}/receipts`, [receipt(), receipt()]),
    post(app, `client/${live.clientNumber}/receipts`, [receipt()])
  ])
  t.same(answers.map((a) => a.statusCode), [200, 200])
  t.equal(commits() - before, 1, 'two requests of receipts in one commit')
  // an attachment's content is decompressed and digested away from the event loop: its commit is that of the turn it comes back in
  const file = attachment(Buffer.from('%PDF-1.4 signed application'))
  const res = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${live.clientNumber}/attachment?version=4.0`, headers: { ...auth, ...file.headers }, payload: file.payload })
  t.equal(res.statusCode, 200, res.body)
  const content = await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/attachments/${file.headers.RefId}/content` })
  t.equal(content.body, '%PDF-1.4 signed application', 'its content is kept')
})

t.test('a world in memory commits each write at once', async (t) => {
  const app = await build(t)
  let commits = 0
  app.worlds.default.sql.onCommit(() => { commits++ })
  const answers = await Promise.all(Array.from({ length: 3 }, () => post(app, `client/${live.clientNumber}/log`, logNote())))
  t.same(answers.map((a) => a.statusCode), [200, 200, 200])
  t.equal(commits, 3)
})
