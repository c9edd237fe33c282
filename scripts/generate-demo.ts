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
export function findRepoRoot(start: string): string {
  let dir = resolve(start)
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${start}`)
    dir = parent
  }
}

const toJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

export function writeFixtures(root: string): { demo: string; schema: string } {
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
