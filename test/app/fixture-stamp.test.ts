import t, { type Test } from 'tap'
import { copyFileSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { ROOT } from '../../src/config.js'
import { AGENCY, testConfig } from '../helpers/app.js'
import { serveProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

const DEMO_FILE = join(ROOT, 'fixtures', 'demo.json')

/** A temp dir, removed at teardown, holding a copy of the demo fixture and a copy whose main agency is renamed. */
function fixtures (t: Test) {
  const dir = tempDir(t, 'sandbox-stamp-')
  const demo = join(dir, 'demo.json')
  copyFileSync(DEMO_FILE, demo)
  const other = join(dir, 'other.json')
  const doc = JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as { agencies: Array<{ agencyId: number; name: string }> }
  doc.agencies.find((a) => a.agencyId === AGENCY.main)!.name = 'Other Fixture Agency'
  writeFileSync(other, JSON.stringify(doc))
  return { db: join(dir, 'sandbox.db'), demo, other }
}

async function start (db: string, fixtures: string, resetOnStart = false) {
  const app = await buildApp(testConfig({ db, fixtures, resetOnStart }))
  await app.ready()
  const main = app.worlds.default.admin.listAgencies().find((a) => a.agencyId === AGENCY.main)!.name
  const result = { seededNow: app.worlds.startUp.seededNow, mismatch: app.worlds.startUp.fixtureMismatch, main }
  await app.close()
  return result
}

t.test('the database remembers which fixture seeded it, by content', async (t) => {
  const f = fixtures(t)
  t.match(await start(f.db, f.demo), { seededNow: true, mismatch: undefined, main: 'Harbor Insurance Group' })
  t.match(await start(f.db, f.demo), { seededNow: false, mismatch: undefined }, 'the same file: silent')

  utimesSync(f.demo, new Date(), new Date(Date.now() + 60_000))
  t.match(await start(f.db, f.demo), { seededNow: false, mismatch: undefined }, 'touched but the same content: silent')

  const copy = join(f.db, '..', 'copy-of-demo.json')
  copyFileSync(f.demo, copy)
  t.match(await start(f.db, copy), { seededNow: false, mismatch: undefined }, 'the same content under another name: silent')

  const other = await start(f.db, f.other)
  t.equal(other.seededNow, false)
  t.equal(other.main, 'Harbor Insurance Group', 'the old data is kept')
  t.match(other.mismatch, /seeded from .*demo\.json \(sha256 [0-9a-f]{12}…\), but the fixture .*other\.json has other content/)
  t.match(other.mismatch, /--reset-on-start \(SANDBOX_RESET_ON_START=true\)/, 'the warning names the fix')

  const reseeded = await start(f.db, f.other, true)
  t.match(reseeded, { seededNow: true, mismatch: undefined, main: 'Other Fixture Agency' }, '--reset-on-start seeds from the fixture')
  t.match(await start(f.db, f.other), { seededNow: false, mismatch: undefined }, 'and later starts recognise it')
  t.match((await start(f.db, f.demo)).mismatch, /other\.json/, 'back to the demo file: the warning again')
})

t.test('a reset with a posted document is not the start-up fixture', async (t) => {
  const f = fixtures(t)
  const app = await buildApp(testConfig({ db: f.db, fixtures: f.demo }))
  t.teardown(() => app.close())
  const doc = JSON.parse(readFileSync(f.other, 'utf8')) as object
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/reset', payload: doc })).statusCode, 200)
  await app.close()
  t.match((await start(f.db, f.demo)).mismatch, /seeded from \(posted to \/_sandbox\/reset\) \(sha256 [0-9a-f]{12}…\), but the fixture .*demo\.json has other content/)
})

t.test('serve says it loudly, in the log and with the fix; --reset-on-start re-seeds', async (t) => {
  const f = fixtures(t)
  const first = await serveProcess({ SANDBOX_DB: f.db, SANDBOX_FIXTURES: f.demo })
  first.child.kill('SIGTERM')
  await first.exited

  const second = await serveProcess({ SANDBOX_DB: f.db, SANDBOX_FIXTURES: f.other })
  second.child.kill('SIGTERM')
  await second.exited
  const warning = second.lines.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => l.level === 40)
  t.match(warning?.msg, /^WARNING: the database was seeded from .*demo\.json .* other content .*--reset-on-start/)

  const third = await serveProcess({ SANDBOX_DB: f.db, SANDBOX_FIXTURES: f.other }, ['--reset-on-start'])
  third.child.kill('SIGTERM')
  await third.exited
  t.notOk(third.lines.some((l) => /WARNING/.test(l)), 'no warning after re-seeding')
  t.match(third.lines.find((l) => /agency-sandbox .* listening/.test(l)), /"seeded":".*other\.json"/)
})
