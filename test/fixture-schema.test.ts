import t from 'tap'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../src/config.js'
import { writeFixtures } from '../scripts/generate-demo.js'

t.test('the committed fixtures are what the generator and the TypeBox schema produce', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-fixtures-'))
  const fresh = writeFixtures(dir)
  for (const name of ['demo.json', 'schema.json'] as const) {
    const committed = readFileSync(join(ROOT, 'fixtures', name), 'utf8')
    const made = readFileSync(name === 'demo.json' ? fresh.demo : fresh.schema, 'utf8')
    t.ok(committed === made, `fixtures/${name} is up to date (npm run fixtures regenerates it)`)
  }
  const schema = JSON.parse(readFileSync(join(ROOT, 'fixtures', 'schema.json'), 'utf8'))
  t.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#')
  t.same(Object.keys(schema.properties).sort(), ['$schema', 'agencies', 'integrations', 'writes'])
})
