import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import canonicalize from 'canonicalize'
import { signingKeyOf, signReport } from '../../../src/domain/examiner/signature.js'
import { verifyReport, InvalidKeyError, type ReportVerification } from '../../../src/index.js'
import { ReportSchema, type Report } from '../../../src/schemas/examiner.js'
import { PACKAGE_VERSION } from '../../../src/config.js'
import { AGENCY, build, DEMO, schemaErrors, type Teardown } from '../../helpers/app.js'
import { startSession, vendor } from '../../helpers/examiner.js'

/**
 * Signed readiness reports: with a signing key, an ended session's JSON report carries an Ed25519
 * signature over its canonical JSON, which verifyReport (the CLI's and the SDK's) checks; every
 * change to what it covers is caught, with the reason.
 */

const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, publicPem: publicKey.export({ type: 'spki', format: 'pem' }) as string, publicKey }
}
const key = pair()

async function signingApp (t: Teardown): Promise<FastifyInstance> {
  return build(t, { config: { signingKey: signingKeyOf(key.privatePem) } })
}

/** A session of abc with some traffic (an error finding, a sync, coverage), ended; its report as answered. */
async function endedReport (app: FastifyInstance, prefix = '', authorization = DEMO, name = 'nightly sync'): Promise<{ id: number, body: string, report: Report }> {
  const started = await app.inject({ method: 'POST', url: `/_sandbox${prefix}/sessions`, payload: { name } })
  const { id } = started.json() as { id: number }
  await vendor(app, 'GET', '/vendor/agencies?version=4.0', { authorization })
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { authorization })
  await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { authorization, payload: { clientNumbers: Array.from({ length: 201 }, (_, i) => 1000 + i) } })
  await app.inject({ method: 'POST', url: `/_sandbox${prefix}/sessions/${id}/end` })
  const res = await app.inject({ url: `/_sandbox${prefix}/sessions/${id}/report` })
  if (res.statusCode !== 200) throw new Error(`report answered ${res.statusCode}: ${res.body}`)
  return { id, body: res.body, report: res.json() }
}

const failure = (result: ReportVerification) => (result.valid ? 'valid' : `${result.reason}: ${result.message}`)

t.test('an ended session\'s report is signed over its canonical JSON; the signature names the key, time, version and world', async (t) => {
  const app = await signingApp(t)
  const before = Date.now()
  const { report, body } = await endedReport(app)
  t.equal(report.verdict, 'fail', 'a report with findings (batch-over-limit)')
  t.ok(report.sync.length > 0 && report.coverage.operations.length > 0, 'with a sync check and coverage')
  const { signature } = report
  t.ok(signature, 'it carries a signature')
  t.equal(signature!.algorithm, 'Ed25519')
  t.equal(signature!.keyId, createHash('sha256').update(key.publicKey.export({ type: 'spki', format: 'der' })).digest('hex'), 'the key id is the SHA-256 of the public key\'s DER')
  t.ok(Date.parse(signature!.signedAt) >= before - 1000, 'signed now, in real time')
  t.equal(signature!.sandboxVersion, PACKAGE_VERSION)
  t.equal(signature!.worldId, 'default')
  t.equal(signature!.final, true)
  t.same(schemaErrors(ReportSchema, report), [], 'the Report schema describes it')

  // what a third party does: drop signature.value, canonical JSON (RFC 8785), UTF-8, Ed25519
  const { value, ...block } = signature!
  const signed = Buffer.from(canonicalize({ ...report, signature: block })!, 'utf8')
  const { verify } = await import('node:crypto')
  t.ok(verify(null, signed, key.publicKey, Buffer.from(value, 'base64')), 'the signature is over the canonical form of everything else')
  t.equal(failure(verifyReport(JSON.parse(body), key.publicPem)), 'valid', 'verifyReport takes it')
  t.equal(failure(verifyReport(report, key.privatePem)), 'valid', 'with the private key too (its public key derived)')
})

t.test('an open session\'s report is provisional and unsigned; junit and html are unsigned; no key, no signature', async (t) => {
  const app = await signingApp(t)
  const open = await startSession(app)
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  const provisional = (await app.inject({ url: `/_sandbox/sessions/${open.id}/report` })).json() as Report
  t.equal(provisional.session.endedAt, undefined)
  t.equal(provisional.signature, undefined, 'an open session\'s report is not signed')
  t.match(failure(verifyReport(provisional, key.publicPem)), /^unsigned: the report has no signature/)
  await app.inject({ method: 'POST', url: `/_sandbox/sessions/${open.id}/end` })
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
  const fresh = () => JSON.parse(body) as Report & { signature: NonNullable<Report['signature']> }
  t.equal(failure(verifyReport(fresh(), key.publicPem)), 'valid')
  const other = pair()

  const tampered: Array<[string, (r: ReturnType<typeof fresh>) => void]> = [
    ['the verdict flipped', (r) => { r.verdict = 'pass' }],
    ['a finding removed', (r) => { r.findings.shift() }],
    ['a count changed', (r) => { r.findings[0].count += 1 }],
    ['a sync set changed', (r) => { r.sync[0].missing.count += 1 }],
    ['coverage changed', (r) => { r.coverage.checklist[0].exercised = !r.coverage.checklist[0].exercised }],
    ['the session\'s endedAt changed', (r) => { r.session.endedAt = '2031-01-01T00:00:00.000Z' }],
    ['the session\'s client changed', (r) => { r.session.clientId = 'someone-else' }],
    ['the sandbox version changed', (r) => { r.signature.sandboxVersion = '9.9.9' }],
    ['the signing time changed', (r) => { r.signature.signedAt = '2031-01-01T00:00:00.000Z' }],
    ['the world changed', (r) => { r.signature.worldId = 'w-other' }],
    ['a member added', (r) => { (r as unknown as Record<string, unknown>).approvedBy = 'partner team' }],
    ['the signature altered', (r) => { r.signature.value = (r.signature.value[0] === 'A' ? 'B' : 'A') + r.signature.value.slice(1) }]
  ]
  for (const [change, apply] of tampered) {
    const report = fresh()
    apply(report)
    t.equal(failure(verifyReport(report, key.publicPem)), 'tampered: the signature does not match the content: the report was changed after it was signed', change)
  }
  const truncated = fresh()
  truncated.signature.value = truncated.signature.value.slice(4)
  t.match(failure(verifyReport(truncated, key.publicPem)), /^tampered: its signature value is not an Ed25519 signature/)

  t.equal(failure(verifyReport(fresh(), other.publicPem)), `other-key: it is signed by the key "${fresh().signature.keyId}", not by the key given (${signingKeyOf(other.privatePem).keyId})`)
  const keyIdChanged = fresh()
  keyIdChanged.signature.keyId = signingKeyOf(other.privatePem).keyId
  t.equal(failure(verifyReport(keyIdChanged, other.publicPem)), 'tampered: the signature does not match the content: the report was changed after it was signed', 'a key id made to match another key')
  const algorithm = fresh()
  ;(algorithm.signature as { algorithm: string }).algorithm = 'RS256'
  t.equal(failure(verifyReport(algorithm, key.publicPem)), 'unknown-algorithm: it is signed with the algorithm "RS256"; reports are signed with Ed25519')
  const surrogate = JSON.parse(body.replace('"name":"nightly sync"', '"name":"nightly \\ud800 sync"')) as Report
  t.equal(failure(verifyReport(surrogate, key.publicPem)), 'tampered: it holds a value no signed report holds (a lone surrogate, a number out of range): it was changed')
  const { signature: _dropped, ...unsigned } = fresh()
  t.match(failure(verifyReport(unsigned, key.publicPem)), /^unsigned: /)
  t.match(failure(verifyReport(body, key.publicPem)), /^not-a-report: a report is checked as the parsed JSON object/)
  t.match(failure(verifyReport([fresh()], key.publicPem)), /^not-a-report: /)
  t.throws(() => verifyReport(fresh(), 'not a key'), new InvalidKeyError('the key given is not a PEM public key (BEGIN PUBLIC KEY) nor a PEM private key'))
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }) as string
  t.throws(() => verifyReport(fresh(), ec), /the key given is a key of type ec, not Ed25519/)
})

t.test('a world\'s report is signed with its world id, its text in UTF-8', async (t) => {
  const app = await signingApp(t)
  const created = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {} })
  const world = created.json() as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  const { clientId, clientSecret } = world.integrations[0]
  const { report } = await endedReport(app, `/worlds/${world.id}`, 'Basic ' + Buffer.from(`${clientId}:${clientSecret}`).toString('base64'), 'Nächtlicher Abgleich ✓ 😀')
  t.equal(report.signature?.worldId, world.id)
  t.equal(report.session.name, 'Nächtlicher Abgleich ✓ 😀')
  t.ok(report.findings.length > 0, 'the world\'s own session recorded the traffic')
  t.equal(failure(verifyReport(report, key.publicPem)), 'valid')
  report.signature!.worldId = 'default'
  t.match(failure(verifyReport(report, key.publicPem)), /^tampered: /, 'another world\'s report cannot pass as the default world\'s')
})

t.test('a lone surrogate (JSON can escape one, UTF-8 cannot hold it) is signed as U+FFFD, not refused', async (t) => {
  const app = await signingApp(t)
  const { report } = await endedReport(app)
  const { signature: _signature, ...unsigned } = report
  unsigned.session.name = `lone ${String.fromCharCode(0xd800)} surrogate`
  unsigned.findings[0].message += String.fromCharCode(0xdc00)
  const signed = (await signReport(unsigned, { key: signingKeyOf(key.privatePem), worldId: 'default', sandboxVersion: PACKAGE_VERSION }))!
  t.equal(signed.session.name, 'lone \ufffd surrogate')
  t.ok(signed.findings[0].message.endsWith('\ufffd'))
  t.equal(failure(verifyReport(JSON.parse(JSON.stringify(signed)), key.publicPem)), 'valid')
  t.equal(await signReport({ ...unsigned, session: { ...unsigned.session, endedAt: undefined } }, { key: signingKeyOf(key.privatePem), worldId: 'default', sandboxVersion: PACKAGE_VERSION }),
    undefined, 'an open session\'s report is not signed')
})

/** What the README tells a third party to do: Python's json.dumps for the canonical bytes, openssl for Ed25519. */
const CANONICAL_PY = `
import base64, json, sys
report = json.load(open(sys.argv[1], encoding='utf-8'))
signature = base64.b64decode(report['signature'].pop('value'))
open(sys.argv[2], 'wb').write(json.dumps(report, sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode('utf-8'))
open(sys.argv[3], 'wb').write(signature)
`
const PYTHON = '/usr/bin/python3'
const hasOpenssl = spawnSync('openssl', ['version']).status === 0

t.test('a third party verifies without this package: Python\'s json.dumps and openssl, as the README says', {
  skip: !existsSync(PYTHON) || !hasOpenssl ? 'needs /usr/bin/python3 and openssl (.ci/run installs openssl)' : false
}, async (t) => {
  const app = await signingApp(t)
  const { body } = await endedReport(app, '', DEMO, 'Nächtlicher Abgleich ✓ 😀')
  const dir = mkdtempSync(join(tmpdir(), 'third-party-'))
  const publicPem = join(dir, 'public.pem')
  writeFileSync(publicPem, key.publicPem)
  const check = (report: string) => {
    writeFileSync(join(dir, 'report.json'), report)
    execFileSync(PYTHON, ['-c', CANONICAL_PY, join(dir, 'report.json'), join(dir, 'content.bin'), join(dir, 'signature.bin')])
    return spawnSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', publicPem, '-rawin', '-in', join(dir, 'content.bin'), '-sigfile', join(dir, 'signature.bin')], { encoding: 'utf8' })
  }
  const genuine = check(body)
  t.equal(genuine.status, 0, genuine.stdout + genuine.stderr)
  t.match(genuine.stdout, /Signature Verified Successfully/)
  const changed = check(body.replace('"verdict":"fail"', '"verdict":"pass"'))
  t.not(changed.status, 0, 'a changed verdict fails there too')
})
