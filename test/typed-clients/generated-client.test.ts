import SwaggerParser from '@apidevtools/swagger-parser'
import { transform } from 'esbuild'
import openapiTS, { astToString } from 'openapi-typescript'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { ROOT } from '../../src/config.js'
import { startSandbox } from '../../src/sdk.js'
import { DEMO, type Teardown } from '../helpers/app.js'

/**
 * The OpenAPI documents generate typed clients: every body is a named schema, and the TypeScript
 * client openapi-typescript makes from the built documents (dist/openapi, as `npm run build`
 * writes and the sandbox serves them) type-checks a partner's sync (typescript/sync.ts) under
 * strict settings, which runs against a sandbox. The same sync does not type-check against a
 * document whose receipts body or Client is untyped, which is what the documents said before.
 */

type Json = Record<string, unknown>
type Document = { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } }

const VERSIONS = ['4.0', '3.0', '1'] as const
const SYNC = join(ROOT, 'test', 'typed-clients', 'typescript', 'sync.ts')
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const RECEIPTS = '/vendor/agency/{agencyId}/client/{clientId}/receipts'

/** What typescript/sync.ts answers (that file is type-checked against the generated client only). */
interface SyncSummary {
  agencies: number
  clients: number
  policies: number
  premium: number
  openBalance: number
  logNote?: string
  receipts: { refId: string | null; code: number; message: string | null }[]
}

const builtDocument = (version: string): Document => JSON.parse(readFileSync(join(ROOT, 'dist', 'openapi', `${version}.json`), 'utf8'))

/** The JSON schemas of an operation's request body and success answers, with where they are. */
function bodies (doc: Document): { where: string; schema: Json }[] {
  const found: { where: string; schema: Json }[] = []
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const media = (content: unknown) => Object.entries((content ?? {}) as Record<string, { schema?: Json }>)
      for (const [type, m] of media((op.requestBody as Json | undefined)?.content)) {
        if (m.schema !== undefined) found.push({ where: `${method} ${path} request ${type}`, schema: m.schema })
      }
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        if (!status.startsWith('2')) continue
        for (const [type, m] of media(response.content)) if (m.schema !== undefined) found.push({ where: `${method} ${path} ${status} ${type}`, schema: m.schema })
      }
    }
  }
  return found
}

/** A body is named when it is a $ref, an array of $ref, or a plain value (a string, integers). */
function isNamed (schema: Json): boolean {
  if (typeof schema.$ref === 'string') return true
  if (schema.type === 'array') return isNamed(schema.items as Json)
  return ['string', 'integer', 'number', 'boolean'].includes(schema.type as string)
}

t.test('every request and response body of each vendor document is a named schema, and the documents validate', async (t) => {
  const expected: Record<(typeof VERSIONS)[number], string[]> = {
    '4.0': ['AgencyEntry', 'AgencyUser', 'BatchReadRequest', 'Client', 'ClientCreateRequest', 'ClientCreateResponse', 'ClientDetails', 'Invoice',
      'LogNote', 'Office', 'Policy', 'Problem', 'Receipt', 'ReceiptInvoice', 'ReceiptResult', 'Task'],
    '3.0': ['BatchReadRequest', 'Client', 'LogNote', 'OfficeWithoutArchived', 'Policy', 'Receipt', 'ReceiptInvoice', 'ReceiptResult'],
    1: ['ClientV1', 'LogNoteV1', 'OfficeWithoutArchived', 'Problem']
  }
  for (const version of VERSIONS) {
    const doc = builtDocument(version)
    await t.resolves(SwaggerParser.validate(structuredClone(doc) as never), `${version} validates as OpenAPI (every $ref resolves)`)
    const names = Object.keys(doc.components.schemas)
    t.same(names.filter((n) => expected[version].includes(n)).sort(), [...expected[version]].sort(), `${version} names ${expected[version].join(', ')}`)
    const found = bodies(doc)
    t.ok(found.length >= 8, `${version}: ${found.length} bodies`)
    for (const { where, schema } of found) t.ok(isNamed(schema), `${version} ${where} is named: ${JSON.stringify(schema).slice(0, 120)}`)
  }
  const receipts = builtDocument('4.0').paths[RECEIPTS].post.requestBody as { content: Record<string, { schema: Json }> }
  t.same(receipts.content['application/json'].schema.items, { $ref: '#/components/schemas/Receipt' }, 'the receipts body is an array of Receipt')
  t.match(builtDocument('4.0').components.schemas.Receipt, { required: ['channel', 'logNote', 'refId', 'ts', 'total'] })
})

/** A folder where generated clients and the sync type-check, resolving packages from the repository. */
function workspace (t: Teardown): string {
  const dir = mkdtempSync(join(tmpdir(), 'generated-client-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023', 'DOM'],
      types: ['node'],
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: false,
      noEmit: true
    },
    include: ['*.ts']
  }))
  writeFileSync(join(dir, 'sync.ts'), readFileSync(SYNC))
  return dir
}

async function generate (dir: string, version: string, doc: unknown): Promise<void> {
  writeFileSync(join(dir, `api-${version}.ts`), astToString(await openapiTS(doc as never)))
}

/** `tsc -p dir`: its exit code and what it printed. */
function typecheck (dir: string): { code: number | null; output: string } {
  const run = spawnSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8', timeout: 120_000 })
  return { code: run.status, output: `${run.stdout}${run.stderr}` }
}

t.test('openapi-typescript generates a client from each built document; a sync written against 4.0 type-checks (strict), and would not against untyped bodies', async (t) => {
  const dir = workspace(t)
  for (const version of VERSIONS) await generate(dir, version, builtDocument(version))
  const generated = readFileSync(join(dir, 'api-4.0.ts'), 'utf8')
  t.match(generated, /"application\/json": components\["schemas"\]\["Receipt"\]\[\]/, 'the receipts body is Receipt[]')

  // the same sync against two untyped documents, as the documents were before bodies were named
  const untypedReceipts = structuredClone(builtDocument('4.0'))
  const receipts = untypedReceipts.paths[RECEIPTS].post.requestBody as { content: Record<string, { schema: Json }> }
  receipts.content['application/json'].schema.items = {}
  const untypedClient = structuredClone(builtDocument('4.0'))
  untypedClient.components.schemas.Client = { type: 'object' }
  const variants = [
    ['untyped-receipts', untypedReceipts, /error TS18046: 'receipt' is of type 'unknown'/],
    ['untyped-client', untypedClient, /error TS2339: Property '(policies|invoices|details)' does not exist on type/]
  ] as const
  for (const [name, doc] of variants) {
    await generate(dir, name, doc)
    writeFileSync(join(dir, `sync-${name}.ts`), readFileSync(SYNC, 'utf8').replace("'./api-4.0.js'", `'./api-${name}.js'`))
  }

  // one tsc run for all of them (each run costs seconds)
  const { output } = typecheck(dir)
  const errors = [...output.matchAll(/^(?:.*[\\/])?([\w.-]+\.ts)\(\d+,\d+\): (error TS\d+: .*)$/gm)].map((m) => ({ file: m[1], error: m[2] }))
  t.equal(errors.length, (output.match(/error TS\d+/g) ?? []).length, `tsc named the file of every error:\n${output.slice(0, 2000)}`)
  t.same(errors.filter((e) => !e.file.startsWith('sync-untyped-')), [], 'the generated clients and sync.ts type-check')
  for (const [name, , expected] of variants) {
    const found = errors.filter((e) => e.file === `sync-${name}.ts`).map((e) => e.error)
    t.ok(found.some((e) => expected.test(e)), `against the ${name} document the sync does not type-check where it reads a typed field: ${found.join('; ')}`)
  }
})

t.test('the sync runs with openapi-fetch against a sandbox: agencies, changed clients, batch reads, a log note and a receipt', async (t) => {
  const dir = workspace(t)
  const compiled = await transform(readFileSync(SYNC, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20' })
  writeFileSync(join(dir, 'sync.mjs'), compiled.code)
  const { sync } = await import(pathToFileURL(join(dir, 'sync.mjs')).href) as { sync: (url: string, authorization: string) => Promise<SyncSummary> }
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const summary = await sync(sandbox.url, DEMO)
  // integration abc reads 1001 (260 clients, 6 deleted), 1002 (30) and 1004 (20)
  t.equal(summary.agencies, 3)
  t.equal(summary.clients, 254 + 30 + 20)
  t.ok(summary.policies > summary.clients && summary.premium > 0 && summary.openBalance > 0, JSON.stringify(summary))
  t.equal(summary.logNote, 'Created')
  t.equal(summary.receipts.length, 1)
  t.match(summary.receipts[0], { code: 200, message: null })
  const writes = await sandbox.control.agencies.writes(1001, { kind: 'receipt' })
  t.equal(writes.length, 1, 'the receipt was recorded')
})
