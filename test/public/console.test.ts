import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import type { Page } from 'playwright-core'
import { ROOT } from '../../src/config.js'
import { CLIENT_GROUPS } from '../../src/schemas/client.js'
import { SCOPES } from '../../src/schemas/common.js'
import { WRITE_KINDS } from '../../src/schemas/control.js'
import { startServer } from '../../src/server.js'
import { API_VERSIONS, versionOf } from '../../src/versions/index.js'
import { DEMO, build, demoFixture, testConfig } from '../helpers/app.js'
import { chromiumPath, launchBrowser, NO_BROWSER } from '../helpers/browser.js'

const CONSOLE_DIR = join(ROOT, 'public', 'console')
const ARTIFACTS = join(ROOT, 'test-artifacts')

/** The console's ES modules (app.js, the one the page loads, imports the others). */
const MODULES = readdirSync(CONSOLE_DIR).filter((f) => f.endsWith('.js')).sort()

/** Files a module imports (`import … from './x.js'`). */
const importsOf = (source: string) => [...source.matchAll(/^import\s[^'"]*['"]\.\/([^'"]+)['"]/gm)].map((m) => m[1]!)

t.test('console files: served with their types, no-cache, traversal refused', async (t) => {
  const app = await build(t)
  for (const url of ['/_sandbox/ui', '/_sandbox/ui/', '/_sandbox/ui/index.html']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200, url)
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8$/, `${url} is HTML`)
    t.equal(res.headers['cache-control'], 'no-cache', `${url} is revalidated`)
    t.equal(res.body, readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8'), `${url} is index.html`)
  }
  const assets: [string, RegExp][] = [['app.js', /^text\/javascript; charset=utf-8$/], ['style.css', /^text\/css; charset=utf-8$/]]
  for (const [file, type] of assets) {
    const res = await app.inject({ url: `/_sandbox/ui/${file}` })
    t.equal(res.statusCode, 200, file)
    t.match(res.headers['content-type'], type, `${file} type`)
    t.equal(res.headers['cache-control'], 'no-cache', `${file} is revalidated`)
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.equal(res.body, readFileSync(join(CONSOLE_DIR, file), 'utf8'), `${file} content`)
  }

  // Every module app.js reaches through its imports is served as JavaScript (a module script
  // with another type is refused by the browser).
  const reached = new Set(['app.js'])
  for (const file of reached) {
    for (const imported of importsOf(readFileSync(join(CONSOLE_DIR, file), 'utf8'))) reached.add(imported)
  }
  t.same([...reached].sort(), MODULES.filter((f) => f !== 'types.js'), 'app.js reaches every module but the type definitions')
  for (const file of MODULES) {
    const res = await app.inject({ url: `/_sandbox/ui/${file}` })
    t.equal(res.statusCode, 200, `${file} is served`)
    t.equal(res.headers['content-type'], 'text/javascript; charset=utf-8', `${file} is JavaScript`)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${file} is not sniffed`)
  }
  t.equal((await app.inject({ url: '/_sandbox/ui/tsconfig.json' })).statusCode, 404, 'the type-check settings are not served')

  // The page loads its assets by absolute path (it is served at /_sandbox/ui without a slash too)
  // and from nowhere else: the machine running the sandbox may have no internet.
  const html = readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8')
  t.match(html, '<script type="module" src="/_sandbox/ui/app.js"></script>')
  t.match(html, 'href="/_sandbox/ui/style.css"')
  t.notMatch(html, /(src|href)="(https?:)?\/\//, 'no external resources')

  for (const url of [
    '/_sandbox/ui/..%2F..%2Fpackage.json',
    '/_sandbox/ui/..%2fpackage.json',
    '/_sandbox/ui/%2e%2e%2f%2e%2e%2fpackage.json',
    '/_sandbox/ui/..%5C..%5Cpackage.json',
    '/_sandbox/ui/../../package.json',
    '/_sandbox/ui/%2e%2e',
    '/_sandbox/ui/..',
    '/_sandbox/ui/.gitignore',
    '/_sandbox/ui/%2Fetc%2Fpasswd',
    '/_sandbox/ui/app.js%00.css',
    '/_sandbox/ui/missing.js',
    '/_sandbox/ui/README',
    '/_sandbox/ui/sub/app.js'
  ]) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 404, `${url} is refused`)
    t.notMatch(res.body, '"name": "agency-sandbox"', `${url} does not leak package.json`)
    t.notMatch(res.body, 'root:', `${url} does not leak /etc/passwd`)
  }
})

t.test('console page with a control token', async (t) => {
  const app = await build(t, { config: { controlToken: 'secret' } })
  for (const url of ['/_sandbox/ui', '/_sandbox/ui/', '/_sandbox/ui/app.js', '/_sandbox/ui/style.css']) {
    t.equal((await app.inject({ url })).statusCode, 200, `${url} loads without the token`)
  }
  for (const file of MODULES) {
    t.equal((await app.inject({ url: `/_sandbox/ui/${file}` })).statusCode, 200, `${file} loads without the token`)
  }
  t.equal((await app.inject({ url: '/_sandbox/info' })).statusCode, 401, 'the control API still needs it')
  t.equal((await app.inject({ url: '/_sandbox/meta' })).statusCode, 401, 'the constants are a control call: they need it too')
  t.equal((await app.inject({ url: '/_sandbox/meta', headers: { authorization: 'Bearer secret' } })).statusCode, 200, 'and answer with it')
})

t.test('GET /_sandbox/meta: the server\'s own constants, documented', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/_sandbox/meta' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const meta = res.json()
  t.same(meta.versions, API_VERSIONS, 'versions are API_VERSIONS, newest first')
  t.equal(meta.unversioned, versionOf('/vendor/agencies'), 'the version without a parameter is the one the router derives')
  t.ok(meta.versions.includes(meta.unversioned))
  t.same(meta.scopes, SCOPES, 'scopes are SCOPES')
  t.same(Object.keys(meta.scopeLabels).sort(), [...SCOPES].sort(), 'every scope has a short name')
  t.same(meta.clientGroups, CLIENT_GROUPS, 'client groups are CLIENT_GROUPS, in order')
  t.same(meta.writeKinds, WRITE_KINDS, 'write kinds are WRITE_KINDS')
  t.same(Object.keys(meta.writeKindLabels).sort(), [...WRITE_KINDS].sort(), 'every write kind has a name')
  t.ok(SCOPES.includes(meta.clientReadScope), 'the client-reading scope is one of the scopes')

  // The client-reading scope is the one the partner API checks: without it a read is refused.
  const read = (include = '') => app.inject({ url: `/vendor/agency/1001/client/1000?version=4.0${include}`, headers: { authorization: DEMO } })
  t.equal((await read()).statusCode, 200, 'abc reads 1001 with every scope')
  const patch = (scopes: string[]) => app.inject({ method: 'PATCH', url: '/_sandbox/integrations/abc/agencies/1001', payload: { scopes } })
  t.equal((await patch(SCOPES.filter((s) => s !== meta.clientReadScope))).statusCode, 200)
  t.equal((await read()).statusCode, 403, `without ${meta.clientReadScope} the read is refused`)
  t.equal((await patch([...SCOPES])).statusCode, 200)

  // The groups joined are a value of include the partner API accepts, the last group included.
  const all = await read(`&include=${meta.clientGroups.join(',')}`)
  t.equal(all.statusCode, 200, 'include with every group is accepted')
  t.ok('invoices' in all.json(), 'and answers the last group too')

  const doc = (await app.inject({ url: '/openapi/control.json' })).json()
  const op = doc.paths?.['/_sandbox/meta']?.get
  t.ok(op !== undefined, 'GET /_sandbox/meta is in the control document')
  const schema = op?.responses?.['200']?.content?.['application/json']?.schema
  t.same(Object.keys(schema?.properties ?? {}).sort(), Object.keys(meta).sort(), 'its response schema names every field answered')
})

t.test('console modules: checked, small, and without the server\'s constants', async (t) => {
  const unversioned = versionOf('/vendor/agencies')
  /** Quoted in a module: the value is re-declared instead of taken from GET /_sandbox/meta. */
  const quoted = (source: string, value: string) => ['\'', '"', '`'].some((q) => source.includes(`${q}${value}${q}`))
  const lists: [string, readonly string[]][] = [['scope', SCOPES], ['client group', CLIENT_GROUPS], ['write kind', WRITE_KINDS], ['version', API_VERSIONS]]
  for (const file of MODULES) {
    const source = readFileSync(join(CONSOLE_DIR, file), 'utf8')
    const lines = source.split('\n')
    t.equal(lines[0], '// @ts-check', `${file} starts with // @ts-check`)
    t.ok(lines.length < 300, `${file} has ${lines.length} lines (< 300)`)
    const spelled = [...SCOPES, ...CLIENT_GROUPS, ...API_VERSIONS.filter((v) => v !== unversioned)].filter((v) => quoted(source, v))
    t.same(spelled, [], `${file} spells out no scope, client group or version`)
    t.notMatch(source, new RegExp(`[!=]==\\s*['"\`]${unversioned.replace('.', '\\.')}['"\`]`), `${file} does not compare with the unversioned version by its value`)
    // two members side by side make a list of them: 'a', 'b' or a,b
    const listed = lists.flatMap(([what, values]) => values.flatMap((a) => values
      .filter((b) => b !== a && (source.includes(`'${a}', '${b}'`) || source.includes(`${a},${b}`)))
      .map((b) => `${what}s ${a}, ${b}`)))
    t.same(listed, [], `${file} lists no scopes, client groups, write kinds or versions`)
  }
  const page = readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8')
  const options = [...SCOPES, ...WRITE_KINDS, ...API_VERSIONS]
    .filter((v) => page.includes(`<option value="${v}">`) || page.includes(`<option>${v}</option>`))
  t.same(options, [], 'index.html has no option of a scope, write kind or version (they come from GET /_sandbox/meta)')

  // The modules type-check (public/console/tsconfig.json: checkJs, strict, the DOM library).
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  t.doesNotThrow(() => execFileSync(process.execPath, [tsc, '-p', CONSOLE_DIR], { stdio: 'pipe' }), 'tsc -p public/console passes')
})

t.test('console script: parses as a module and never writes HTML from data', async (t) => {
  const file = join(CONSOLE_DIR, 'app.js')
  t.doesNotThrow(() => execFileSync(process.execPath, ['--check', file], { stdio: 'pipe' }), 'node --check app.js')
  const source = readFileSync(file, 'utf8')
  for (const sink of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function']) {
    t.notOk(source.includes(sink), `app.js does not use ${sink}`)
  }
  for (const module of MODULES.filter((f) => f !== 'app.js')) {
    const path = join(CONSOLE_DIR, module)
    t.doesNotThrow(() => execFileSync(process.execPath, ['--check', path], { stdio: 'pipe' }), `node --check ${module}`)
    const text = readFileSync(path, 'utf8')
    const sinks = ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function'].filter((sink) => text.includes(sink))
    t.same(sinks, [], `${module} uses no HTML sink`)
  }
})

/** Debian's chromium (or CHROMIUM_PATH); undefined when there is none. */
const executablePath = chromiumPath()

t.test('console end to end in headless Chromium', { skip: executablePath === undefined ? NO_BROWSER : false }, async (t) => {
  if (executablePath === undefined) return

  const server = await startServer(testConfig({ port: 0 }), { fixture: demoFixture() })
  t.teardown(() => server.close())
  const base = server.url

  const context = await launchBrowser(executablePath, t.teardown.bind(t))
  const page = context.pages()[0] ?? await context.newPage()
  page.setDefaultTimeout(10_000)
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`)
  })

  mkdirSync(ARTIFACTS, { recursive: true })
  try {
    await scenario(t, page, base)
  } catch (e) {
    await page.screenshot({ path: join(ARTIFACTS, 'console-failure.png'), fullPage: true }).catch(() => {})
    throw e
  }
  t.same(problems, [], 'no script errors in the page')

  // With SANDBOX_CONTROL_TOKEN set, the page loads, asks for the token and keeps it in sessionStorage.
  const token = 'console-e2e-token'
  const guarded = await startServer(testConfig({ port: 0, controlToken: token }), { fixture: demoFixture() })
  t.teardown(() => guarded.close())
  const tokenPage = await context.newPage()
  tokenPage.setDefaultTimeout(10_000)
  tokenPage.on('pageerror', (e) => problems.push(`page error (token): ${e.message}`))
  await tokenPage.goto(`${guarded.url}/_sandbox/ui`)
  await tid(tokenPage, 'token-dialog').waitFor()
  await tid(tokenPage, 'token-input').fill('wrong')
  await tid(tokenPage, 'token-submit').click()
  await tid(tokenPage, 'token-error', 'refused').waitFor()
  await tid(tokenPage, 'token-input').fill(token)
  await tid(tokenPage, 'token-submit').click()
  await tid(tokenPage, 'agency-row-1001').waitFor()
  t.equal(await tokenPage.evaluate("sessionStorage.getItem('agency-sandbox.control-token')"), token, 'the token is kept in sessionStorage')
  await tid(tokenPage, 'agency-1002-supportsIncludes').check()
  await tid(tokenPage, 'toast-ok', 'supportsIncludes true').waitFor()
  const agencies = await (await fetch(`${guarded.url}/_sandbox/agencies`, { headers: { authorization: `Bearer ${token}` } })).json() as { agencyId: number; supportsIncludes: boolean }[]
  t.equal(agencies.find((a) => a.agencyId === 1002)!.supportsIncludes, true, 'calls from the page carry the token')
  await tid(tokenPage, 'tab-clients').click()
  await tid(tokenPage, 'clients-results').locator('[data-testid="client-result-1000"]').click()
  await tid(tokenPage, 'client-read-meta', 'as abc → 200').waitFor()
  t.pass('vendor reads work with the secrets from the guarded /_sandbox/state')
  const journal = await (await fetch(`${guarded.url}/_sandbox/requests`, { headers: { authorization: `Bearer ${token}` } })).json() as Array<{ path: string }>
  t.same(journal.filter((e) => e.path.startsWith('/vendor/')), [], 'the cookie came with a call the token authorized: the console\'s read is not journaled')
  await tokenPage.close()
  t.same(problems, [], 'no script errors in the token page')
})

t.test('console world picker: the panels show the world picked, its vendor reads use its credentials', { skip: executablePath === undefined ? NO_BROWSER : false }, async (t) => {
  if (executablePath === undefined) return
  const server = await startServer(testConfig({ port: 0 }), { fixture: demoFixture() })
  t.teardown(() => server.close())
  const base = server.url
  const created = await control(base, 'POST', '/worlds', { name: 'console world' }) as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  const id = created.id
  const abc = created.integrations.find((i) => i.clientId === `abc@${id}`)!
  const worldAuth = `Basic ${Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64')}`
  const note = (authorization: string, text: string) => fetch(`${base}/vendor/agency/1001/client/1000/log?version=4.0`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ refId: randomUUID(), ts: '2026-11-20T10:00:00Z', channel: 29, note: text })
  })
  // changes made in one world only: a note in each, and client 1000 a dead file in the created world
  t.equal((await note(worldAuth, 'note of the created world')).status, 200)
  t.equal((await note(DEMO, 'note of the default world')).status, 200)
  await control(base, 'PATCH', `/worlds/${id}/agencies/1001/clients/1000`, { details: { status: 'DeadFile' } })

  const context = await launchBrowser(executablePath, t.teardown.bind(t))
  const page = context.pages()[0] ?? await context.newPage()
  page.setDefaultTimeout(10_000)
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  const ready = () => page.locator('body[data-ready="true"]').waitFor()
  const writesOf1001 = async () => {
    await tid(page, 'tab-writes').click()
    await page.selectOption('[data-testid="writes-agency"]', '1001')
    await tid(page, 'writes-table').waitFor()
  }
  try {
    await page.goto(`${base}/_sandbox/ui`)
    await ready()
    await tid(page, 'world-picker').locator(`option[value="${id}"]`, { hasText: 'console world' }).waitFor({ state: 'attached' })
    t.equal(await tid(page, 'world-picker').inputValue(), 'default', 'the default world is shown first')
    await writesOf1001()
    await tid(page, 'writes-table', 'note of the default world').waitFor()
    t.equal(await tid(page, 'writes-table', 'note of the created world').count(), 0, "the default world's writes only")

    // pick the created world: every panel now shows it
    await page.selectOption('[data-testid="world-picker"]', id)
    await page.waitForURL(`${base}/_sandbox/ui?world=${id}#writes`)
    await ready()
    t.equal(await tid(page, 'world-picker').inputValue(), id, 'the picker shows the world picked')
    await writesOf1001()
    await tid(page, 'writes-table', 'note of the created world').waitFor()
    t.equal(await tid(page, 'writes-table', 'note of the default world').count(), 0, "the created world's writes only")

    // the client browser reads the vendor API as the world's abc, so it reads the world's data
    await tid(page, 'tab-clients').click()
    await page.selectOption('[data-testid="clients-agency"]', '1001')
    await tid(page, 'client-result-1000').click()
    await tid(page, 'client-read-meta', `as abc@${id} → 200`).waitFor()
    await tid(page, 'client-json', 'DeadFile').waitFor()
    t.pass("the vendor read used the world's credentials and answered the world's change")

    // its credentials, for a partner's integration too
    await tid(page, 'world-credentials').locator('summary').click()
    const row = tid(page, `credentials-abc@${id}`)
    await row.waitFor()
    t.match(await row.textContent(), abc.clientSecret, 'the secret is shown')
    t.match(await row.textContent(), worldAuth, 'and the Authorization header')
    await tid(page, 'tab-clock').click()
    await row.waitFor({ state: 'hidden' })
    t.pass('a click elsewhere closes the credentials')

    // control calls go to the world shown
    await tid(page, 'sandbox-info', 'console world').waitFor()
    await tid(page, 'clock-set-input').fill('2033-03-03T00:00:00Z')
    await tid(page, 'clock-set').click()
    await tid(page, 'clock-now', '2033-03-03T00:00:00Z').waitFor()
    t.match((await control(base, 'GET', `/worlds/${id}/clock`) as { now: string }).now, /^2033-03-03/, "the world's clock was set")
    t.notMatch((await control(base, 'GET', '/clock') as { now: string }).now, /^2033/, "the default world's was not")
    await page.screenshot({ path: join(ARTIFACTS, 'console-world.png') })

    // back to the default world
    await page.selectOption('[data-testid="world-picker"]', 'default')
    await page.waitForURL(`${base}/_sandbox/ui#clock`)
    await ready()
    await writesOf1001()
    await tid(page, 'writes-table', 'note of the default world').waitFor()
    t.equal(await tid(page, 'writes-table', 'note of the created world').count(), 0, 'the default world again')

    // a world that no longer exists sends the page back to the default world
    await control(base, 'DELETE', `/worlds/${id}`)
    await page.goto(`${base}/_sandbox/ui?world=${id}`)
    await tid(page, 'toast-error', `World ${id} no longer exists`).waitFor()
    await ready()
    t.equal(page.url(), `${base}/_sandbox/ui`, 'the page shows the default world')
    t.equal(await tid(page, 'world-picker').inputValue(), 'default')
  } catch (e) {
    await page.screenshot({ path: join(ARTIFACTS, 'console-world-failure.png'), fullPage: true }).catch(() => {})
    throw e
  }
  t.same(problems, [], 'no script errors in the page')
})

const tid = (page: Page, id: string, hasText?: string) => page.locator(`[data-testid="${id}"]`, hasText === undefined ? {} : { hasText })

async function control (base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/_sandbox${path}`, {
    method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  })
  return res.status === 204 ? undefined : res.json()
}

const vendorLog = (base: string, note: Record<string, unknown>) =>
  fetch(`${base}/vendor/agency/1001/client/1000/log?version=4.0`, {
    method: 'POST',
    headers: { authorization: DEMO, 'content-type': 'application/json' },
    body: JSON.stringify(note)
  })

async function scenario (t: Test, page: Page, base: string) {
  await page.goto(`${base}/_sandbox/ui`)
  await page.locator('body[data-ready="true"]').waitFor()

  // Integrations & agencies: flags shown and switchable
  await tid(page, 'agency-row-1001').waitFor()
  t.equal(await tid(page, 'agency-1004-connected').isChecked(), false, '1004 shows disconnected')
  t.equal(await tid(page, 'agency-1005-active').isChecked(), false, '1005 shows inactive')
  t.equal(await tid(page, 'sub-abc-1003-optedOut').isChecked(), true, 'abc/1003 shows opted out')
  t.equal(await tid(page, 'sub-abc-1002-scope-user-list').isChecked(), false, 'abc/1002 has no user-list')
  await tid(page, 'sub-abc-1002-scope-user-list').check()
  await tid(page, 'toast-ok', 'abc → 1002').waitFor()
  const integrations = await control(base, 'GET', '/integrations') as { clientId: string; agencies: { agencyId: number; scopes: string[] }[] }[]
  t.ok(integrations.find((i) => i.clientId === 'abc')!.agencies.find((s) => s.agencyId === 1002)!.scopes.includes('user-list'),
    'checking a scope box grants the scope')
  await page.screenshot({ path: join(ARTIFACTS, 'console-agencies.png') })

  // Clients: find one by policy number, read it as the vendor API answers each version
  await tid(page, 'tab-clients').click()
  await page.selectOption('[data-testid="clients-agency"]', '1005')
  await tid(page, 'clients-results').locator('button').first().click()
  await tid(page, 'client-integration-none').waitFor()
  t.ok(await tid(page, 'client-version-4.0').isDisabled(), 'nobody can read an inactive agency: only the control-plane model')
  await tid(page, 'client-read-meta', '/_sandbox/agencies/1005/clients/').waitFor()
  await page.selectOption('[data-testid="clients-agency"]', '1001')
  await tid(page, 'clients-search').fill('HIG-1000-01')
  await tid(page, 'clients-search').press('Enter')
  await tid(page, 'clients-results').locator('[data-testid="client-result-1000"]', { hasText: 'HIG-1000-01' }).waitFor()
  // Client 1000 is also in the agency's listing the search replaces: wait for the search's answer.
  await page.waitForFunction('document.querySelectorAll(\'[data-testid="clients-results"] button\').length === 1', undefined, { timeout: 5000 }).catch(() => {})
  t.equal(await tid(page, 'clients-results').locator('button').count(), 1, 'the policy number finds one client')
  await tid(page, 'client-result-1000').click()
  await tid(page, 'client-read-meta', 'version=4.0').waitFor()
  await tid(page, 'client-read-meta', 'as abc → 200').waitFor()
  await tid(page, 'client-json', 'HIG-1000-01').waitFor()
  await tid(page, 'group-policies', 'HIG-1000-01').waitFor()
  await tid(page, 'client-version-3.0').click()
  await tid(page, 'client-read-meta', 'version=3.0').waitFor()
  await tid(page, 'client-version-1').click()
  await tid(page, 'client-read-meta', 'GET /vendor/agency/1001/client/1000 as abc → 200').waitFor()
  await tid(page, 'client-json', 'allowCrossSell').waitFor()
  await tid(page, 'client-version-control').click()
  await tid(page, 'client-read-meta', '/_sandbox/agencies/1001/clients/1000').waitFor()
  await tid(page, 'client-version-4.0').click()
  await tid(page, 'client-read-meta', 'version=4.0').waitFor()
  await page.screenshot({ path: join(ARTIFACTS, 'console-clients.png') })
  const consoleReads = (await control(base, 'GET', '/requests') as Array<{ path: string }>).filter((e) => e.path === '/vendor/agency/1001/client/1000')
  t.same(consoleReads, [], 'the console\'s own vendor reads (its cookie) are not journaled')

  // Writes: disconnect 1001 from the page
  await tid(page, 'tab-writes').click()
  await page.selectOption('[data-testid="writes-agency"]', '1001')
  await tid(page, 'writes-disconnect').click()
  await tid(page, 'writes-agency-state', 'disconnected').waitFor()
  await tid(page, 'writes-reconnect').waitFor()
  const agencies = await control(base, 'GET', '/agencies') as { agencyId: number; connected: boolean }[]
  t.equal(agencies.find((a) => a.agencyId === 1001)!.connected, false, 'the Disconnect button disconnected the agency')

  // A log note through the vendor API is saved as pending, and shows up without a reload
  const refId = randomUUID()
  const res = await vendorLog(base, { refId, ts: '2026-11-20T10:00:00Z', channel: 29, note: 'hello from e2e' })
  t.equal(res.status, 202, 'a disconnected agency saves the log note')
  t.match(await res.text(), /^Saved/)
  const row = tid(page, `write-row-${refId}`)
  await page.locator(`[data-testid="write-row-${refId}"][data-status="pending"]`).waitFor()
  t.match(await row.textContent(), 'hello from e2e')

  // Data is text, never markup
  const markupRef = randomUUID()
  const markup = '<img src=x onerror="window.__xss=1"><b>bold?</b>'
  const res2 = await vendorLog(base, { refId: markupRef, ts: '2026-11-20T10:01:00Z', channel: 29, note: markup, extra: 'unknown key' })
  t.equal(res2.status, 202)
  await page.locator(`[data-testid="write-row-${markupRef}"][data-status="pending"]`).waitFor()
  t.match(await tid(page, `write-row-${markupRef}`).textContent(), markup, 'the note is shown as written')
  t.equal(await tid(page, 'writes-table').locator('img, b').count(), 0, 'no element made from data')
  t.equal(await page.evaluate('window.__xss'), undefined, 'no script ran')
  await tid(page, 'writes-reconnect', 'applies 2 pending').waitFor()

  // Reconnect applies them
  await tid(page, 'writes-reconnect').click()
  await tid(page, 'writes-message', '2 pending writes applied').waitFor()
  await page.locator(`[data-testid="write-row-${refId}"][data-status="applied"]`).waitFor()
  await page.locator(`[data-testid="write-row-${markupRef}"][data-status="applied"]`).waitFor()
  await tid(page, 'writes-agency-state', 'connected').waitFor()
  await row.click()
  await tid(page, `write-detail-${refId}`, refId).waitFor()
  await page.screenshot({ path: join(ARTIFACTS, 'console.png') })

  // The client's log notes list it, applied
  await tid(page, 'tab-clients').click()
  await tid(page, 'client-logs', 'hello from e2e').waitFor()
  t.equal(await tid(page, `status-${refId}`).textContent(), 'applied', 'the client view shows the note applied')

  // An attachment is listed with a download link serving its bytes
  const attachmentRef = randomUUID()
  const content = Buffer.from('%PDF-1.4 console e2e\n')
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
  const sent = await fetch(`${base}/vendor/agency/1001/client/1000/attachment?version=4.0`, {
    method: 'POST',
    headers: {
      authorization: DEMO,
      'content-type': 'application/octet-stream',
      RefId: attachmentRef,
      TS: '2026-11-20T10:02:00Z',
      Channel: '33',
      Desc: b64('Signed application'),
      FileName: b64('application'),
      FileExt: 'pdf',
      LogNote: b64('Application received'),
      TaskAssignedTo: 'Csr',
      TaskTitle: b64('Review the application'),
      TaskDescription: b64('Check the signature'),
      TaskDueDate: '2026-12-01T00:00:00Z'
    },
    body: gzipSync(content)
  })
  t.equal(sent.status, 200, 'attachment created')
  await tid(page, 'client-attachments', 'application.pdf').waitFor()
  await tid(page, 'client-tasks', 'Review the application').waitFor()
  const [download] = await Promise.all([page.waitForEvent('download'), tid(page, `attachment-download-${attachmentRef}`).click()])
  t.equal(download.suggestedFilename(), 'application.pdf')
  t.same(readFileSync((await download.path())!), content, 'the download link serves the attachment bytes')
  await page.screenshot({ path: join(ARTIFACTS, 'console-client-activity.png'), fullPage: true })

  // Requests: the journal, live, filterable, with bodies and warnings
  await tid(page, 'tab-requests').click()
  const logRow = page.locator('[data-testid^="request-row-"][data-path="/vendor/agency/1001/client/1000/log"][data-status="202"]')
  await logRow.first().waitFor()
  t.equal(await logRow.count(), 2, 'both log notes are journaled')
  const markupRow = logRow.first() // newest first
  const markupId = (await markupRow.getAttribute('data-testid'))!.replace('request-row-', '')
  await markupRow.click()
  await tid(page, `request-detail-${markupId}`, 'ignored unknown key extra').waitFor()
  await tid(page, `request-body-${markupId}`, 'unknown key').waitFor()
  const firstId = (await logRow.last().getAttribute('data-testid'))!.replace('request-row-', '')
  await logRow.last().click()
  await tid(page, `request-body-${firstId}`, 'hello from e2e').waitFor()

  const offices = await fetch(`${base}/vendor/agency/1001/offices?version=4.0`, { headers: { authorization: DEMO } })
  t.equal(offices.status, 200)
  await page.locator('[data-testid^="request-row-"][data-path="/vendor/agency/1001/offices"]').waitFor()
  t.pass('a new request appears in the open journal without a reload')
  await tid(page, 'requests-path').fill('/vendor/agency/*/offices')
  await page.waitForFunction(`(() => {
    const rows = [...document.querySelectorAll('[data-testid^="request-row-"]')]
    return rows.length > 0 && rows.every((r) => r.dataset.path === '/vendor/agency/1001/offices')
  })()`)
  await tid(page, 'requests-path').fill('')
  await tid(page, 'requests-status').fill('202')
  await page.waitForFunction(`(() => {
    const rows = [...document.querySelectorAll('[data-testid^="request-row-"]')]
    return rows.length === 2 && rows.every((r) => r.dataset.status === '202')
  })()`)
  await tid(page, 'requests-status').fill('')
  await page.locator('[data-testid^="request-row-"][data-path="/vendor/agency/1001/offices"]').waitFor()
  await page.screenshot({ path: join(ARTIFACTS, 'console-requests.png') })
  await tid(page, 'requests-clear').click()
  await tid(page, 'requests-count', 'No vendor requests').waitFor()
  t.same(await control(base, 'GET', '/requests'), [], 'Clear empties the journal')

  // Faults: add from the form, see its hits, remove it
  await tid(page, 'tab-faults').click()
  await tid(page, 'faults-empty').waitFor()
  await tid(page, 'fault-path').fill('/vendor/agencies')
  await tid(page, 'fault-status').fill('503')
  await tid(page, 'fault-times').fill('1')
  await tid(page, 'fault-headers').fill('Retry-After: 5')
  await tid(page, 'fault-add').click()
  await tid(page, 'fault-row-fault-1', 'answer 503').waitFor()
  const faulted = await fetch(`${base}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } })
  t.equal(faulted.status, 503, 'the rule added from the page answers')
  t.equal(faulted.headers.get('retry-after'), '5')
  await tid(page, 'fault-hits-fault-1', '1').waitFor()
  await tid(page, 'fault-row-fault-1', 'exhausted').waitFor()
  await page.screenshot({ path: join(ARTIFACTS, 'console-faults.png') })
  await tid(page, 'fault-remove-fault-1').click()
  await tid(page, 'faults-empty').waitFor()
  t.same(await control(base, 'GET', '/faults'), [], 'the rule is removed')

  // Clock: freeze, advance, set, unfreeze
  await tid(page, 'tab-clock').click()
  await tid(page, 'clock-state', 'running').waitFor()
  await tid(page, 'clock-freeze').click()
  await tid(page, 'clock-state', 'frozen').waitFor()
  const frozen = await control(base, 'GET', '/clock') as { now: string; frozen: boolean }
  t.equal(frozen.frozen, true, 'Freeze froze the clock')
  await tid(page, 'clock-advance-seconds').fill('3600')
  await tid(page, 'clock-advance').click()
  const advanced = Date.parse(frozen.now) + 3_600_000
  await tid(page, 'clock-now', new Date(advanced).toISOString().replace(/\.\d+Z$/, 'Z')).waitFor()
  t.equal(Date.parse(((await control(base, 'GET', '/clock')) as { now: string }).now), advanced, 'advanced by an hour')
  await tid(page, 'clock-set-input').fill('2027-01-01T00:00:00Z')
  await tid(page, 'clock-set').click()
  await tid(page, 'clock-now', '2027-01-01T00:00:00Z').waitFor()
  await tid(page, 'clock-freeze').click()
  await tid(page, 'clock-state', 'running').waitFor()
  const clock = await control(base, 'GET', '/clock') as { now: string; frozen: boolean }
  t.equal(clock.frozen, false, 'Unfreeze lets time run')
  t.ok(clock.now >= '2027-01-01T00:00:00', 'the clock was set')
  await tid(page, 'header-clock', '2027-01-01').waitFor()
  await page.screenshot({ path: join(ARTIFACTS, 'console-clock.png') })

  await sessionsScenario(t, page, base)
}

/** Sessions: start one from the page, record abc's requests, end it, read its verdict and report. */
async function sessionsScenario (t: Test, page: Page, base: string) {
  await tid(page, 'tab-sessions').click()
  await tid(page, 'sessions-empty').waitFor()
  const hostile = '<img src=x onerror="window.__xss=2">nightly & <b>sync</b>'
  await tid(page, 'session-name').fill(hostile)
  await page.selectOption('[data-testid="session-client"]', 'abc')
  await tid(page, 'session-start').click()
  await tid(page, 'toast-ok', 'Session 1 started: recording abc').waitFor()
  await page.locator('[data-testid="session-row-1"][data-state="open"]').waitFor()
  await tid(page, 'session-open-1').waitFor()
  await tid(page, 'session-verdict', 'no-evidence').waitFor()
  t.match(await tid(page, 'session-verdict').getAttribute('class'), /\bbad\b/, 'a run that recorded nothing is no evidence: a red badge')
  const sessions = await control(base, 'GET', '/sessions') as { id: number, name: string, clientId: string | null }[]
  t.same(sessions.map((s) => [s.id, s.name, s.clientId]), [[1, hostile, 'abc']], 'the form started a session recording abc')

  // abc with a wrong secret (auth-failed, an error), then a good request; the open table counts them
  const wrong = await fetch(`${base}/vendor/agencies?version=4.0`, { headers: { authorization: `Basic ${Buffer.from('abc:wrong').toString('base64')}` } })
  t.equal(wrong.status, 401)
  t.equal((await fetch(`${base}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } })).status, 200)
  await tid(page, 'session-recorded-1', '2').waitFor()
  t.pass('the recorded count moves while the session is open')

  await tid(page, 'session-end-1').click()
  await tid(page, 'toast-ok', 'Session 1 ended: fail').waitFor()
  await page.locator('[data-testid="session-row-1"][data-state="ended"]').waitFor()
  await tid(page, 'session-verdict', 'fail').waitFor()
  t.match(await tid(page, 'session-verdict').getAttribute('class'), /\bbad\b/, 'a fail verdict is a red badge')
  await tid(page, 'session-finding-auth-failed', 'auth-failed ×1').waitFor()
  await tid(page, 'session-counts', '1 error').waitFor()

  // The report page in a frame that may run nothing and reach nothing
  const frameElement = tid(page, 'session-report-frame')
  t.equal(await frameElement.getAttribute('sandbox'), '', 'the report frame is sandboxed with no permission')
  const frame = page.frameLocator('[data-testid="session-report-frame"]')
  await frame.locator('[data-verdict="fail"]').waitFor()
  await frame.locator('#finding-auth-failed', { hasText: 'Fix:' }).waitFor()
  await frame.locator('tr[data-rule="auth-failed"][data-result="fail"]').waitFor()
  await frame.locator('tr[data-rule="refid-conflict"][data-result="not-exercised"]').waitFor()
  t.equal(await frame.locator('tr[data-rule]').count() >= 20, true, 'every rule is listed in the report')
  t.match(await frame.locator('header').textContent(), hostile, 'the session name is shown as written in the report')
  t.match(await tid(page, 'session-row-1').textContent(), hostile, 'and in the table')
  t.equal(await frame.locator('img, b').count(), 0, 'no element made from data in the report')
  t.equal(await tid(page, 'panel-sessions').locator('img, b').count(), 0, 'nor in the panel')
  t.equal(await page.evaluate('window.__xss'), undefined, 'no script ran')
  await page.screenshot({ path: join(ARTIFACTS, 'console-sessions.png'), fullPage: true })
}
