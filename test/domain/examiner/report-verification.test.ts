import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { ROOT } from '../../../src/config.js'
import { signingKeyOf } from '../../../src/domain/examiner/signature.js'
import { verifyReport, type ReportVerification } from '../../../src/index.js'
import { build, type Teardown } from '../../helpers/app.js'
import { endedReport } from '../../helpers/examiner.js'
import { tempDir } from '../../helpers/temp-dir.js'

/**
 * A signed report is checked as a file, strictly: the bytes the sandbox served and nothing else
 * (its canonical form), no key repeated anywhere. Any byte changed, or any key repeated, fails
 * verification; the served report verifies, in this package and with openssl alone, as
 * docs/key-custody.md tells a vendor to do.
 */

const { privateKey, publicKey } = generateKeyPairSync('ed25519')
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }) as string
const failure = (result: ReportVerification) => (result.valid ? 'valid' : `${result.reason}: ${result.message}`)

async function servedReport (t: Teardown) {
  const app = await build(t, { config: { signingKey: signingKeyOf(privatePem), signerName: 'Northwind partner programme' } })
  return (await endedReport(app, '', undefined, 'Nächtlicher Abgleich ✓ 😀')).body
}

/** The report's canonical JSON with one object's key written twice (before or after its first), the extra member given. */
function withDuplicate (value: unknown, target: number, keyIndex: number, extra: unknown, before: boolean): string {
  let seen = -1
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(write).join(',')}]`
    if (v === null || typeof v !== 'object') return JSON.stringify(v)
    const object = v as Record<string, unknown>
    const at = ++seen
    const keys = Object.keys(object).sort()
    const members = keys.map((k) => `${JSON.stringify(k)}:${write(object[k])}`)
    if (at === target) {
      const duplicate = `${JSON.stringify(keys[keyIndex % keys.length])}:${JSON.stringify(extra)}`
      if (before) members.unshift(duplicate)
      else members.push(duplicate)
    }
    return `{${members.join(',')}}`
  }
  return write(value)
}

/** The depth-first places of the objects that have members. */
function objectsWithMembers (value: unknown): number[] {
  const places: number[] = []
  let seen = -1
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk)
    if (v === null || typeof v !== 'object') return
    const at = ++seen
    if (Object.keys(v).length > 0) places.push(at)
    Object.values(v).forEach(walk)
  }
  walk(value)
  return places
}

t.test('the served report verifies; the file is checked byte for byte, each way it can differ named', async (t) => {
  const body = await servedReport(t)
  t.equal(failure(verifyReport(body, publicPem)), 'valid')
  const cases: Array<[string, string | Buffer, RegExp]> = [
    ['the verdict placed twice, the unsigned one first', body.replace('"verdict":"fail"', '"verdict":"pass","verdict":"fail"'), /^duplicate-key: the key "verdict" appears twice in one object/],
    ['a key repeated deep inside', body.replace('"signature":{"algorithm":"Ed25519",', '"signature":{"algorithm":"Ed25519","algorithm":"Ed25519",'), /^duplicate-key: the key "signature.algorithm" appears twice/],
    ['pretty-printed', JSON.stringify(JSON.parse(body), null, 2), /^not-canonical: byte 1 differs from the report's canonical form/],
    ['a final line break', body + '\n', new RegExp(`^not-canonical: byte ${Buffer.byteLength(body)} differs`)],
    ['an escape in upper case', body.replace('"verdict":"fail"', '"verdict":"\\u0066ail"'), /^not-canonical: /],
    ['a byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]), /^not-a-report: it is not JSON/],
    ['truncated', body.slice(0, body.length / 2), /^not-a-report: it is not JSON \(/],
    ['not UTF-8', Buffer.concat([Buffer.from(body.slice(0, 10)), Buffer.from([0xff]), Buffer.from(body.slice(10))]), /^not-a-report: it is not UTF-8 text/],
    ['nested past 64 levels', '['.repeat(65) + ']'.repeat(65), /^not-a-report: it nests deeper than 64 levels/]
  ]
  for (const [what, text, reason] of cases) t.match(failure(verifyReport(text, publicPem)), reason, what)
})

t.test('property: changing any byte of a signed report, or repeating any key of it, makes verification fail', async (t) => {
  const body = await servedReport(t)
  const bytes = Buffer.from(body)
  t.equal(failure(verifyReport(bytes, publicPem)), 'valid', 'the served report verifies')
  fc.assert(fc.property(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 }), (at, byte) => {
    fc.pre(bytes[at] !== byte)
    const changed = Buffer.from(bytes)
    changed[at] = byte
    return !verifyReport(changed, publicPem).valid
  }), { numRuns: 2000 })
  const report = JSON.parse(body) as unknown
  const places = objectsWithMembers(report)
  fc.assert(fc.property(fc.constantFrom(...places), fc.nat(), fc.jsonValue(), fc.boolean(), (target, keyIndex, extra, before) => {
    const result = verifyReport(withDuplicate(report, target, keyIndex, extra, before), publicPem)
    return !result.valid && result.reason === 'duplicate-key'
  }), { numRuns: 500 })
  t.pass(`${places.length} objects, every byte of ${bytes.length}`)
})

/** The shell recipe docs/key-custody.md gives under "With openssl alone". */
function opensslRecipe (): string {
  const doc = readFileSync(join(ROOT, 'docs', 'key-custody.md'), 'utf8')
  const section = doc.slice(doc.indexOf('### With openssl alone'))
  const block = /```sh\n([\s\S]*?)```/.exec(section)
  if (block === null) throw new Error('docs/key-custody.md has no sh block under "### With openssl alone"')
  return block[1]!
}

const hasOpenssl = spawnSync('openssl', ['version']).status === 0
const PYTHON = '/usr/bin/python3'

t.test('a vendor checks a report with openssl alone, as docs/key-custody.md says', { skip: hasOpenssl ? false : 'needs openssl' }, async (t) => {
  const body = await servedReport(t)
  const dir = tempDir(t, 'openssl-recipe-')
  writeFileSync(join(dir, 'public.pem'), publicPem)
  const recipe = opensslRecipe()
  const run = (report: string) => {
    writeFileSync(join(dir, 'report.json'), report)
    return spawnSync('sh', ['-e', '-c', recipe], { cwd: dir, encoding: 'utf8' })
  }
  const genuine = run(body)
  t.equal(genuine.status, 0, genuine.stdout + genuine.stderr)
  t.match(genuine.stdout, /Signature Verified Successfully/)
  t.match(genuine.stdout, new RegExp(JSON.parse(body).signature.keyId), 'the key id, printed for the vendor to compare with the report\'s')
  for (const [what, changed] of [
    ['the verdict changed', body.replace('"verdict":"fail"', '"verdict":"pass"')],
    ['the signer renamed', body.replace('"name":"Northwind partner programme"', '"name":"The vendor itself"')],
    ['the world\'s start changed', body.replace(/"startDigest":"[0-9a-f]/, '"startDigest":"x')]
  ]) {
    const res = run(changed!)
    t.not(res.status, 0, `${what}: openssl refuses it`)
  }
})

/** Python's json.dumps for the canonical bytes (every name in a report is ASCII, every number an integer), openssl for Ed25519. */
const CANONICAL_PY = `
import base64, json, sys
report = json.load(open(sys.argv[1], encoding='utf-8'))
signature = base64.b64decode(report['signature'].pop('value'))
open(sys.argv[2], 'wb').write(json.dumps(report, sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode('utf-8'))
open(sys.argv[3], 'wb').write(signature)
`

t.test('a third party verifies with any JCS writer: Python\'s json.dumps and openssl', { skip: !existsSync(PYTHON) || !hasOpenssl ? 'needs /usr/bin/python3 and openssl' : false }, async (t) => {
  const body = await servedReport(t)
  const dir = tempDir(t, 'third-party-')
  writeFileSync(join(dir, 'public.pem'), publicPem)
  const check = (report: string) => {
    writeFileSync(join(dir, 'report.json'), report)
    execFileSync(PYTHON, ['-c', CANONICAL_PY, join(dir, 'report.json'), join(dir, 'content.bin'), join(dir, 'signature.bin')])
    return spawnSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', join(dir, 'public.pem'), '-rawin', '-in', join(dir, 'content.bin'), '-sigfile', join(dir, 'signature.bin')], { encoding: 'utf8' })
  }
  const genuine = check(body)
  t.equal(genuine.status, 0, genuine.stdout + genuine.stderr)
  t.not(check(body.replace('"verdict":"fail"', '"verdict":"pass"')).status, 0, 'a changed verdict fails there too')
})
