/**
 * Writes fixtures/demo.json (the committed demo world) and fixtures/schema.json (the JSON Schema
 * of fixture documents) at the repository root.
 * Run after a build: node dist/scripts/generate-demo.js
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateDemoFixture } from '../src/fixture/generate.js'
import { FixtureSchema } from '../src/fixture/schema.js'

/** The nearest directory at or above `start` that holds a package.json. */
export function findRepoRoot (start: string): string {
  let dir = resolve(start)
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${start}`)
    dir = parent
  }
}

const MAX_WIDTH = 160

const isContainer = (value: unknown): value is object => value !== null && typeof value === 'object'
/** 0 for a primitive, 1 for an object or array of primitives, 2 for an array of those, ... */
const depth = (value: unknown): number =>
  isContainer(value) ? 1 + Object.values(value).reduce((max: number, v) => Math.max(max, depth(v)), 0) : 0

/** One line: `{ "a": 1, "b": [2, 3] }`. */
function inline (value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[${value.map(inline).join(', ')}]`
  if (isContainer(value)) {
    const entries = Object.entries(value)
    return entries.length === 0 ? '{}' : `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${inline(v)}`).join(', ')} }`
  }
  return JSON.stringify(value)
}

/**
 * A JSON value (as JSON.parse returns it) as pretty JSON with a 2-space indent, like
 * JSON.stringify(value, null, 2), except that a small leaf value (an address, a coverage, a list
 * of ids or of coverages: nothing nested deeper than an array of flat objects) is written on one
 * line when that line fits in MAX_WIDTH columns. Keeps the demo fixture well under 2 MB, and
 * readable.
 */
export function formatJson (value: unknown, indent = '', column = 0): string {
  if (!isContainer(value)) return JSON.stringify(value)
  const entries = Object.entries(value)
  if (entries.length === 0) return Array.isArray(value) ? '[]' : '{}'
  if (depth(value) <= 2) {
    const line = inline(value)
    if (column + line.length + 1 <= MAX_WIDTH) return line
  }
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    return `[\n${value.map((v) => inner + formatJson(v, inner, inner.length)).join(',\n')}\n${indent}]`
  }
  const lines = entries.map(([k, v]) => {
    const key = `${JSON.stringify(k)}: `
    return inner + key + formatJson(v, inner, inner.length + key.length)
  })
  return `{\n${lines.join(',\n')}\n${indent}}`
}

/** The file text: JSON.stringify's view of the value (no undefined, no functions), formatted, with a final newline. */
const toJson = (value: unknown): string => `${formatJson(JSON.parse(JSON.stringify(value)))}\n`

export function writeFixtures (root: string): { demo: string; schema: string } {
  const dir = join(root, 'fixtures')
  mkdirSync(dir, { recursive: true })
  const demo = join(dir, 'demo.json')
  const schema = join(dir, 'schema.json')
  writeFileSync(demo, toJson({ $schema: './schema.json', ...generateDemoFixture() }))
  writeFileSync(schema, toJson({
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://agency-sandbox.local/fixture.schema.json',
    ...FixtureSchema
  }))
  return { demo, schema }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (isMain) {
  const { demo, schema } = writeFixtures(findRepoRoot(dirname(fileURLToPath(import.meta.url))))
  console.log(`wrote ${demo}\nwrote ${schema}`)
}
