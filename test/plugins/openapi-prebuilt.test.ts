import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, type Teardown } from '../helpers/app.js'
import * as docsModule from '../../src/plugins/openapi-docs.js'
import { DOCUMENT_NAMES, type DescribeScope } from '../../src/plugins/openapi-documents.js'
import { documentsKeyOf, PREBUILT_DOCUMENTS_DIR, PREBUILT_INDEX, serveDocuments } from '../../src/plugins/openapi.js'

t.test('the documents the build wrote are served as written, and no instance with every route is built', async (t) => {
  const app = await build(t)
  const before = docsModule.docsInstancesBuilt
  // Routes used first (validators compiled, errors answered) leave the key as the build made it.
  const auth = { authorization: `Basic ${Buffer.from('abc:123').toString('base64')}` }
  await app.inject({ url: '/vendor/agency/1001/client/1001?version=4.0', headers: auth })
  await app.inject({ method: 'POST', url: '/vendor/agency/1001/clients?version=4.0', headers: auth, payload: ['x'] })
  await app.inject({ method: 'POST', url: '/vendor/agency/1001/client?version=4.0', headers: auth, payload: { people: [{}] } })
  await app.inject({ url: '/_sandbox/state' })
  for (const name of DOCUMENT_NAMES) {
    const res = await app.inject({ url: `/openapi/${name}.json` })
    t.equal(res.statusCode, 200)
    t.equal(res.body, readFileSync(join(PREBUILT_DOCUMENTS_DIR, `${name}.json`), 'utf8'), `${name}: the build's file`)
  }
  t.equal((await app.inject({ url: '/docs/' })).statusCode, 200, 'Swagger UI answers')
  t.equal(docsModule.docsInstancesBuilt, before, 'the key of these routes is the one the build wrote: nothing was registered again')
})

/** A small app serving documents from `dir`, with one vendor route whose query names `parameter`. */
async function smallApp (t: Teardown, dir: string, parameter: string): Promise<FastifyInstance> {
  const routes = async (instance: FastifyInstance, describe?: DescribeScope) => {
    await instance.register(async (scope) => {
      if (describe !== undefined) await describe(scope, '4.0')
      scope.get('/vendor/ping', { schema: { querystring: { type: 'object', properties: { [parameter]: { type: 'string' } } } } }, async () => 'pong')
    })
  }
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  serveDocuments(app, '9.9.9', (docsApp, describe) => routes(docsApp, describe), dir)
  await routes(app)
  await app.ready()
  return app
}

function writeDocuments (dir: string, key: string): void {
  writeFileSync(join(dir, PREBUILT_INDEX), JSON.stringify({ key }))
  for (const name of DOCUMENT_NAMES) writeFileSync(join(dir, `${name}.json`), JSON.stringify({ written: name }))
}

t.test('documents written for other routes or schemas are not served: they are made again', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'prebuilt-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))

  const current = await smallApp(t, dir, 'colour')
  writeDocuments(dir, documentsKeyOf(current))
  t.same((await current.inject({ url: '/openapi/4.0.json' })).json(), { written: '4.0' }, 'the key matches: the file is served')

  const changed = await smallApp(t, dir, 'color')
  t.not(documentsKeyOf(changed), documentsKeyOf(current), 'a renamed query parameter changes the key')
  const before = docsModule.docsInstancesBuilt
  const made = (await changed.inject({ url: '/openapi/4.0.json' })).json()
  t.equal(made.openapi, '3.1.0', 'a document made from the routes')
  t.ok(made.paths['/vendor/ping'].get.parameters.some((p: { name: string }) => p.name === 'color'), 'with the schema as it is now')
  t.equal(docsModule.docsInstancesBuilt, before + 1)

  rmSync(join(dir, '3.0.json'))
  const incomplete = await smallApp(t, dir, 'colour')
  t.equal((await incomplete.inject({ url: '/openapi/4.0.json' })).json().openapi, '3.1.0', 'a file missing: all are made again')
})
