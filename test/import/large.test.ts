import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../helpers/process.js'
import { control, importTo, sandbox, tempDir } from '../helpers/import-instances.js'
import { agencyListings, basic, mismatches, readsFromState, type StateAgency } from '../helpers/import-reads.js'

/** A generated agency of 10,000 clients (about 90 of them deleted) through an import and back. */

t.test('a 10,000-client agency imported answers a sample of reads byte for byte', async (t) => {
  const dir = tempDir(t)
  const generated = join(dir, 'generated.json')
  const gen = await runCli(['generate', '--agencies', '1', '--clients', '10000', '--out', generated])
  t.equal(gen.code, 0, gen.stderr)
  const upstream = await sandbox(t, generated)
  const out = join(dir, 'imported.json')
  const run = await importTo(upstream.url, out)
  t.match(run.stdout, /1 agency, 9,\d{3} clients and \d+ deleted clients/)
  const served = await sandbox(t, out)
  const { agencies } = await control<{ agencies: StateAgency[] }>(upstream.url, 'GET', '/state')
  const reads = [...agencyListings, ...readsFromState(agencies[0], true, 150, 4)]
  const bad = await mismatches({ url: upstream.url, auth: basic('abc', '123') }, { url: served.url, auth: basic('abc', run.secret) }, reads)
  t.same(bad, [], `${reads.length} reads answer alike`)
  t.ok(readFileSync(out, 'utf8').endsWith('\n]\n}\n'))
})
