/**
 * Part of `npm run build`: builds the app once (in memory), lists every request validator its
 * routes make, and writes Ajv's standalone code for each to dist/validators/, where the running
 * sandbox loads it on a route's first use instead of compiling (src/plugins/precompiled-validators.ts).
 * Files of schemas that no longer exist are removed, so the folder holds exactly what the build made.
 */
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { AjvCompiler, AjvReference } from '@fastify/ajv-compiler'
import ajvStandalone from 'ajv/dist/standalone/index.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { listValidatorsMade, type ValidatorUse } from '../src/plugins/lazy-validators.js'
import { PRECOMPILED_DIR, storePrecompiled, validatorKey } from '../src/plugins/precompiled-validators.js'

type Compile = (route: unknown) => (data: unknown) => boolean
type Selector = (externalSchemas: unknown, options: unknown) => Compile & Record<symbol, { ajv: unknown } | undefined>
// Ajv's CommonJS module is the function itself (and its `default`).
const standaloneCode = ajvStandalone as unknown as (ajv: unknown, validate: unknown) => string

const started = performance.now()
const made: ValidatorUse[] = []
listValidatorsMade(made)
const app = await buildApp(loadConfig({ SANDBOX_DB: ':memory:', LOG_LEVEL: 'silent', LOG_PRETTY: 'false' }))
await app.ready()
listValidatorsMade(undefined)

// One Ajv per set of options, as at run time; `code.source` keeps the code Ajv generates.
const selector = (AjvCompiler as unknown as () => Selector)()
const compilers = new Map<string, ReturnType<Selector>>()
const written = new Set<string>()
for (const { customOptions, route } of made) {
  const key = validatorKey(customOptions, route)
  if (written.has(key)) continue
  const optionsKey = JSON.stringify(customOptions ?? null)
  let compile = compilers.get(optionsKey)
  if (compile === undefined) {
    compile = selector({}, { customOptions: { ...(customOptions as object), code: { source: true } } })
    compilers.set(optionsKey, compile)
  }
  const validate = compile(route)
  storePrecompiled(key, standaloneCode(compile[AjvReference as symbol]!.ajv, validate))
  written.add(key)
}
await app.close()

for (const name of readdirSync(PRECOMPILED_DIR)) {
  if (!written.has(name.replace(/\.cjs$/, ''))) rmSync(join(PRECOMPILED_DIR, name))
}
console.log(`precompiled ${written.size} validators (of ${made.length} route parts) into ${PRECOMPILED_DIR} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
