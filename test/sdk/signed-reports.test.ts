import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { startSandbox, ControlError, verifyReport } from '../../src/index.js'

/**
 * The SDK's side of signed reports: startSandbox({ signingKey }), control.signingKey(), and
 * verifyReport, exported by the package, checking what control.sessions.report answers.
 */

const { privateKey } = generateKeyPairSync('ed25519')
const privatePem = String(privateKey.export({ type: 'pkcs8', format: 'pem' }))

t.test('a partner\'s suite signs with startSandbox({ signingKey }) and checks the report in code', async (t) => {
  const sandbox = await startSandbox({ signingKey: privatePem })
  t.teardown(() => sandbox.close())
  const { publicKey, keyId } = await sandbox.control.signingKey()

  const session = await sandbox.control.sessions.start({ clientId: 'abc' })
  await fetch(`${sandbox.url}/vendor/agencies?version=4.0`, { headers: { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') } })
  t.equal((await sandbox.control.sessions.report(session.id)).signature, undefined, 'open: provisional, unsigned')
  await sandbox.control.sessions.end(session.id)
  const report = await sandbox.control.sessions.report(session.id)
  t.equal(report.signature?.keyId, keyId)
  const checked = verifyReport(report, publicKey)
  t.ok(checked.valid, 'valid')
  if (checked.valid) t.equal(checked.report.session.id, session.id)
  const flipped = verifyReport({ ...report, verdict: report.verdict === 'pass' ? 'fail' : 'pass' }, publicKey)
  t.same(flipped.valid ? 'valid' : flipped.reason, 'tampered')

  const world = await sandbox.world()
  const inWorld = await world.control.sessions.start()
  await fetch(`${sandbox.url}/vendor/agencies?version=4.0`, { headers: { authorization: world.authorization('abc') } })
  await world.control.sessions.end(inWorld.id)
  const worldReport = await world.control.sessions.report(inWorld.id)
  t.equal(worldReport.signature?.worldId, world.id, 'a world\'s report names its world')
  t.ok(verifyReport(worldReport, publicKey).valid)
})

t.test('control.signingKey() of a sandbox without a key is a 404', async (t) => {
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const error = await sandbox.control.signingKey().then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof ControlError && error.status === 404, String(error))
})
