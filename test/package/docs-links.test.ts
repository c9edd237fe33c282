import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { ROOT } from '../../src/config.js'

/**
 * The documents a partner reads in a clone work in that clone: every relative link resolves to a
 * file of the repository (and a link to a heading to one of that page's headings), the README stays
 * a front page that leads to every page of docs/, and the CI examples of docs/configuration.md set
 * the variables the fixtures read.
 */

function markdownFiles (): string[] {
  const inFolder = (folder: string, recursive: boolean): string[] => readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return recursive ? inFolder(path, true) : []
    return entry.name.endsWith('.md') ? [path] : []
  })
  const testReadmes = inFolder('test', true).filter((path) => path.endsWith(`${sep}README.md`))
  return ['README.md', 'ARCHITECTURE.md', ...inFolder('examples', true), ...inFolder('bench', false), ...inFolder('docs', true), ...testReadmes]
}

/** Markdown without fenced code blocks and inline code: links inside them are examples, not links. */
function prose (text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '')
}

function links (text: string): string[] {
  return [...prose(text).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1])
}

/** GitHub's anchors for a document's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors (text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const m of text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1].replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').trim().replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

const files = markdownFiles()

t.test('every relative link in the README, ARCHITECTURE, examples, bench, docs and the tests\' READMEs resolves inside the repository', async (t) => {
  t.ok(files.includes(join('docs', 'agency-api.md')) && files.includes(join('docs', 'contract.md')), 'the interface and the contract are documented in the repository')
  for (const page of [join('bench', 'README.md'), join('examples', 'README.md'), join('docs', 'README.md'), join('test', 'typed-clients', 'README.md')]) {
    t.ok(files.includes(page), `${page} is checked`)
  }
  const readmeAnchors = anchors(readFileSync(join(ROOT, 'README.md'), 'utf8'))
  let checked = 0
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    const own = anchors(text)
    for (const link of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue // http:, https:, mailto:
      checked++
      const [path, fragment] = link.split('#', 2)
      const target = path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(path))
      const where = `${file}: ${link}`
      if (!(target + sep).startsWith(ROOT + sep) && target !== ROOT) {
        t.fail(`${where} leaves the repository`)
        continue
      }
      if (!existsSync(target)) {
        t.fail(`${where} names ${relative(ROOT, target)}, which does not exist`)
        continue
      }
      if (fragment === undefined || !statSync(target).isFile() || !target.endsWith('.md')) continue
      const headings = target === join(ROOT, 'README.md') ? readmeAnchors : target === join(ROOT, file) ? own : anchors(readFileSync(target, 'utf8'))
      t.ok(headings.has(fragment), `${where}: a heading with that anchor exists`)
    }
  }
  t.ok(checked > 20, `${checked} relative links checked`)
})

/** The pages a document links to, as paths from the repository's root. */
function linkedPages (file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), 'utf8')
  return new Set(links(text).filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link)).map((link) => {
    const path = link.split('#', 1)[0]
    return relative(ROOT, path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(path)))
  }))
}

t.test('the README is a front page: within 300 lines, and every page of docs/ is reached from it', async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0)
  t.ok(lines <= 300, `README.md has ${lines} lines (at most 300: details belong in docs/)`)
  for (const command of ['npm install && npm start', 'npm test']) t.ok(readme.includes(command), `README.md shows \`${command}\``)
  const fromReadme = linkedPages('README.md')
  t.ok(fromReadme.has(join('docs', 'README.md')), 'the README links the index of docs/')
  const fromIndex = linkedPages(join('docs', 'README.md'))
  for (const page of files.filter((f) => f.startsWith(`docs${sep}`) && f !== join('docs', 'README.md'))) {
    t.ok(fromIndex.has(page), `docs/README.md lists ${page}`)
  }
})

t.test('the link checker sees a dead link, a link out of the repository and a missing heading', async (t) => {
  t.same(links('see [spec](../shared/spec/agency-api.md) and `[not](a-link.md)`\n```\n[nor](this.md)\n```\n'), ['../shared/spec/agency-api.md'])
  t.ok(anchors('## Control API (`/_sandbox`)\n## A, b & c\n## A, b & c\n').has('control-api-_sandbox'))
  t.same([...anchors('## A, b & c\n## A, b & c\n')], ['a-b--c', 'a-b--c-1'])
})

/** Every environment variable a fixture reads, from the fixtures' own sources. */
function fixtureVariables (): Set<string> {
  const sources = [
    join('examples', 'python', 'agency_sandbox.py'),
    join('examples', 'node', 'sandbox-process.mjs'),
    join('examples', 'dotnet', 'SandboxFixture.cs'),
    join('examples', 'java', 'src', 'test', 'java', 'example', 'AgencySandbox.java'),
    join('examples', 'go', 'sandbox.go')
  ]
  const names = new Set<string>()
  for (const source of sources) {
    const text = readFileSync(join(ROOT, source), 'utf8')
    for (const m of text.matchAll(/(?:environ\.get\(|process\.env\.|process\.env\[|GetEnvironmentVariable\(|getenv\(|Getenv\()["']?([A-Z][A-Z0-9_]+)/g)) {
      if (m[1].startsWith('AGENCY_')) names.add(m[1])
    }
  }
  return names
}

/** The settings the sandbox itself reads (the table "Settings" of docs/configuration.md). */
function sandboxSettings (page: string): Set<string> {
  const section = page.slice(page.indexOf('## Settings'), page.indexOf('\n## ', page.indexOf('## Settings') + 1))
  return new Set([...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]))
}

t.test('the CI examples of docs/configuration.md set the variables the fixtures read, and only known ones', async (t) => {
  const configuration = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8')
  const read = fixtureVariables()
  t.same([...read].sort(), ['AGENCY_SANDBOX_CMD', 'AGENCY_SANDBOX_TOKEN', 'AGENCY_SANDBOX_URL'], 'what every fixture reads')
  const settings = sandboxSettings(configuration)
  t.ok(settings.has('SANDBOX_CONTROL_TOKEN') && settings.has('SANDBOX_DB'), 'the sandbox\'s settings table is found')

  const blocks = [...configuration.matchAll(/^```ya?ml\n([\s\S]*?)^```$/gm)].map((m) => m[1])
  t.ok(blocks.length >= 2, `${blocks.length} YAML blocks`)
  const stepVariables = new Set<string>()
  for (const block of blocks) {
    // the service example is a fragment of a job: it parses as YAML all the same
    const docs = parseAllDocuments(block)
    for (const doc of docs) t.same(doc.errors.map((e) => e.message), [], 'the block is valid YAML')
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit)
      if (node === null || typeof node !== 'object') return
      for (const [key, value] of Object.entries(node)) {
        if (key === 'env' && value !== null && typeof value === 'object') {
          for (const name of Object.keys(value)) {
            if (name.startsWith('AGENCY_')) {
              stepVariables.add(name)
              t.ok(read.has(name), `${name} is a variable the fixtures read`)
            } else {
              t.ok(settings.has(name), `${name} is a setting of the sandbox ("Settings" of docs/configuration.md)`)
            }
          }
        }
        if (typeof value === 'string') {
          for (const m of value.matchAll(/-e ([A-Z_]+)=/g)) t.ok(settings.has(m[1]), `docker run -e ${m[1]} is a setting of the sandbox`)
        }
        visit(value)
      }
    }
    for (const doc of docs) visit(doc.toJS())
  }
  t.ok(stepVariables.has('AGENCY_SANDBOX_URL') && stepVariables.has('AGENCY_SANDBOX_TOKEN'), 'the test step is pointed at the sandbox and given its token')
})
