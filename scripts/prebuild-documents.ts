/**
 * Part of `npm run build`: builds the app once (in memory), asks it for each OpenAPI document
 * and writes them to dist/openapi/ with the key of the routes, schemas and version they were made
 * from. The running sandbox serves them from there when its own key is the same, instead of
 * registering every route again on a second instance (src/plugins/openapi.ts).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { DOCUMENT_NAMES } from '../src/plugins/openapi-documents.js'
import { documentsKeyOf, PREBUILT_DOCUMENTS_DIR, PREBUILT_INDEX } from '../src/plugins/openapi.js'

const started = performance.now()
// Documents left by an earlier build must not be served while these are made.
rmSync(PREBUILT_DOCUMENTS_DIR, { recursive: true, force: true })
const app = await buildApp(loadConfig({ SANDBOX_DB: ':memory:', LOG_LEVEL: 'silent', LOG_PRETTY: 'false' }))
await app.ready()
mkdirSync(PREBUILT_DOCUMENTS_DIR, { recursive: true })
for (const name of DOCUMENT_NAMES) {
  const res = await app.inject({ url: `/openapi/${name}.json` })
  if (res.statusCode !== 200) throw new Error(`/openapi/${name}.json answered ${res.statusCode}: ${res.body.slice(0, 200)}`)
  writeFileSync(join(PREBUILT_DOCUMENTS_DIR, `${name}.json`), res.body)
}
writeFileSync(join(PREBUILT_DOCUMENTS_DIR, PREBUILT_INDEX), JSON.stringify({ key: documentsKeyOf(app) }) + '\n')
await app.close()
console.log(`wrote ${DOCUMENT_NAMES.length} OpenAPI documents to ${PREBUILT_DOCUMENTS_DIR} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
