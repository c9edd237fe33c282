import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { startSandbox, ControlError, verifyReport } from '../../src/index.js'

/**
 * The SDK's side of signed reports: startSandbox({ signingKey }), control.signingKey() and
 * signingKeys(), sessions.finalReport (the text as served), and verifyReport, exported by the
 * package, checking what the control client answers.
 */

const { privateKey } = generateKeyPairSync('ed25519')
const privatePem = String(privateKey.export({ type: 'pkcs8', format: 'pem' }))
const abc = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }

t.test('a partner\'s suite signs with startSandbox({ signingKey }) and checks the report in code', async (t) => {
  const sandbox = await startSandbox({ signingKey: privatePem })
  t.teardown(() => sandbox.close())
  const { publicKey, keyId, signer } = await sandbox.control.signingKey()
  t.equal(signer, 'unnamed (SANDBOX_SIGNER_NAME not set)', 'the signer\'s name says it was not set')
  const list = await sandbox.control.signingKeys()
  t.match(list, { current: keyId, keys: [{ keyId, publicKey, status: 'current' }] })

  const session = await sandbox.control.sessions.start({ clientId: 'abc' })
  await fetch(`${sandbox.url}/vendor/agencies?version=4.0`, { headers: abc })
  await fetch(`${sandbox.url}/vendor/agency/1001/client/1000?version=4.0`, { headers: abc })
  t.equal((await sandbox.control.sessions.report(session.id)).signature, undefined, 'open: provisional, unsigned')
  const early = await sandbox.control.sessions.finalReport(session.id).then(() => undefined, (e: unknown) => e)
  t.ok(early instanceof ControlError && early.status === 409, 'open: no final report yet')
  await sandbox.control.sessions.end(session.id)
  const report = await sandbox.control.sessions.report(session.id)
  t.equal(report.signature?.keyId, keyId)
  const checked = verifyReport(report, publicKey)
  t.ok(checked.valid, 'the parsed report is valid')
  if (checked.valid) t.equal(checked.report.session.id, session.id)
  const text = await sandbox.control.sessions.finalReport(session.id)
  const strict = verifyReport(text, list)
  t.ok(strict.valid, 'the text as served is valid, checked against the key list')
  const flipped = verifyReport({ ...report, verdict: report.verdict === 'pass' ? 'fail' : 'pass' }, publicKey)
  t.same(flipped.valid ? 'valid' : flipped.reason, 'tampered')

  const world = await sandbox.world()
  const inWorld = await world.control.sessions.start()
  await fetch(`${sandbox.url}/vendor/agencies?version=4.0`, { headers: { authorization: world.authorization('abc') } })
  await world.control.sessions.end(inWorld.id)
  const worldReport = await world.control.sessions.finalReport(inWorld.id)
  const worldChecked = verifyReport(worldReport, publicKey)
  t.ok(worldChecked.valid)
  if (worldChecked.valid) {
    t.equal(worldChecked.report.world.id, world.id, 'a world\'s report names its world')
    t.equal(worldChecked.report.verdict, 'no-evidence', 'the agencies call alone: no evidence')
  }
})

t.test('control.signingKey() of a sandbox without a key is a 404; its key list is empty', async (t) => {
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const error = await sandbox.control.signingKey().then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof ControlError && error.status === 404, String(error))
  t.same(await sandbox.control.signingKeys(), { signer: 'unnamed (SANDBOX_SIGNER_NAME not set)', current: null, keys: [] })
})
