import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startServer } from '../../src/server.js'
import { demoFixture, testConfig } from '../helpers/app.js'
import { chromiumPath, launchBrowser, NO_BROWSER } from '../helpers/browser.js'

/**
 * Finding 2 in a real browser: a page of another site (evil.example, resolved to this machine by
 * the browser's host rules) tries what any page can do without asking: a bodyless no-cors POST,
 * sendBeacon, a form, a frame; and a page whose DNS name was rebound to this machine reads the
 * state document from its own origin. None of it may change or read the sandbox.
 */

const executablePath = chromiumPath()
const MARKER = '2031-05-06T07:08:09.000Z'

t.test('a web page cannot drive or read a token-less sandbox', { skip: executablePath === undefined ? NO_BROWSER : false, timeout: 90_000 }, async (t) => {
  const server = await startServer(testConfig({ port: 0 }), { fixture: demoFixture() })
  t.teardown(() => server.close())
  const sandbox = new URL(server.url)
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/_sandbox${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return res.json() as Promise<any>
  }
  await control('PUT', '/clock', { now: MARKER, frozen: true })

  // The attacker's site: one page that fires every request a page may send unasked, one with a form, one with a frame.
  const target = `http://127.0.0.1:${sandbox.port}`
  const pages: Record<string, string> = {
    '/fire': `<script>
      fetch('${target}/_sandbox/reset', { method: 'POST', mode: 'no-cors' }).catch(() => {})
      fetch('${target}/_sandbox/sessions', { method: 'POST', mode: 'no-cors', body: '{}' }).catch(() => {})
      fetch('http://localhost:${sandbox.port}/_sandbox/reset', { method: 'POST', mode: 'no-cors', credentials: 'include' }).catch(() => {})
      navigator.sendBeacon('${target}/_sandbox/sessions')
      navigator.sendBeacon('${target}/_sandbox/clock/advance', '{"seconds":60}')
      document.title = 'fired'
    </script>`,
    '/form': `<form method="post" action="${target}/_sandbox/reset" enctype="text/plain"><input name="x" value="y"></form><script>document.forms[0].submit()</script>`,
    '/frame': `<iframe src="${target}/_sandbox/ui/" width="800" height="600"></iframe>`
  }
  const attacker = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pages[req.url ?? ''] ?? 'not here')
  })
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => attacker.close())
  const evil = `http://evil.example:${(attacker.address() as AddressInfo).port}`

  const context = await launchBrowser(executablePath!, t.teardown.bind(t), ['--host-resolver-rules=MAP evil.example 127.0.0.1, MAP rebind.example 127.0.0.1'])
  const page = await context.newPage()
  const seen: string[] = []
  page.on('response', (r) => { if (r.url().includes('/_sandbox/')) seen.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`) })

  await page.goto(`${evil}/fire`)
  await page.waitForFunction("document.title === 'fired'")
  await page.goto(`${evil}/form`)
  await page.waitForURL(/\/_sandbox\/reset/)
  t.match(await page.content(), /cross-site-request/, 'the form lands on the 403 problem')
  await page.goto(`${evil}/frame`)
  await page.waitForLoadState('load')
  const frame = page.frames().find((f) => f !== page.mainFrame())
  const framedTitle = await frame?.evaluate('document.title').catch(() => '(blocked)')
  t.not(framedTitle, 'agency-sandbox console', `the console does not load in another site's frame (${String(framedTitle)})`)

  // Settle: every request the pages sent has reached the sandbox before its state is read.
  const info = await control('GET', '/info')
  t.equal((await control('GET', '/clock')).now, MARKER, 'no reset, no clock change went through')
  t.same(await control('GET', '/sessions'), [], 'no session was started')
  t.equal(info.counts.faults, 0)
  t.comment(`answers the browser saw: ${seen.join(', ')}`)

  // DNS rebinding: a page of rebind.example (now resolved to this machine) reads from its own origin.
  const rebound = `http://rebind.example:${sandbox.port}`
  const health = await page.goto(`${rebound}/_sandbox/health`)
  t.equal(health?.status(), 200, 'the rebound page loads (health answers any name)')
  const read = await page.evaluate(async () => {
    const res = await fetch('/_sandbox/state')
    return { status: res.status, body: await res.text() }
  })
  t.equal(read.status, 421, 'its same-origin read of the state is refused')
  t.notMatch(read.body, /clientSecret|nw-sandbox-secret/, 'no secret reaches the page')
  t.match(read.body, /SANDBOX_ALLOWED_HOSTS/, 'the answer names the setting')
  const reset = await page.evaluate(async () => (await fetch('/_sandbox/reset', { method: 'POST', headers: { 'content-type': 'application/json' } })).status)
  t.equal(reset, 421, 'nor can it reset')
  t.equal((await control('GET', '/clock')).now, MARKER, 'still not reset')

  // The console, opened from the sandbox's own origin, still works (the full tour is test/public/console.test.ts).
  await page.goto(`${server.url}/_sandbox/ui/`)
  await page.waitForFunction("document.title === 'agency-sandbox console'")
  const own = await page.evaluate(async () => (await fetch('/_sandbox/reset', { method: 'POST', headers: { 'x-sandbox-console': '1' } })).status)
  t.equal(own, 200, 'a page of the sandbox itself resets')
  t.not((await control('GET', '/clock')).now, MARKER, 'and the reset went through')
})
