import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Report } from '../../src/schemas/examiner.js'
import { runCli, serveProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

/**
 * `agency-sandbox verify FILE --key keys.pem`, end to end: a sandbox process signs with a key made
 * here, `agency-sandbox report --format json` saves the report as served, and verify answers 0 for
 * a valid pass, 2 for a valid report of another verdict, and 1, with the reason on one line, for
 * every change, an unreadable file or a usage error.
 */

const dir = tempDir(t, 'verify-')
const write = (name: string, content: string | Buffer) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}
const pem = (key: { export: (o: { type: 'pkcs8' | 'spki', format: 'pem' }) => string | Buffer }, type: 'pkcs8' | 'spki') => String(key.export({ type, format: 'pem' }))
const signer = generateKeyPairSync('ed25519')
const previous = generateKeyPairSync('ed25519')
const privateKey = write('signing-key.pem', pem(signer.privateKey, 'pkcs8'))
const publicKey = write('public.pem', pem(signer.publicKey, 'spki'))
const previousKeys = write('previous.pem', pem(previous.publicKey, 'spki'))
const otherKey = write('other.pem', pem(generateKeyPairSync('ed25519').publicKey, 'spki'))

type Signed = Report & { signature: NonNullable<Report['signature']>, signer: NonNullable<Report['signer']> }

t.test('verify: a report saved by the report command is valid; its verdict sets the exit code; every change is caught', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:', SANDBOX_SIGNER_NAME: 'Northwind partner programme', SANDBOX_SIGNING_KEYS_PREVIOUS: previousKeys }, ['--signing-key', privateKey])
  t.teardown(() => { served.child.kill() })
  const json = { 'content-type': 'application/json' }
  const abc = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64'), ...json }
  const session = async (name: string, run: () => Promise<unknown>) => {
    const { id } = await (await fetch(`${served.url}/_sandbox/sessions`, { method: 'POST', headers: json, body: JSON.stringify({ name, clientId: 'abc' }) })).json() as { id: number }
    await run()
    await fetch(`${served.url}/_sandbox/sessions/${id}/end`, { method: 'POST' })
    return id
  }
  const failing = await session('nightly \u001b[31m sync', async () => {
    await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: abc })
    await fetch(`${served.url}/vendor/agency/1001/clients?version=4.0`, { method: 'POST', headers: abc, body: JSON.stringify({ clientNumbers: Array.from({ length: 201 }, (_, i) => 1000 + i) }) })
  })
  const passing = await session('one read', async () => {
    await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: abc })
    await fetch(`${served.url}/vendor/agency/1001/client/1000?version=4.0`, { headers: abc })
  })
  const keys = write('keys.pem', await (await fetch(`${served.url}/_sandbox/signing-keys?format=pem`)).text())
  const keyList = write('keys.json', await (await fetch(`${served.url}/_sandbox/signing-keys`)).text())

  const saved = await runCli(['report', '--url', served.url, '--session', String(failing), '--format', 'json'])
  t.equal(saved.code, 1, 'the report command fails on the error finding, and prints the report')
  const file = write('report.json', saved.stdout)
  const servedText = await (await fetch(`${served.url}/_sandbox/sessions/${failing}/report`)).text()
  const report = JSON.parse(saved.stdout) as Signed
  const unstamped = (text: string) => text.replace(/"signedAt":"[^"]+"/, '').replace(/"value":"[^"]+"/, '')
  t.equal(unstamped(saved.stdout), unstamped(servedText), 'saved as served (each copy is signed at its own time)')

  const valid = await runCli(['verify', file, '--key', keys])
  t.equal(valid.code, 2, `a valid report whose verdict is fail exits 2: ${valid.stderr}`)
  t.equal(valid.stdout, `${file}: valid: verdict fail, session ${failing} "nightly \\x1B[31m sync" (clientId abc), ` +
    `world default "default" (no tenant, start ${report.world.startDigest.slice(0, 12)}…), ` +
    `${report.session.startedAt} to ${report.session.endedAt} (ended by end), signed ${report.signature.signedAt} by "Northwind partner programme" with key ${report.signature.keyId} ` +
    `(agency-sandbox ${report.judgedBy.version}, build ${report.judgedBy.build})\n`,
  'one line: the signer, the key, the world and tenant; the session\'s name escaped for the terminal')
  for (const key of [publicKey, privateKey, keyList]) t.equal((await runCli(['verify', file, '--key', key])).code, 2, `--key ${key}`)

  const pass = await runCli(['report', '--url', served.url, '--session', String(passing), '--format', 'json'])
  t.equal(pass.code, 0, pass.stderr)
  const passed = await runCli(['verify', write('pass.json', pass.stdout), '--key', keys])
  t.equal(passed.code, 0, 'a valid pass exits 0')
  t.match(passed.stdout, ': valid: verdict pass, ')

  const changed = (name: string, change: (r: Signed) => void) => {
    const copy = JSON.parse(saved.stdout) as Signed
    change(copy)
    return write(name, JSON.stringify(copy))
  }
  const TAMPERED = 'invalid, tampered: the signature does not match the content: the report was changed after it was signed'
  const cases: Array<[string, string, string]> = [
    ['the verdict placed twice', write('twice.json', saved.stdout.replace('"verdict":"fail"', '"verdict":"pass","verdict":"fail"')),
      'invalid, duplicate key: the key "verdict" appears twice in one object: readers of the file would disagree on what it says'],
    ['pretty-printed', write('pretty.json', JSON.stringify(report, null, 2)), 'invalid, not as signed: byte 1 differs from the report\'s canonical form (RFC 8785)'],
    ['the verdict flipped', write('verdict.json', saved.stdout.replace('"verdict":"fail"', '"verdict":"pass"')), TAMPERED],
    ['the signer renamed', write('signer.json', saved.stdout.replace('"name":"Northwind partner programme"', '"name":"The vendor"')), TAMPERED],
    ['an unknown field in the signature', write('field.json', saved.stdout.replace('"signature":{"algorithm":"Ed25519",', '"signature":{"algorithm":"Ed25519","approved":true,')),
      'invalid, tampered: its signature block holds "approved", which no signature holds'],
    ['unsigned', changed('unsigned.json', (r) => { delete (r as Partial<Signed>).signature }),
      'invalid, unsigned: the report has no signature: the sandbox signs the reports of ended sessions, when it has a signing key (SANDBOX_SIGNING_KEY)'],
    ['another algorithm', write('algorithm.json', saved.stdout.replace('"algorithm":"Ed25519"', '"algorithm":"ES256"')),
      'invalid, unknown algorithm: it is signed with the algorithm "ES256"; reports are signed with Ed25519'],
    ['not JSON', write('text.json', '{"verdict": "pass",'), 'invalid, not a report: it is not JSON ('],
    ['truncated', write('truncated.json', saved.stdout.slice(0, 1000)), 'invalid, not a report: it is not JSON ('],
    ['no such file', join(dir, 'missing.json'), 'invalid, cannot be read (ENOENT)'],
    ['past 6 MiB', write('large.json', Buffer.alloc(6 * 1024 * 1024 + 1, 0x20)), 'invalid, larger than 6 MiB, more than any report']
  ]
  for (const [what, path, reason] of cases) {
    const res = await runCli(['verify', path, '--key', keys])
    t.equal(res.code, 1, what)
    t.ok(res.stderr.startsWith(`${path}: ${reason}`), `${what}: ${res.stderr.trim()}`)
    t.equal(res.stderr.split('\n').length, 2, `${what}: one line, no stack trace`)
    t.equal(res.stdout, '', `${what}: nothing on standard output`)
  }
  // a character a terminal acts on (an 8-bit CSI): printed escaped, which the signature does not cover; --out saves the bytes served
  const csi = await session('csi \u009b2J', async () => {
    await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: abc })
    await fetch(`${served.url}/vendor/agency/1001/client/1000?version=4.0`, { headers: abc })
  })
  const printed = await runCli(['report', '--url', served.url, '--session', String(csi), '--format', 'json'])
  t.notMatch(printed.stdout, /\u009b/, 'printed: the CSI escaped')
  const csiFile = join(dir, 'csi.json')
  const written = await runCli(['report', '--url', served.url, '--session', String(csi), '--format', 'json', '--out', csiFile])
  t.equal(written.code, 0, written.stderr)
  t.equal((await runCli(['verify', csiFile, '--key', keys])).code, 0, 'the file --out wrote verifies')
  const escaped = await runCli(['verify', write('csi-printed.json', printed.stdout), '--key', keys])
  t.equal(escaped.code, 1)
  t.match(escaped.stderr, 'invalid, not as signed: byte ')
  t.match(escaped.stderr, '(agency-sandbox report --format json --out report.json)')
  const unwritable = await runCli(['report', '--url', served.url, '--session', String(csi), '--format', 'json', '--out', join(dir, 'none', 'x.json')])
  t.equal(unwritable.code, 1)
  t.match(unwritable.stderr, `agency-sandbox report: cannot write ${join(dir, 'none', 'x.json')} (ENOENT)`)

  const other = await runCli(['verify', file, '--key', otherKey])
  t.equal(other.code, 1)
  t.match(other.stderr, new RegExp(`^${file.replace(/[.]/g, '\\.')}: invalid, another key: it is signed by the key "${report.signature.keyId}", not by the key given \\([0-9a-f]{64}\\)\n$`))
})

t.test('verify: usage errors exit 1 (2 says a valid report of another verdict), naming what is wrong', async (t) => {
  const report = write('any.json', '{}')
  const cases: Array<[string[], string]> = [
    [['verify', report], '--key FILE is required'],
    [['verify', '--key', publicKey], 'verify takes the report FILE'],
    [['verify', report, report, '--key', publicKey], 'verify takes one FILE, got 2'],
    [['verify', report, '--key', report], `--key ${report} is JSON, but not the key list of GET /_sandbox/signing-keys ({keys: [{publicKey}]})`],
    [['verify', report, '--key', write('notes.txt', 'hello')], `--key ${join(dir, 'notes.txt')} is not a PEM public key (BEGIN PUBLIC KEY) nor a PEM private key`],
    [['verify', report, '--key', join(dir, 'none.pem')], `--key ${join(dir, 'none.pem')} cannot be read (ENOENT)`],
    [['verify', report, '--key', write('large.pem', 'x'.repeat(64 * 1024 + 1))], `--key ${join(dir, 'large.pem')} is larger than 64 KiB, which no PEM key is`],
    [['verify', report, '--key', publicKey, '--format', 'text'], "Unknown option '--format'"]
  ]
  for (const [args, message] of cases) {
    const res = await runCli(args)
    t.equal(res.code, 1, args.join(' '))
    t.ok(res.stderr.startsWith(`agency-sandbox: ${message}`), res.stderr.split('\n')[0])
  }
  const help = await runCli(['verify', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /Usage: agency-sandbox verify FILE --key public\.pem/)
  t.match((await runCli(['--help'])).stdout, /verify +check a signed examiner report/)
})
