import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../../src/config.js'
import { build } from '../helpers/app.js'
import { runCli, serveProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

/**
 * The signing key setting (SANDBOX_SIGNING_KEY, serve --signing-key): an Ed25519 private key,
 * from a file or as PEM text, refused at start-up with a message naming the setting otherwise;
 * and GET /_sandbox/signing-key, which hands its public key out.
 */

const dir = tempDir(t, 'signing-key-')
const ed25519 = generateKeyPairSync('ed25519')
const privatePem = ed25519.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
const publicPem = ed25519.publicKey.export({ type: 'spki', format: 'pem' }) as string
const file = (name: string, content: string) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}
const keyFile = file('signing-key.pem', privatePem)
const MAKE = 'make an Ed25519 key with openssl genpkey -algorithm ed25519 -out signing-key.pem'

const config = (value: string) => loadConfig({ SANDBOX_DB: ':memory:', SANDBOX_SIGNING_KEY: value })

t.test('an Ed25519 private key is taken from a file, or as PEM text; none, or empty, signs nothing', async (t) => {
  const fromFile = config(keyFile).signingKey
  t.ok(fromFile, 'from a file')
  t.equal(fromFile!.publicKeyPem, publicPem)
  t.equal(config(privatePem).signingKey?.keyId, fromFile!.keyId, 'the PEM text itself')
  t.equal(config(privatePem.trim().replace(/\n/g, '\\n')).signingKey?.keyId, fromFile!.keyId, 'its line breaks written \\n, as an environment file must')
  t.equal(loadConfig({ SANDBOX_DB: ':memory:' }).signingKey, undefined)
  t.equal(config('').signingKey, undefined)
})

t.test('anything but an Ed25519 private key is refused at start-up, naming the setting', async (t) => {
  const missing = join(dir, 'missing.pem')
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
  const encrypted = ed25519.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string
  const cases: Array<[string, string, string]> = [
    ['a file that is not there', missing, `SANDBOX_SIGNING_KEY: cannot read ${missing} (ENOENT); give the path of a PEM Ed25519 private key`],
    ['a folder', dir, `SANDBOX_SIGNING_KEY: cannot read ${dir} (EISDIR); give the path of a PEM Ed25519 private key`],
    ['a file that is no key', file('notes.txt', 'hello'), `SANDBOX_SIGNING_KEY: ${join(dir, 'notes.txt')} is not a PEM private key; ${MAKE}`],
    ['an EC key', file('ec.pem', ec), `SANDBOX_SIGNING_KEY: ${join(dir, 'ec.pem')} is a key of type ec, not Ed25519; ${MAKE}`],
    ['the public key', file('public.pem', publicPem), `SANDBOX_SIGNING_KEY: ${join(dir, 'public.pem')} is a public key; give the private key reports are signed with (its public key is derived from it)`],
    ['an encrypted key', file('encrypted.pem', encrypted), `SANDBOX_SIGNING_KEY: ${join(dir, 'encrypted.pem')} is an encrypted private key; give it unencrypted (openssl pkey -in encrypted.pem -out signing-key.pem)`],
    ['a file past 64 KiB', file('large.pem', privatePem + 'x'.repeat(64 * 1024)), `SANDBOX_SIGNING_KEY: ${join(dir, 'large.pem')} is larger than 64 KiB, which no PEM Ed25519 private key is`],
    ['public PEM text', publicPem, 'SANDBOX_SIGNING_KEY: the PEM text given is a public key; give the private key reports are signed with (its public key is derived from it)'],
    ['broken PEM text', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----', `SANDBOX_SIGNING_KEY: the PEM text given is not a PEM private key; ${MAKE}`]
  ]
  for (const [what, value, message] of cases) t.throws(() => config(value), new ConfigError(message), what)
})

t.test('serve refuses a bad key at start (exit 1, the message); serve --signing-key FILE signs, and says so', async (t) => {
  const bad = await runCli(['serve', '--db', ':memory:', '--port', '0', '--signing-key', join(dir, 'public.pem')], { LOG_PRETTY: 'false' })
  t.equal(bad.code, 1)
  t.equal(bad.stderr.trim(), `agency-sandbox: SANDBOX_SIGNING_KEY: ${join(dir, 'public.pem')} is a public key; give the private key reports are signed with (its public key is derived from it)`)

  const served = await serveProcess({ SANDBOX_DB: ':memory:' }, ['--signing-key', keyFile])
  t.teardown(() => { served.child.kill() })
  const answer = await (await fetch(`${served.url}/_sandbox/signing-key`)).json() as { keyId: string, publicKey: string }
  t.equal(answer.publicKey, publicPem)
  t.ok(served.lines.some((line) => line.includes(`"signingKeyId":"${answer.keyId}"`)), 'the start-up log names the key')
})

t.test('GET /_sandbox/signing-key: the public key and its id, or the PEM alone; 404 without a key; no token needed', async (t) => {
  const unsigned = await build(t)
  const none = await unsigned.inject({ url: '/_sandbox/signing-key' })
  t.equal(none.statusCode, 404)
  t.equal(none.json().detail, 'This sandbox signs no reports: start it with SANDBOX_SIGNING_KEY (serve --signing-key FILE), an Ed25519 private key')

  const signingKey = config(keyFile).signingKey
  const app = await build(t, { config: { signingKey, controlToken: 'sesame' } })
  const json = await app.inject({ url: '/_sandbox/signing-key' })
  t.equal(json.statusCode, 200, 'a public key needs no control token')
  t.same(json.json(), { algorithm: 'Ed25519', keyId: signingKey!.keyId, publicKey: publicPem, signer: 'unnamed (SANDBOX_SIGNER_NAME not set)' })
  const pem = await app.inject({ url: '/_sandbox/signing-key?format=pem' })
  t.equal(pem.headers['content-type'], 'application/x-pem-file')
  t.equal(pem.body, publicPem)
  t.equal((await app.inject({ url: '/_sandbox/signing-key?format=der' })).statusCode, 400)
  t.equal((await app.inject({ url: '/_sandbox/sessions' })).statusCode, 401, 'the sessions still need it')
})

t.test('the signer\'s name and the previous keys: SANDBOX_SIGNER_NAME, SANDBOX_SIGNING_KEYS_PREVIOUS, GET /_sandbox/signing-keys', async (t) => {
  const older = [generateKeyPairSync('ed25519'), generateKeyPairSync('ed25519')]
  const olderPem = older.map((k) => k.publicKey.export({ type: 'spki', format: 'pem' }) as string)
  const previous = file('previous.pem', olderPem.join('') + publicPem + olderPem[0])
  const settings = loadConfig({ SANDBOX_DB: ':memory:', SANDBOX_SIGNING_KEY: keyFile, SANDBOX_SIGNER_NAME: ' Northwind partner programme ', SANDBOX_SIGNING_KEYS_PREVIOUS: previous })
  t.equal(settings.signerName, 'Northwind partner programme')
  t.same(settings.previousSigningKeys.map((k) => k.publicKeyPem), olderPem, 'each previous key once, the current one left out')
  const refused = (env: Record<string, string>) => t.throws(() => loadConfig({ SANDBOX_DB: ':memory:', ...env }), ConfigError)
  refused({ SANDBOX_SIGNER_NAME: 'two\nlines' })
  refused({ SANDBOX_SIGNER_NAME: 'x'.repeat(201) })
  t.throws(() => loadConfig({ SANDBOX_DB: ':memory:', SANDBOX_SIGNING_KEYS_PREVIOUS: file('notes.txt', 'hello') }),
    new ConfigError(`SANDBOX_SIGNING_KEYS_PREVIOUS: ${join(dir, 'notes.txt')} is not a PEM public key (BEGIN PUBLIC KEY) nor a PEM private key`))
  t.throws(() => loadConfig({ SANDBOX_DB: ':memory:', SANDBOX_SIGNING_KEYS_PREVIOUS: join(dir, 'none.pem') }), /SANDBOX_SIGNING_KEYS_PREVIOUS: cannot read .*none\.pem \(ENOENT\)/)

  const app = await build(t, { config: { signingKey: settings.signingKey, signerName: settings.signerName, previousSigningKeys: settings.previousSigningKeys, controlToken: 'sesame' } })
  const list = await app.inject({ url: '/_sandbox/signing-keys' })
  t.equal(list.statusCode, 200, 'public: no token')
  t.same(list.json(), {
    signer: 'Northwind partner programme',
    current: settings.signingKey!.keyId,
    keys: [
      { algorithm: 'Ed25519', keyId: settings.signingKey!.keyId, publicKey: publicPem, status: 'current' },
      ...settings.previousSigningKeys.map((k) => ({ algorithm: 'Ed25519', keyId: k.keyId, publicKey: olderPem[settings.previousSigningKeys.indexOf(k)], status: 'previous' }))
    ]
  })
  const pem = await app.inject({ url: '/_sandbox/signing-keys?format=pem' })
  t.equal(pem.headers['content-type'], 'application/x-pem-file')
  t.equal(pem.body, publicPem + olderPem.join(''), 'every key in one PEM file, the current one first')
})
