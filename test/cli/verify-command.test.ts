import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PACKAGE_VERSION } from '../../src/config.js'
import type { Report, ReportSignature } from '../../src/schemas/examiner.js'
import { runCli, serveProcess } from '../helpers/process.js'

/**
 * `agency-sandbox verify FILE --key public.pem`, end to end: a sandbox process signs with a key
 * made here, `agency-sandbox report --format json` saves the report, and verify answers 0 for it
 * and 1, with the reason, for every change; 2 for a usage error.
 */

const dir = mkdtempSync(join(tmpdir(), 'verify-'))
const write = (name: string, content: string | Buffer) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}
const pem = (key: { export: (o: { type: 'pkcs8' | 'spki', format: 'pem' }) => string | Buffer }, type: 'pkcs8' | 'spki') => String(key.export({ type, format: 'pem' }))
const signer = generateKeyPairSync('ed25519')
const privateKey = write('signing-key.pem', pem(signer.privateKey, 'pkcs8'))
const publicKey = write('public.pem', pem(signer.publicKey, 'spki'))
const otherKey = write('other.pem', pem(generateKeyPairSync('ed25519').publicKey, 'spki'))
const TAMPERED = 'invalid, tampered: the signature does not match the content: the report was changed after it was signed'

type Signed = Report & { signature: ReportSignature }

t.test('verify: a signed report saved by the report command is valid; every change is caught with its reason', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:' }, ['--signing-key', privateKey])
  t.teardown(() => { served.child.kill() })
  const json = { 'content-type': 'application/json' }
  const session = await (await fetch(`${served.url}/_sandbox/sessions`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'nightly \u001b[31m sync', clientId: 'abc' }) })).json() as { id: number }
  const abc = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64'), ...json }
  await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: abc })
  await fetch(`${served.url}/vendor/agency/1001/clients?version=4.0`, { method: 'POST', headers: abc, body: JSON.stringify({ clientNumbers: Array.from({ length: 201 }, (_, i) => 1000 + i) }) })
  await fetch(`${served.url}/_sandbox/sessions/${session.id}/end`, { method: 'POST' })

  const saved = await runCli(['report', '--url', served.url, '--session', String(session.id), '--format', 'json'])
  t.equal(saved.code, 1, 'the report command fails on the error finding, and prints the report')
  const file = write('report.json', saved.stdout)
  const report = JSON.parse(saved.stdout) as Signed
  t.ok(report.signature, 'the report command keeps the signature')

  const valid = await runCli(['verify', file, '--key', publicKey])
  t.equal(valid.code, 0, valid.stderr)
  t.equal(valid.stdout, `${file}: valid: verdict fail, session ${session.id} "nightly \\x1B[31m sync" (clientId abc, world default), ` +
    `${report.session.startedAt} to ${report.session.endedAt} (ended by end), signed ${report.signature.signedAt} by key ${report.signature.keyId} (agency-sandbox ${PACKAGE_VERSION})\n`,
  'one line, the session\'s name escaped for the terminal')
  t.equal((await runCli(['verify', file, '--key', privateKey])).code, 0, 'the private key works too')

  const changed = (name: string, change: (r: Signed) => void) => {
    const copy = JSON.parse(saved.stdout) as Signed
    change(copy)
    return write(name, JSON.stringify(copy, null, 2))
  }
  const cases: Array<[string, string, string]> = [
    ['the verdict flipped', changed('verdict.json', (r) => { r.verdict = 'pass' }), TAMPERED],
    ['a finding removed', changed('finding.json', (r) => { r.findings = r.findings.filter((f) => f.rule !== 'batch-over-limit') }), TAMPERED],
    ['a count changed', changed('count.json', (r) => { r.findings[0].count = 0 }), TAMPERED],
    ['the session\'s endedAt changed', changed('ended.json', (r) => { r.session.endedAt = '2031-01-01T00:00:00.000Z' }), TAMPERED],
    ['the version changed', changed('version.json', (r) => { r.signature.sandboxVersion = '9.9.9' }), TAMPERED],
    ['the signature altered', changed('value.json', (r) => { r.signature.value = r.signature.value.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }), TAMPERED],
    ['unsigned', changed('unsigned.json', (r) => { delete (r as Partial<Signed>).signature }),
      'invalid, unsigned: the report has no signature: the sandbox signs the reports of ended sessions, when it has a signing key (SANDBOX_SIGNING_KEY)'],
    ['another algorithm', changed('algorithm.json', (r) => { (r.signature as { algorithm: string }).algorithm = 'ES256' }),
      'invalid, unknown algorithm: it is signed with the algorithm "ES256"; reports are signed with Ed25519'],
    ['not JSON', write('text.json', '{"verdict": "pass",'), 'invalid, not a JSON report: '],
    ['no such file', join(dir, 'missing.json'), 'invalid, cannot be read (ENOENT)'],
    ['past 6 MiB', write('large.json', Buffer.alloc(6 * 1024 * 1024 + 1, 0x20)), 'invalid, larger than 6 MiB, more than any report']
  ]
  for (const [what, path, reason] of cases) {
    const res = await runCli(['verify', path, '--key', publicKey])
    t.equal(res.code, 1, what)
    t.ok(res.stderr.startsWith(`${path}: ${reason}`), `${what}: ${res.stderr.trim()}`)
    t.equal(res.stdout, '', `${what}: nothing on standard output`)
  }
  const other = await runCli(['verify', file, '--key', otherKey])
  t.equal(other.code, 1)
  t.match(other.stderr, new RegExp(`^${file.replace(/[.]/g, '\\.')}: invalid, another key: it is signed by the key "${report.signature.keyId}", not by the key given \\([0-9a-f]{64}\\)\n$`))
})

t.test('verify: usage errors exit 2, naming what is wrong', async (t) => {
  const report = write('any.json', '{}')
  const cases: Array<[string[], string]> = [
    [['verify', report], '--key FILE is required'],
    [['verify', '--key', publicKey], 'verify takes the report FILE'],
    [['verify', report, report, '--key', publicKey], 'verify takes one FILE, got 2'],
    [['verify', report, '--key', report], `--key ${report} is not a PEM public key (BEGIN PUBLIC KEY) nor a PEM private key`],
    [['verify', report, '--key', join(dir, 'none.pem')], `--key ${join(dir, 'none.pem')} cannot be read (ENOENT)`],
    [['verify', report, '--key', write('large.pem', 'x'.repeat(64 * 1024 + 1))], `--key ${join(dir, 'large.pem')} is larger than 64 KiB, which no PEM key is`],
    [['verify', report, '--key', publicKey, '--format', 'text'], "Unknown option '--format'"]
  ]
  for (const [args, message] of cases) {
    const res = await runCli(args)
    t.equal(res.code, 2, args.join(' '))
    t.ok(res.stderr.startsWith(`agency-sandbox: ${message}`), res.stderr.split('\n')[0])
  }
  const help = await runCli(['verify', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /Usage: agency-sandbox verify FILE --key public\.pem/)
  t.match((await runCli(['--help'])).stdout, /verify +check a signed examiner report/)
})
