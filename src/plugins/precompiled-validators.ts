import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { ROOT } from '../config.js'

/**
 * Validators compiled ahead of time by `npm run build` (scripts/precompile-validators.ts), so a
 * route's first request does not stall every other request while Ajv compiles its schema (the
 * create-client body alone took 140 ms). Each is Ajv's standalone code for one schema, stored
 * under a hash of the schema and the Ajv options, so a file is used only for the very schema and
 * options it was made from: a stale one is never picked up, and a schema without a file is still
 * compiled on first use as before.
 */

/** Where the build writes them: part of the built package, like dist/src. */
export const PRECOMPILED_DIR = join(ROOT, 'dist', 'validators')

type Validate = ((data: unknown) => boolean) & { errors?: unknown }

/** What identifies a validator: the Ajv options, the request part and the schema. */
export function validatorKey (customOptions: unknown, route: { schema?: unknown; httpPart?: string }): string {
  return createHash('sha256').update(JSON.stringify([customOptions ?? null, route.httpPart ?? '', route.schema ?? null])).digest('hex').slice(0, 32)
}

const fileOf = (key: string) => join(PRECOMPILED_DIR, `${key}.cjs`)

// The generated code requires Ajv's runtime helpers and formats: resolve them as the compiler does.
let ajvRequire: NodeJS.Require | undefined
const requireLikeTheCompiler = () => (ajvRequire ??= createRequire(createRequire(import.meta.url).resolve('@fastify/ajv-compiler')))

/** The validator the build compiled for this key, or undefined when there is none. */
export function loadPrecompiled (key: string): Validate | undefined {
  const file = fileOf(key)
  if (!existsSync(file)) return undefined
  const module = { exports: {} as { default?: Validate } | Validate }
  // eslint-disable-next-line no-new-func -- the build's own output, evaluated once as the CommonJS module it is
  new Function('require', 'module', 'exports', readFileSync(file, 'utf8'))(requireLikeTheCompiler(), module, module.exports)
  const exported = module.exports as { default?: Validate } & Validate
  return exported.default ?? exported
}

/** Writes one validator's standalone code (the build). */
export function storePrecompiled (key: string, code: string): void {
  mkdirSync(dirname(fileOf(key)), { recursive: true })
  writeFileSync(fileOf(key), code)
}
