import { gunzipSync } from 'node:zlib'
import { send, text, type Answer } from './http.js'
import { sleep, type PhaseSpec, type Run } from './context.js'
import { ABC, fixture, JSON_TYPE, liveClients, logNote, NORTHWIND } from './world.js'

/**
 * What a web page, a number past its range, a careless client's header and a fixture's metadata
 * could do to the control plane: each class the sandbox once let through, replayed.
 */

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'
const MARKER_TIME = '2031-05-06T07:08:09.000Z'

/** A problem body's detail, or the text. */
const detailOf = (a: Answer) => {
  try {
    return String((JSON.parse(text(a)) as { detail?: unknown }).detail ?? text(a))
  } catch {
    return text(a)
  }
}

/** The clock frozen at a marker time and an open session: what a reset or a session call would change. */
async function markState (run: Run): Promise<void> {
  await run.request({ method: 'POST', path: '/_sandbox/reset' })
  await run.request({ method: 'PUT', path: '/_sandbox/clock', headers: JSON_TYPE, body: JSON.stringify({ now: MARKER_TIME, frozen: true }) })
}

async function stateUnchanged (run: Run, sessionsBefore: number): Promise<string | undefined> {
  const clock = await run.request({ path: '/_sandbox/clock' })
  const sessions = await run.request({ path: '/_sandbox/sessions' })
  const now = clock.status === 200 ? (JSON.parse(text(clock)) as { now: string }).now : `(${clock.status})`
  const count = sessions.status === 200 ? (JSON.parse(text(sessions)) as unknown[]).length : -1
  if (now !== MARKER_TIME) return `the clock reads ${now}, not the marker ${MARKER_TIME}: a reset went through`
  if (count !== sessionsBefore) return `${count} sessions, ${sessionsBefore} before: a session call went through`
  return undefined
}

const crossSite: PhaseSpec = {
  name: 'cross-site-control',
  title: 'Web pages against the control plane: bodyless cross-site POSTs (no-cors fetch, sendBeacon, forms), DNS-rebinding Host names, framing',
  budgetMs: { short: 1_000, full: 5_000 },
  async run (run) {
    const p = run.phase
    const host = new URL(run.target.origin).host
    const port = new URL(run.target.origin).port
    await markState(run)
    const sessionsBefore = (JSON.parse(text(await run.request({ path: '/_sandbox/sessions' }))) as unknown[]).length
    // What a page of another site can send without asking first: no-cors fetch, sendBeacon, a form.
    const pages: [string, Record<string, string>][] = [
      ['no-cors fetch', { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'empty', 'user-agent': BROWSER }],
      ['sendBeacon', { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER }],
      ['form post', { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER }],
      ['another port of this host', { origin: `http://127.0.0.1:${Number(port) + 1}`, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'user-agent': BROWSER }],
      ['a sandboxed frame', { origin: 'null', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'user-agent': BROWSER }],
      ['an old browser (no Origin, no Sec-Fetch)', { 'user-agent': 'Mozilla/5.0 (Windows NT 6.1; Trident/7.0; rv:11.0) like Gecko', referer: 'http://evil.example/page' }]
    ]
    const calls: [string, string][] = [
      ['POST', '/_sandbox/reset'], ['POST', '/_sandbox/sessions'], ['POST', '/_sandbox/sessions/1/end'], ['DELETE', '/_sandbox/clock'],
      ['DELETE', '/_sandbox/requests'], ['DELETE', '/_sandbox/faults'], ['PATCH', '/_sandbox/agencies/1001'], ['PUT', '/_sandbox/agencies/1001/clients/1000']
    ]
    for (const [page, headers] of pages) {
      for (const [method, path] of calls) {
        if (p.expired) return
        const a = await run.request({ method, path, headers })
        p.check('a page of another origin is refused (403; an old browser without a JSON type: 415)', a.status === 403 || a.status === 415, `${page}: ${method} ${path} answered ${a.status}`)
      }
    }
    p.check('nothing a page sent reset the sandbox or touched its sessions', (await stateUnchanged(run, sessionsBefore)) === undefined, (await stateUnchanged(run, sessionsBefore)) ?? '')
    // DNS rebinding: the page's own name, resolved to this machine, and its same-origin reads.
    const names = ['rebind.example', 'rebind.example.', 'localhost.rebind.example', '127.0.0.1.nip.io', 'LOCALHOST.evil.example', 'sandbox', 'agency-sandbox']
    for (const name of names) {
      for (const path of ['/_sandbox/state', '/_sandbox/integrations', '/_sandbox/info', '/_sandbox/ui/', '/_sandbox/agencies/1001/clients/1000']) {
        if (p.expired) return
        const a = await run.request({ path, headers: { host: `${name}:${port}`, origin: `http://${name}:${port}`, 'sec-fetch-site': 'same-origin', 'user-agent': BROWSER } })
        p.check('a rebound host name is refused with 421 naming SANDBOX_ALLOWED_HOSTS', a.status === 421 && /SANDBOX_ALLOWED_HOSTS/.test(detailOf(a)), `${name}: GET ${path} answered ${a.status}`)
      }
      const reset = await run.request({ method: 'POST', path: '/_sandbox/reset', headers: { host: `${name}:${port}`, origin: `http://${name}:${port}`, 'sec-fetch-site': 'same-origin', ...JSON_TYPE } })
      p.check('a rebound host name cannot reset', reset.status === 421, `${name}: POST /_sandbox/reset answered ${reset.status}`)
    }
    p.check('nothing a rebound page sent reset the sandbox', (await stateUnchanged(run, sessionsBefore)) === undefined, (await stateUnchanged(run, sessionsBefore)) ?? '')
    // The console itself can be opened from a link, but no page may frame it; nothing is sniffed.
    const linked = await run.request({ path: '/_sandbox/ui/', headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'user-agent': BROWSER } })
    p.check('a link to the console opens it', linked.status === 200, `answered ${linked.status}`)
    p.check('the console forbids framing by other origins', /frame-ancestors 'self'/.test(String(linked.headers['content-security-policy'])) && linked.headers['x-frame-options'] === 'SAMEORIGIN',
      `CSP ${String(linked.headers['content-security-policy'])}, X-Frame-Options ${String(linked.headers['x-frame-options'])}`)
    const framed = await run.request({ path: '/_sandbox/ui/', headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe', 'user-agent': BROWSER } })
    p.check('the console is not served into another site\'s frame', framed.status === 403, `answered ${framed.status}`)
    const vendor = await run.request({ path: '/vendor/agencies?version=4.0', headers: { authorization: ABC } })
    for (const [what, a] of [['vendor API', vendor], ['control API', linked]] as const) {
      p.check('X-Content-Type-Options: nosniff on every answer', a.headers['x-content-type-options'] === 'nosniff', `${what}: ${String(a.headers['x-content-type-options'])}`)
    }
    // Programs and the sandbox's own pages still pass: a bodyless reset, a same-origin page.
    const own = await run.request({ method: 'POST', path: '/_sandbox/reset', headers: { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'user-agent': BROWSER } })
    p.check('a page of the sandbox itself resets', own.status === 200, `answered ${own.status}`)
    const program = await run.request({ method: 'POST', path: '/_sandbox/reset' })
    p.check('a program\'s bodyless reset still works', program.status === 200, `answered ${program.status}`)
    p.figure('Cross-site requests (pages × calls)', `${pages.length} × ${calls.length}`)
    p.figure('Rebound host names', names.length)
  }
}

/** The demo fixture's agency 2001 with its last client renumbered to the largest client number. */
function fixtureAtTheLimit (): unknown {
  const doc = structuredClone(fixture) as unknown as { integrations: { clientId: string; agencies: { agencyId: number }[] }[]; agencies: { agencyId: number; clients: { clientNumber: number }[] }[] }
  const agency = doc.agencies.find((a) => a.agencyId === 2001)!
  agency.clients[agency.clients.length - 1].clientNumber = 2147483647
  return {
    integrations: doc.integrations.filter((i) => i.clientId === 'northwind-crm').map((i) => ({ ...i, agencies: i.agencies.filter((s) => s.agencyId === 2001) })),
    agencies: [agency]
  }
}

const outOfRange: PhaseSpec = {
  name: 'out-of-range',
  title: 'Numbers and times past their range: create client after a client at 2147483647, the clock past 9999-12-31 and advanced without end',
  budgetMs: { short: 1_000, full: 5_000 },
  async run (run) {
    const p = run.phase
    const seeded = await run.request({ method: 'POST', path: '/_sandbox/reset', headers: JSON_TYPE, body: JSON.stringify(fixtureAtTheLimit()) })
    p.check('a fixture with a client at 2147483647 loads', seeded.status === 200, `reset answered ${seeded.status}: ${detailOf(seeded).slice(0, 120)}`)
    const body = { People: [{ FirstName: 'Past', LastName: 'Limit', MainContactType: 'First' }], Log: { Channel: 29, Note: 'one too many', TS: '2026-11-20T10:00:00Z' } }
    const created = await run.request({ method: 'POST', path: '/vendor/agency/2001/client?version=4.0', headers: { ...JSON_TYPE, authorization: NORTHWIND }, body: JSON.stringify(body) })
    p.check('create client past 2147483647 answers 409, never a number past it', created.status === 409 && !/2147483648/.test(text(created)), `answered ${created.status}: ${text(created).slice(0, 120)}`)
    // The state document holds secrets: read it outside the leak count, and put it back.
    const state = await send(run.target.origin, { path: '/_sandbox/state', timeoutMs: 30_000 })
    const again = await run.request({ method: 'POST', path: '/_sandbox/reset', headers: JSON_TYPE, body: state.body })
    p.check('state then reset still round-trips', state.status === 200 && again.status === 200, `state ${state.status}, reset ${again.status}: ${detailOf(again).slice(0, 120)}`)
    await run.request({ method: 'POST', path: '/_sandbox/reset' })

    const put = (now: string, frozen = true) => run.request({ method: 'PUT', path: '/_sandbox/clock', headers: JSON_TYPE, body: JSON.stringify({ now, frozen }) })
    const advance = (seconds: number) => run.request({ method: 'POST', path: '/_sandbox/clock/advance', headers: JSON_TYPE, body: JSON.stringify({ seconds }) })
    for (const now of ['+010000-01-01T00:00:00Z', '9999-12-31T23:00:00-05:00', '0000-06-01T00:00:00Z', '275760-09-13T00:00:00Z']) {
      const a = await put(now)
      p.check('a time outside years 1 to 9999 answers 400 naming now', a.status === 400 && /now/.test(detailOf(a)), `${now}: ${a.status} ${detailOf(a).slice(0, 100)}`)
    }
    p.check('the last millisecond of 9999 can be set', (await put('9999-12-31T23:59:59.999Z')).status === 200)
    const past = await advance(1)
    p.check('advancing past 9999 answers 400 naming seconds', past.status === 400 && /seconds/.test(detailOf(past)), `${past.status} ${detailOf(past).slice(0, 100)}`)
    // Advance by the most one call allows, again and again: refused at the end, never an invalid Date.
    await put('9500-01-01T00:00:00Z')
    let steps = 0
    let last = 200
    while (last === 200 && steps < 100 && !p.expired) {
      last = (await advance(315_360_000)).status
      steps++
    }
    p.check('advancing without end stops with a 400 at year 9999', last === 400, `after ${steps} steps: ${last}`)
    const client = liveClients(1001)[5].clientNumber
    const reads: [string, () => Promise<Answer>][] = [
      ['clock', () => run.request({ path: '/_sandbox/clock' })],
      ['info', () => run.request({ path: '/_sandbox/info' })],
      ['requests', () => run.request({ path: '/_sandbox/requests?limit=5' })],
      ['sessions', () => run.request({ path: '/_sandbox/sessions' })],
      ['log note', () => run.request({ method: 'POST', path: `/vendor/agency/1001/client/${client}/log?version=4.0`, headers: { ...JSON_TYPE, authorization: ABC }, body: JSON.stringify(logNote(run.rng.uuid())) })]
    ]
    for (const [what, call] of reads) {
      const a = await call()
      p.check('at the end of the clock\'s range every call still answers', a.status === 200, `${what}: ${a.status} ${text(a).slice(0, 100)}`)
    }
    // A running clock set just before the end stops there.
    await put('9999-12-31T23:59:59.500Z', false)
    await sleep(700)
    const running = JSON.parse(text(await run.request({ path: '/_sandbox/clock' }))) as { now: string }
    p.check('a running clock stops at the end of 9999', running.now === '9999-12-31T23:59:59.999Z', `reads ${running.now}`)
    p.figure('Advances of 10 years before the clock refused', steps - 1)
    await run.request({ method: 'DELETE', path: '/_sandbox/clock' })
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
  }
}

interface JournalEntry { path: string; status: number }

const consoleHeader: PhaseSpec = {
  name: 'console-header',
  title: 'x-sandbox-console sent by a partner (0, 1, yes, empty): still journaled, faulted and examined',
  budgetMs: { short: 1_000, full: 5_000 },
  async run (run) {
    const p = run.phase
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
    const session = JSON.parse(text(await run.request({ method: 'POST', path: '/_sandbox/sessions', headers: JSON_TYPE, body: JSON.stringify({ name: 'careless', clientId: 'abc' }) }))) as { id: number }
    await run.request({ method: 'POST', path: '/_sandbox/faults', headers: JSON_TYPE, body: JSON.stringify({ match: { path: '/vendor/agency/1001/users' }, effect: { status: 418 } }) })
    const numbers = Array.from({ length: 201 }, (_, i) => 1000 + i)
    const values = ['0', '1', 'yes', '', 'true']
    for (const value of values) {
      const headers = { authorization: ABC, 'x-sandbox-console': value }
      const batch = await run.request({ method: 'POST', path: '/vendor/agency/1001/clients?version=4.0', headers: { ...headers, ...JSON_TYPE }, body: JSON.stringify({ clientNumbers: numbers }) })
      p.check('the over-limit batch is refused as any partner\'s', batch.status === 400, `x-sandbox-console: '${value}': ${batch.status}`)
      const faulted = await run.request({ path: '/vendor/agency/1001/users?version=4.0', headers })
      p.check('fault rules apply to it', faulted.status === 418, `x-sandbox-console: '${value}': ${faulted.status}`)
    }
    const journal = JSON.parse(text(await run.request({ path: '/_sandbox/requests?agencyId=1001&limit=100' }))) as JournalEntry[]
    const journaled = journal.filter((e) => e.path === '/vendor/agency/1001/clients' || e.path === '/vendor/agency/1001/users').length
    p.check('every such request is journaled', journaled === values.length * 2, `${journaled} of ${values.length * 2} journaled`)
    const ended = JSON.parse(text(await run.request({ method: 'POST', path: `/_sandbox/sessions/${session.id}/end` }))) as { verdict?: string; findings?: { rule: string }[] }
    p.check('the examiner fails the careless client (batch-over-limit)', ended.verdict === 'fail' && (ended.findings ?? []).some((f) => f.rule === 'batch-over-limit'),
      `verdict ${String(ended.verdict)}, findings ${(ended.findings ?? []).map((f) => f.rule).join(', ')}`)
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
  }
}

/** The demo agency 2001 and one attachment write with the given metadata. */
function fixtureWithAttachment (write: Record<string, unknown>, data: Record<string, unknown>): unknown {
  const doc = structuredClone(fixture) as unknown as { integrations: { clientId: string; agencies: { agencyId: number }[] }[]; agencies: { agencyId: number; clients: { clientNumber: number }[] }[] }
  const agency = doc.agencies.find((a) => a.agencyId === 2001)!
  return {
    integrations: doc.integrations.filter((i) => i.clientId === 'northwind-crm').map((i) => ({ ...i, agencies: i.agencies.filter((s) => s.agencyId === 2001) })),
    agencies: [agency],
    writes: [{
      agencyId: 2001,
      clientNumber: agency.clients[0].clientNumber,
      kind: 'attachment',
      refId: '6f1c2a8e-4b7d-4c1e-9a3b-2d5e8f0a1b2c',
      integration: 'northwind-crm',
      version: '4.0',
      status: 'applied',
      receivedAt: '2026-11-20T10:00:00.000Z',
      appliedAt: '2026-11-20T10:00:00.000Z',
      data: { channel: 33, ts: '2026-11-20T10:00:00Z', description: 'scan', logNote: 'scan', fileName: 'scan', fileExt: 'pdf', ...data },
      content: Buffer.from('<html><script>alert(document.domain)</script></html>').toString('base64'),
      ...write
    }]
  }
}

const attachmentMetadata: PhaseSpec = {
  name: 'attachment-metadata',
  title: 'Hostile attachment metadata in fixtures: HTML and SVG content types, non-Latin-1 types, missing names, non-GUID RefIds',
  budgetMs: { short: 1_000, full: 5_000 },
  async run (run) {
    const p = run.phase
    const refused: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
      ['file type html', {}, { fileExt: 'html', contentType: 'text/html' }, 'fileExt'],
      ['file type svg', {}, { fileExt: 'svg', contentType: 'image/svg+xml' }, 'fileExt'],
      ['no file name', {}, { fileName: undefined }, 'fileName'],
      ['no file type', {}, { fileExt: undefined }, 'fileExt'],
      ['a RefId that is no GUID', { refId: '../../etc/passwd' }, {}, 'refId'],
      ['an unknown version', { version: '9.9' }, {}, 'version']
    ]
    for (const [what, write, data, field] of refused) {
      const a = await run.request({ method: 'POST', path: '/_sandbox/reset', headers: JSON_TYPE, body: JSON.stringify(fixtureWithAttachment(write, data)) })
      p.check('a fixture with hostile attachment metadata is refused with 400 naming the field', a.status === 400 && text(a).includes(field), `${what}: ${a.status} ${detailOf(a).slice(0, 120)}`)
    }
    // Metadata that can be derived loads, and is served as the file type says, never as the document said.
    const derived: [string, Record<string, unknown>][] = [
      ['contentType text/html on a pdf', { contentType: 'text/html' }], ['contentType image/svg+xml', { contentType: 'image/svg+xml' }],
      ['a non-Latin-1 contentType', { contentType: 'text/ĥtml; charset=日本' }], ['fileExt .PDF', { fileExt: '.PDF', contentType: 'application/pdf' }]
    ]
    for (const [what, data] of derived) {
      const a = await run.request({ method: 'POST', path: '/_sandbox/reset', headers: JSON_TYPE, body: JSON.stringify(fixtureWithAttachment({}, data)) })
      p.check('a fixture whose metadata can be derived loads', a.status === 200, `${what}: ${a.status} ${detailOf(a).slice(0, 120)}`)
      if (a.status !== 200) continue
      const down = await run.request({ path: '/_sandbox/agencies/2001/attachments/6f1c2a8e-4b7d-4c1e-9a3b-2d5e8f0a1b2c/content' })
      const bytes = down.headers['content-encoding'] === 'gzip' ? gunzipSync(down.body) : down.body
      p.check('the download is application/pdf with nosniff, as an attachment named scan.pdf',
        down.status === 200 && down.headers['content-type'] === 'application/pdf' && down.headers['x-content-type-options'] === 'nosniff' &&
        /filename="scan\.pdf"/.test(String(down.headers['content-disposition'])) && bytes.length > 0,
        `${what}: ${down.status} ${String(down.headers['content-type'])} ${String(down.headers['x-content-type-options'])} ${String(down.headers['content-disposition'])}`)
    }
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
  }
}

export const CONTROL_PHASES: PhaseSpec[] = [crossSite, outOfRange, consoleHeader, attachmentMetadata]
