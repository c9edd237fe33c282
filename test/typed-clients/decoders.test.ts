import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { finished } from 'node:stream/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { generateFixture } from '../../src/fixture/generate.js'
import { startSandbox } from '../../src/sdk.js'
import { DEMO, IDLE, NORTHWIND } from '../helpers/app.js'
import { AnswerCollector, INCLUDE_SUBSETS, type Integration } from '../helpers/typed-client-answers.js'
import { SAMPLES } from '../helpers/typed-client-samples.js'
import { createdClientBodies } from '../helpers/writes.js'
import { buildGo, buildJava, missingToolchain, run, tallyOf, type Run } from './toolchains.js'

/**
 * Typed clients in other languages decode every answer. Two small clients typed from the
 * contract's section A (not from the sandbox's own OpenAPI documents, which would test nothing),
 * one in Go (encoding/json) and one in Java 17 (Jackson without scalar coercion), decode every
 * answer of every read operation in every version (agencies, offices, users, changed clients,
 * get client, batch read, search; 4.0, 3.0 and 1), with every include combination, over the demo
 * fixture, clients created in it, and a generated fixture of 1,000 clients. Each decoder runs once over all the answers
 * and exits non-zero listing the failures with their label and JSON path.
 */

const EVERY_OPERATION = [
  'agencies 4.0', 'agencies 3.0', 'agencies 1', 'offices 4.0', 'offices 3.0', 'offices 1', 'users 4.0',
  'changedClients 4.0', 'changedClients 3.0', 'changedClients 1', 'getClient 4.0', 'getClient 3.0', 'getClient 1',
  'batchClients 4.0', 'batchClients 3.0', 'batchClients 1', 'searchClients 4.0', 'searchClients 3.0'
]

const missing = missingToolchain()
const skip = missing.length === 0 ? false : `the typed-client decoders need ${missing.join('; ')} (.ci/run installs them with apt)`

const dir = mkdtempSync(join(tmpdir(), 'typed-clients-'))
// TYPED_CLIENTS_KEEP=1 keeps the answers and both builds, to run a decoder again by hand (README beside this file)
if (process.env.TYPED_CLIENTS_KEEP === '1') t.comment(`answers and builds kept in ${dir}`)
else t.teardown(() => rmSync(dir, { recursive: true, force: true }))
/** Both decoders, built once (while the answers are collected). */
const built = skip === false ? Promise.all([buildGo(dir), buildJava(dir)]) : Promise.reject(new Error(skip))
built.catch(() => {}) // awaited by the tests

/** Runs both decoders over a JSON-lines file of answers. */
async function decodeWithBoth (file: string, ...flags: string[]): Promise<[string, Run][]> {
  const [goBinary, javaClassPath] = await built
  return Promise.all([
    run(goBinary, [...flags, file]).then((r) => ['Go', r] as [string, Run]),
    run('java', ['-cp', javaClassPath, 'Decoder', ...flags, file]).then((r) => ['Java', r] as [string, Run])
  ])
}

t.test('the decoders take answers shaped as the contract says and refuse each mistake at its path', { skip }, async (t) => {
  const file = join(dir, 'samples.jsonl')
  writeFileSync(file, SAMPLES.map((s) => JSON.stringify({ label: s.label, operation: s.operation, version: s.version, body: s.body }) + '\n').join(''))
  for (const [name, result] of await decodeWithBoth(file, '--every-failure')) {
    const paths = new Map<string, string[]>()
    for (const m of result.stdout.matchAll(/^ {2}(.+?) {2}(\$\S*): (.*)$/gm)) paths.set(m[1], [...(paths.get(m[1]) ?? []), m[2]])
    for (const sample of SAMPLES) {
      t.same(paths.get(sample.label) ?? [], sample.path === undefined ? [] : [sample.path],
        `${name}: ${sample.label} ${sample.path === undefined ? 'decodes' : `fails at ${sample.path}`}`)
    }
    t.equal(result.code, 1, `${name} exits 1 when an answer fails`)
  }
})

t.test('typed clients in Go and Java decode every answer of every read operation in every version', { skip }, async (t) => {
  t.equal(INCLUDE_SUBSETS.length, 63)

  const started = performance.now()
  const seconds = (from: number) => `${((performance.now() - from) / 1000).toFixed(1)} s`
  const file = join(dir, 'answers.jsonl')
  const out = createWriteStream(file)
  const collector = new AnswerCollector(out)
  const demo = await startSandbox()
  try {
    // clients a partner's test creates read back as the demo's do (A: Nulls)
    const created: number[] = []
    for (const body of createdClientBodies()) {
      const res = await fetch(`${demo.url}/vendor/agency/1001/client?version=4.0`, { method: 'POST', headers: { authorization: DEMO, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      t.equal(res.status, 200, 'a client created')
      created.push(((await res.json()) as { clientNumber: number }).clientNumber)
    }
    await collector.created(demo.url, { name: 'demo abc', authorization: DEMO }, 1001, created)
    const integrations: Integration[] = [
      { name: 'demo abc', authorization: DEMO },
      { name: 'demo northwind-crm', authorization: NORTHWIND },
      { name: 'demo idle-vendor', authorization: IDLE }
    ]
    for (const who of integrations) await collector.integration(demo.url, who)
  } finally {
    await demo.close()
  }
  const generated = await startSandbox({ fixture: generateFixture({ agencies: 2, clients: 500, seed: 7 }) })
  try {
    await collector.integration(generated.url, { name: 'generated abc', authorization: DEMO })
  } finally {
    await generated.close()
  }
  out.end()
  await finished(out)

  const expected = collector.tally
  const answers = [...expected.values()].reduce((a, b) => a + b, 0)
  t.same([...expected.keys()].sort(), [...EVERY_OPERATION].sort(), 'every read operation of every version was collected')
  t.comment(`${answers} answers, ${(statSync(file).size / 1e6).toFixed(1)} MB in ${seconds(started)}: ${[...expected].map(([k, n]) => `${k} ${n}`).join(', ')}`)

  await built
  const decoding = performance.now()
  const runs = await decodeWithBoth(file)
  t.comment(`both decoders ran in ${seconds(decoding)}`)
  for (const [name, result] of runs) {
    t.comment(result.stdout.split('\n').slice(0, EVERY_OPERATION.length + 1).join('\n'))
    const tally = tallyOf(result.stdout)
    for (const [key, n] of expected) {
      const [decoded, failed] = tally.get(key) ?? [0, 0]
      t.equal(decoded + failed, n, `${name} read every ${key} answer`)
    }
    t.equal(result.code, 0, `${name} decodes every answer\n${result.stdout}${result.stderr}`)
  }
})
