import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { createHash, generateKeyPairSync, verify } from 'node:crypto'
import canonicalize from 'canonicalize'
import { signingKeyOf, signReport } from '../../../src/domain/examiner/signature.js'
import { verifyReport, InvalidKeyError, type ReportVerification } from '../../../src/index.js'
import { ReportSchema, type Report } from '../../../src/schemas/examiner.js'
import { build, schemaErrors, type Teardown } from '../../helpers/app.js'
import { endedReport, startSession, vendor } from '../../helpers/examiner.js'

/**
 * Signed readiness reports: with a signing key, an ended session's JSON report carries an Ed25519
 * signature over its canonical JSON, names its signer, and is served in that canonical form;
 * verifyReport (the CLI's and the SDK's) checks it, and every change to what it covers is caught,
 * with the reason. The checks of the file's bytes are in report-verification.test.ts.
 */

const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, publicPem: publicKey.export({ type: 'spki', format: 'pem' }) as string, publicKey }
}
const key = pair()
const SIGNER = 'Northwind partner programme'

async function signingApp (t: Teardown): Promise<FastifyInstance> {
  return build(t, { config: { signingKey: signingKeyOf(key.privatePem), signerName: SIGNER } })
}

const failure = (result: ReportVerification) => (result.valid ? 'valid' : `${result.reason}: ${result.message}`)
type Signed = Report & { signature: NonNullable<Report['signature']>, signer: NonNullable<Report['signer']> }

t.test('an ended session\'s report is signed over its canonical JSON and served in that form; it names its signer, judge and world', async (t) => {
  const app = await signingApp(t)
  const before = Date.now()
  const { report, body } = await endedReport(app)
  t.equal(report.verdict, 'fail', 'a report with findings (batch-over-limit)')
  t.ok(report.sync.length > 0 && report.coverage.operations.length > 0, 'with a sync check and coverage')
  const { signature } = report
  t.ok(signature, 'it carries a signature')
  t.same(Object.keys(signature!).sort(), ['algorithm', 'final', 'keyId', 'signedAt', 'value'], 'these members and no others')
  t.equal(signature!.algorithm, 'Ed25519')
  t.equal(signature!.keyId, createHash('sha256').update(key.publicKey.export({ type: 'spki', format: 'der' })).digest('hex'), 'the key id is the SHA-256 of the public key\'s DER')
  t.ok(Date.parse(signature!.signedAt) >= before - 1000, 'signed now, in real time')
  t.equal(signature!.final, true)
  t.same(report.signer, { keyId: signature!.keyId, name: SIGNER }, 'the signer: the key and who holds it')
  t.equal(report.world.id, 'default')
  t.equal(report.judgedBy.rules.find((r) => r.id === 'batch-over-limit')?.outcome, 'fail')
  t.same(schemaErrors(ReportSchema, report), [], 'the Report schema describes it')
  t.equal(body, canonicalize(report), 'served byte for byte in its canonical form (RFC 8785), as the canonicalize package writes it')

  // what a third party does: drop signature.value, canonical JSON (RFC 8785), UTF-8, Ed25519
  const { value, ...block } = signature!
  const signed = Buffer.from(canonicalize({ ...report, signature: block })!, 'utf8')
  t.ok(verify(null, signed, key.publicKey, Buffer.from(value, 'base64')), 'the signature is over the canonical form of everything else')
  t.equal(failure(verifyReport(body, key.publicPem)), 'valid', 'verifyReport takes the text as served')
  t.equal(failure(verifyReport(Buffer.from(body), key.publicPem)), 'valid', 'and its bytes')
  t.equal(failure(verifyReport(JSON.parse(body), key.publicPem)), 'valid', 'and the parsed report')
  t.equal(failure(verifyReport(report, key.privatePem)), 'valid', 'with the private key too (its public key derived)')
})

t.test('an open session\'s report is provisional and unsigned, and its final report a 409 naming it; junit and html are unsigned; no key, no signature', async (t) => {
  const app = await signingApp(t)
  const open = await startSession(app)
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  const provisional = (await app.inject({ url: `/_sandbox/sessions/${open.id}/report` })).json() as Report
  t.equal(provisional.session.endedAt, undefined)
  t.equal(provisional.signature, undefined, 'an open session\'s report is not signed')
  t.equal(provisional.signer, undefined, 'nor does it name a signer')
  t.match(failure(verifyReport(provisional, key.publicPem)), /^unsigned: the report has no signature/)
  const final = await app.inject({ url: `/_sandbox/sessions/${open.id}/report?final=true` })
  t.equal(final.statusCode, 409)
  t.match(final.json().detail, `Session ${open.id} is still open: its report so far is provisional and unsigned; end it first (POST …/sessions/${open.id}/end)`)
  await app.inject({ method: 'POST', url: `/_sandbox/sessions/${open.id}/end` })
  t.equal((await app.inject({ url: `/_sandbox/sessions/${open.id}/report?final=true` })).json().signature?.final, true, 'ended: the final report, signed')
  for (const format of ['junit', 'html']) {
    const res = await app.inject({ url: `/_sandbox/sessions/${open.id}/report?format=${format}` })
    t.equal(res.statusCode, 200)
    t.notMatch(res.body, /"signature"|Ed25519/, `${format} as before`)
  }

  const unsigned = await build(t)
  const { report } = await endedReport(unsigned)
  t.equal(report.signature, undefined, 'a sandbox without a key signs nothing')
  t.match(failure(verifyReport(report, key.publicPem)), /^unsigned: /)
})

t.test('every change to what the signature covers is caught, with its reason', async (t) => {
  const app = await signingApp(t)
  const { body } = await endedReport(app)
  const fresh = () => JSON.parse(body) as Signed
  t.equal(failure(verifyReport(fresh(), key.publicPem)), 'valid')
  const other = pair()
  const TAMPERED = 'tampered: the signature does not match the content: the report was changed after it was signed'

  const tampered: Array<[string, (r: Signed) => void]> = [
    ['the verdict flipped', (r) => { r.verdict = 'pass' }],
    ['the evidence changed', (r) => { r.evidence.listings += 1 }],
    ['a finding removed', (r) => { r.findings.shift() }],
    ['a count changed', (r) => { r.findings[0].count += 1 }],
    ['a sync set changed', (r) => { r.sync[0].missing.count += 1 }],
    ['coverage changed', (r) => { r.coverage.checklist[0].exercised = !r.coverage.checklist[0].exercised }],
    ['the session\'s endedAt changed', (r) => { r.session.endedAt = '2031-01-01T00:00:00.000Z' }],
    ['the session\'s client changed', (r) => { r.session.clientId = 'someone-else' }],
    ['a rule\'s outcome changed', (r) => { r.judgedBy.rules[0].outcome = 'pass' }],
    ['the build changed', (r) => { r.judgedBy.build = `git:${'0'.repeat(40)}` }],
    ['the version changed', (r) => { r.judgedBy.version = '9.9.9' }],
    ['the world changed', (r) => { r.world.id = 'w0123456789' }],
    ['the start changed', (r) => { r.world.startDigest = '0'.repeat(64) }],
    ['a tenant added', (r) => { r.world.tenant = { id: 't0123456789', name: 'someone' } }],
    ['the signer renamed', (r) => { r.signer.name = 'the vendor' }],
    ['the signing time changed', (r) => { r.signature.signedAt = '2031-01-01T00:00:00.000Z' }],
    ['a member added', (r) => { (r as unknown as Record<string, unknown>).approvedBy = 'partner team' }],
    ['the signature altered', (r) => { r.signature.value = (r.signature.value[0] === 'A' ? 'B' : 'A') + r.signature.value.slice(1) }]
  ]
  for (const [change, apply] of tampered) {
    const report = fresh()
    apply(report)
    t.equal(failure(verifyReport(report, key.publicPem)), TAMPERED, change)
  }
  const truncated = fresh()
  truncated.signature.value = truncated.signature.value.slice(4)
  t.match(failure(verifyReport(truncated, key.publicPem)), /^tampered: its signature value is not an Ed25519 signature/)
  const extra = fresh()
  ;(extra.signature as unknown as Record<string, unknown>).sandboxVersion = '0.1.0'
  t.equal(failure(verifyReport(extra, key.publicPem)), 'tampered: its signature block holds "sandboxVersion", which no signature holds (algorithm, final, keyId, signedAt, value)', 'an unknown field in the signature block')
  const notFinal = fresh()
  ;(notFinal.signature as unknown as Record<string, unknown>).final = false
  t.match(failure(verifyReport(notFinal, key.publicPem)), /^tampered: its signature block is not a final report's/)
  const otherSigner = fresh()
  otherSigner.signer.keyId = signingKeyOf(other.privatePem).keyId
  t.equal(failure(verifyReport(otherSigner, key.publicPem)), 'tampered: its signer does not name the key that signed it')

  t.equal(failure(verifyReport(fresh(), other.publicPem)), `other-key: it is signed by the key "${fresh().signature.keyId}", not by the key given (${signingKeyOf(other.privatePem).keyId})`)
  t.equal(failure(verifyReport(fresh(), [other.publicPem, key.publicPem])), 'valid', 'the key is found among the keys given')
  t.equal(failure(verifyReport(fresh(), other.publicPem + key.publicPem)), 'valid', 'in one PEM text of several keys too')
  const keyIdChanged = fresh()
  keyIdChanged.signature.keyId = keyIdChanged.signer.keyId = signingKeyOf(other.privatePem).keyId
  t.equal(failure(verifyReport(keyIdChanged, other.publicPem)), TAMPERED, 'a key id made to match another key')
  const algorithm = fresh()
  ;(algorithm.signature as { algorithm: string }).algorithm = 'RS256'
  t.equal(failure(verifyReport(algorithm, key.publicPem)), 'unknown-algorithm: it is signed with the algorithm "RS256"; reports are signed with Ed25519')
  const surrogate = JSON.parse(body.replace('"name":"nightly sync"', '"name":"nightly \\ud800 sync"')) as Report
  t.equal(failure(verifyReport(surrogate, key.publicPem)), 'tampered: it holds a value no signed report holds (a lone surrogate, a number out of range): it was changed')
  const { signature: _dropped, ...unsigned } = fresh()
  t.match(failure(verifyReport(unsigned, key.publicPem)), /^unsigned: /)
  t.match(failure(verifyReport([fresh()], key.publicPem)), /^not-a-report: /)
  t.throws(() => verifyReport(fresh(), 'not a key'), new InvalidKeyError('the key given is not a PEM public key (BEGIN PUBLIC KEY) nor a PEM private key'))
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }) as string
  t.throws(() => verifyReport(fresh(), ec), /the key given is a key of type ec, not Ed25519/)
})

t.test('a world\'s report names its world, its text in UTF-8', async (t) => {
  const app = await signingApp(t)
  const created = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { name: 'Welt' } })
  const world = created.json() as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  const { clientId, clientSecret } = world.integrations[0]
  const { report, body } = await endedReport(app, `/worlds/${world.id}`, 'Basic ' + Buffer.from(`${clientId}:${clientSecret}`).toString('base64'), 'Nächtlicher Abgleich ✓ 😀')
  t.match(report.world, { id: world.id, name: 'Welt', tenant: null })
  t.equal(report.session.name, 'Nächtlicher Abgleich ✓ 😀')
  t.ok(report.findings.length > 0, 'the world\'s own session recorded the traffic')
  t.equal(failure(verifyReport(body, key.publicPem)), 'valid')
  report.world.id = 'default'
  t.match(failure(verifyReport(report, key.publicPem)), /^tampered: /, 'another world\'s report cannot pass as the default world\'s')
})

t.test('a lone surrogate (JSON can escape one, UTF-8 cannot hold it) is signed as U+FFFD, not refused', async (t) => {
  const app = await signingApp(t)
  const { report } = await endedReport(app)
  const { signature: _signature, ...unsigned } = report
  unsigned.session.name = `lone ${String.fromCharCode(0xd800)} surrogate`
  unsigned.findings[0].message += String.fromCharCode(0xdc00)
  const signed = (await signReport(unsigned, { key: signingKeyOf(key.privatePem), signerName: SIGNER }))!
  t.equal(signed.report.session.name, 'lone \ufffd surrogate')
  t.ok(signed.report.findings[0].message.endsWith('\ufffd'))
  t.equal(failure(verifyReport(signed.text, key.publicPem)), 'valid')
  t.equal(await signReport({ ...unsigned, session: { ...unsigned.session, endedAt: undefined } }, { key: signingKeyOf(key.privatePem), signerName: SIGNER }),
    undefined, 'an open session\'s report is not signed')
})
