import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { signingKeyOf } from '../../src/domain/examiner/signature.js'
import { hostedInstances, withoutPostgres } from '../helpers/hosted.js'
import { runCli } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

/**
 * One signing key per programme: the first instance that signs records its key's id in
 * PostgreSQL; an instance started with another key, or none, refuses to start, naming both; the
 * administrator's rotate-signing-key makes another key the programme's.
 */

const dir = tempDir(t, 'agreed-key-')
const keyFile = (name: string) => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const pem = String(privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const file = join(dir, `${name}.pem`)
  writeFileSync(file, pem)
  writeFileSync(join(dir, `${name}.public.pem`), String(publicKey.export({ type: 'spki', format: 'pem' })))
  return { file, publicFile: join(dir, `${name}.public.pem`), keyId: signingKeyOf(pem).keyId }
}

const hosted = hostedInstances(t)

t.test('a second instance with another signing key refuses to start; a rotation is the administrator\'s step', { skip: withoutPostgres }, async (t) => {
  const first = keyFile('first')
  const second = keyFile('second')
  const refusal = async (env: Record<string, string>) => await hosted.start(env).then(() => 'started', (e: Error) => e.message)

  const a = await hosted.start({ SANDBOX_SIGNING_KEY: first.file })
  t.ok(a.url, 'the first signing instance starts, and records its key')
  const other = await refusal({ SANDBOX_SIGNING_KEY: second.file })
  t.match(other, /^exited with 1 before listening/, 'another key: the instance does not start')
  t.match(other, `agency-sandbox: SANDBOX_SIGNING_KEY: this instance signs with key ${second.keyId}, but this programme's reports are signed with key ${first.keyId} (recorded in PostgreSQL by `)
  t.match(other, 'rotate first: agency-sandbox rotate-signing-key --database URL --signing-key new-key.pem (docs/key-custody.md)')
  t.notMatch(other, /\n\s+at /, 'one line, no stack trace')
  t.match(await refusal({}), `this instance has no signing key, but this programme's reports are signed with key ${first.keyId}`, 'no key: refused too')
  const same = await hosted.start({ SANDBOX_SIGNING_KEY: first.file })
  t.ok(same.url, 'the same key: starts')

  const usage = await runCli(['rotate-signing-key', '--signing-key', second.file], { SANDBOX_DATABASE_URL: '' })
  t.equal(usage.code, 2, 'no database: a usage error')
  t.match(usage.stderr, '--database URL is required')
  const rotated = await runCli(['rotate-signing-key', '--database', hosted.url(), '--signing-key', second.file])
  t.equal(rotated.code, 0, rotated.stderr)
  t.match(rotated.stdout, `the programme's signing key is now ${second.keyId} (was ${first.keyId})`)
  t.equal((await runCli(['rotate-signing-key', '--database', hosted.url(), '--signing-key', second.file])).stdout, `the programme's signing key is already ${second.keyId}; nothing changed\n`)

  const b = await hosted.start({ SANDBOX_SIGNING_KEY: second.file, SANDBOX_SIGNING_KEYS_PREVIOUS: first.publicFile })
  const keys = await (await fetch(`${b.url}/_sandbox/signing-keys`)).json() as { current: string, keys: Array<{ keyId: string, status: string }> }
  t.same({ current: keys.current, keys: keys.keys.map((k) => [k.keyId, k.status]) }, { current: second.keyId, keys: [[second.keyId, 'current'], [first.keyId, 'previous']] },
    'the rotated instance publishes the new key and the previous one')
  t.match(await refusal({ SANDBOX_SIGNING_KEY: first.file }), `this instance signs with key ${first.keyId}, but this programme's reports are signed with key ${second.keyId}`,
    'an instance with the old key now refuses to start')
})
