import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { CHECKLIST_ITEMS, RULES, RULE_IDS, SESSION_REQUEST_CAP } from '../../src/schemas/examiner.js'

/** "Is my integration ready?" of docs/examiner.md says what the examiner does: its rule table is the catalogue. */

const page = readFileSync(join(ROOT, 'docs', 'examiner.md'), 'utf8')
const start = page.indexOf('\n## Is my integration ready?\n')
const section = start === -1 ? '' : page.slice(start + 1, page.indexOf('\n## ', start + 1))

t.test('the section is there, before the signed reports, and the README leads to it', async (t) => {
  t.ok(start > 0, 'docs/examiner.md has "## Is my integration ready?"')
  t.ok(start < page.indexOf('\n## Signed reports\n'), 'before "## Signed reports"')
  t.match(readFileSync(join(ROOT, 'README.md'), 'utf8'), '](docs/examiner.md)', 'the README links docs/examiner.md')
})

t.test('the rule table is the catalogue: id, severity, what it means, the fix', async (t) => {
  const cell = (text: string) => text.replace(/\|/g, '\\|')
  const expected = RULES.map((r) => `| \`${r.id}\` | ${r.severity} | ${cell(r.title)} | ${cell(r.fix)} |`)
  const header = '| Rule | Severity | What it means | The fix |\n|---|---|---|---|\n'
  const at = section.indexOf(header)
  t.ok(at > 0, 'the rule table has its header')
  const rows = section.slice(at + header.length).split('\n')
  const table = rows.slice(0, rows.findIndex((line) => !line.startsWith('|')))
  t.same(table, expected, `the rule table of docs/examiner.md, as the catalogue makes it:\n${expected.join('\n')}`)
})

t.test('the cap, the checklist and the rules named elsewhere in the section are the real ones', async (t) => {
  t.match(section, new RegExp(`up to\\s+${SESSION_REQUEST_CAP.toLocaleString('en-US')} requests per session`), 'the recording cap')
  for (const item of CHECKLIST_ITEMS) t.match(section, `a ${item.slice(0, 3)} handled`, `checklist item ${item}`)
  const named = [...section.matchAll(/`([a-z]+(?:-[a-z0-9]+)+)`/g)].map((m) => m[1]!)
  // a verdict and a rule's outcome are written like rule ids, and are not rules
  const notRules = ['no-evidence', 'not-exercised']
  const unknown = named.filter((id) => !RULE_IDS.includes(id) && !notRules.includes(id) && !['good-citizen', 'careless', 'fail-on'].some((w) => id.startsWith(w)))
  t.same([...new Set(unknown)], [], 'every rule id the section names is catalogued')
})
