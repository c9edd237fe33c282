import { gunzipSync, gzipSync } from 'node:zlib'
import { text } from './http.js'
import { sleep, type PhaseSpec } from './context.js'
import { ABC, attachmentHeaders, b64, createClientBody, holdsSecret, JSON_TYPE, liveClients, sha256, TS } from './world.js'

/** Edges: the docs route, attachment file names, the create-client budget. */

const docsTraversal: PhaseSpec = {
  name: 'docs-traversal',
  title: 'The docs route: dot segments (raw, as sent with --path-as-is) towards the control plane',
  budgetMs: { short: 1_000, full: 5_000 },
  async run (run) {
    const p = run.phase
    const host = new URL(run.target.origin).host
    const paths = [
      '/docs/%2e%2e/_sandbox/state', '/docs/%2E%2E/_sandbox/state', '/docs/../_sandbox/state', '/docs/.%2e/_sandbox/state',
      '/docs/%2e./_sandbox/state', '/docs/%2e%2e%2f_sandbox%2fstate', '/docs/..%2f_sandbox/state', '/docs/..%2F_sandbox%2Fstate',
      '/docs//../_sandbox/state', '/docs/./../_sandbox/state', '/docs/static/%2e%2e/%2e%2e/_sandbox/state', '/docs/%252e%252e/_sandbox/state',
      '/docs/%2e%2e/%2e%2e/_sandbox/state', '/docs/..;/_sandbox/state', '/docs/..\\_sandbox/state', '/docs/%2e%2e%5c_sandbox/state',
      '/docs/json/%2e%2e/%2e%2e/_sandbox/state', '/docs/%2e%2e/_sandbox/integrations', '/docs/%2e%2e/_sandbox/info',
      '/docs/%2e%2e/_sandbox/state?x=1', '/docs/%2e%2e/vendor/agencies?version=4.0'
    ]
    let answered = 0
    for (const path of paths) {
      if (p.expired) return
      const a = await run.raw(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: */*\r\nConnection: close\r\n\r\n`)
      if (a.status > 0) answered++
      const body = a.body.toString('utf8')
      // run.raw already counts a client secret in any answer as a leak; these must not reach the control plane at all.
      const controlData = /"integrations"\s*:|"counts"\s*:|"agencyId"\s*:/.test(body)
      p.check('no control-plane or vendor data through /docs/', !holdsSecret(body) && !controlData, `${path}: ${a.status} ${body.slice(0, 100)}`)
      p.check('an answer (4xx or a document), never 5xx', a.status > 0 && a.status < 500, `${path}: ${a.status} ${a.error ?? ''}`)
    }
    p.figure('Traversal paths tried', paths.length)
    p.figure('Answered', answered)
    const docs = await run.request({ path: '/docs/' })
    p.check('the docs page itself still answers 200', docs.status === 200, `/docs/: ${docs.status}`)
  }
}

const attachmentNames: PhaseSpec = {
  name: 'attachment-names',
  title: 'Attachments with non-Latin-1 and control characters in FileName, then downloaded',
  budgetMs: { short: 1_000, full: 6_000 },
  async run (run) {
    const p = run.phase
    const client = liveClients(1001)[3].clientNumber
    const names = [
      { name: 'résumé signé.pdf', plain: true }, { name: '契約書 2026.pdf', plain: true }, { name: 'Ωμέγα – ✓ 📄.pdf', plain: true },
      { name: 'Заявление.pdf', plain: true }, { name: 'quote " and ; semi.pdf', plain: true }, { name: 'tab\there.pdf', plain: false },
      { name: 'line\r\nX-Injected: yes.pdf', plain: false }, { name: 'nul\u0000byte.pdf', plain: false }, { name: 'bell\u0007.pdf', plain: false }
    ]
    const v1Headers = (refId: string, fileName: string) => ({
      authorization: ABC,
      'content-type': 'application/octet-stream',
      RefId: refId,
      TS,
      Action: '33',
      Desc: b64('scan'),
      FileName: b64(fileName),
      FileExt: 'pdf',
      LogBody: b64('Scan received'),
      LogDescription: b64('Scan'),
      SuspendedFor: 'Producer',
      SuspendedForInitials: '',
      SuspenseCategory: b64('Docs'),
      SuspenseDueDate: '2026-12-01T00:00:00Z'
    })
    for (const [i, { name, plain }] of names.entries()) {
      for (const version of ['4.0', '1'] as const) {
        if (p.expired) return
        const refId = run.rng.uuid()
        const content = Buffer.from(`%PDF-1.4 attack ${i} ${version} ${refId}`)
        const headers = version === '4.0' ? attachmentHeaders(ABC, refId, name) : v1Headers(refId, name)
        const path = `/vendor/agency/1001/client/${client}/attachment${version === '4.0' ? '?version=4.0' : ''}`
        const up = await run.request({ method: 'POST', path, headers, body: gzipSync(content) })
        const what = `${JSON.stringify(name)} (${version})`
        if (plain) p.check('upload of a printable UTF-8 file name answers 200', up.status === 200, `${what}: ${up.status} ${text(up).slice(0, 100)}`)
        else p.check('upload with control characters answers 200 or 400', up.status === 200 || up.status === 400, `${what}: ${up.status} ${text(up).slice(0, 100)}`)
        if (up.status !== 200) continue
        const down = await run.request({ path: `/_sandbox/agencies/1001/attachments/${refId}/content` })
        let bytes = down.body
        if (down.headers['content-encoding'] === 'gzip') bytes = gunzipSync(bytes)
        p.check('download of an uploaded attachment answers 200 with its bytes', down.status === 200 && sha256(bytes) === sha256(content), `${what}: ${down.status} ${text(down).slice(0, 100)}`)
        const disposition = String(down.headers['content-disposition'] ?? '')
        const needsUtf8 = /[^\x20-\x7e]/.test(name)
        p.check('Content-Disposition names the file (filename*=UTF-8 when not ASCII, RFC 6266), nothing injected',
          down.status !== 200 || ((needsUtf8 ? /filename\*=UTF-8''/i : /filename/i).test(disposition) && down.headers['x-injected'] === undefined),
          `${what}: ${disposition || '(none)'}`)
      }
    }
  }
}

const createBudget: PhaseSpec = {
  name: 'create-budget',
  title: 'Create-client budget: refused calls (403, 400) must not use the 25/s window; the order 401, 403, 400',
  budgetMs: { short: 2_000, full: 8_000 },
  async run (run) {
    const p = run.phase
    await sleep(1100) // an empty window
    const create = (agency: number, body: unknown, auth = ABC) =>
      run.request({ method: 'POST', path: `/vendor/agency/${agency}/client?version=4.0`, headers: { ...JSON_TYPE, authorization: auth }, body: JSON.stringify(body) })
    const refused: [string, number, number, unknown][] = [
      ['opted-out agency 1003', 1003, 403, createClientBody(run.rng.uuid())],
      ['agency 1002 without client-create', 1002, 403, createClientBody(run.rng.uuid())],
      ['invalid body on 1001', 1001, 400, { People: [] }]
    ]
    // One call after the other: each create is a transaction of its own, and 30 of them queued at once
    // would be measured by the health probe as one long block.
    const seen: string[] = []
    for (const [what, agency, expected, body] of refused) {
      const statuses: number[] = []
      for (let i = 0; i < 10; i++) statuses.push((await create(agency, body)).status)
      seen.push(`${what}: ${statuses.join(' ')}`)
      for (const s of statuses) p.check(`refused calls answer ${expected === 403 ? '403' : '400'}, never 429`, s === expected, `${what}: ${s}`)
    }
    const valid: number[] = []
    for (let i = 0; i < 5; i++) valid.push((await create(1001, createClientBody(`budget-${run.rng.uuid()}`))).status)
    for (const s of valid) p.check('the 5 valid calls after 30 refused ones succeed', s === 200, `valid call answered ${s} (${valid.join(' ')})`)
    // The order of checks on one call with everything wrong at once: credentials, then agency, then body.
    const wrongSecret = await create(1003, { People: [] }, 'Basic ' + Buffer.from('abc:nope').toString('base64'))
    const forbidden = await create(1003, { People: [] })
    const invalid = await create(1001, { People: [] })
    p.check('the order of checks: 401, then 403, then 400', wrongSecret.status === 401 && forbidden.status === 403 && invalid.status === 400,
      `wrong secret ${wrongSecret.status}, opted out ${forbidden.status}, invalid ${invalid.status}`)
    p.figure('Refused calls', seen.join('; '))
    p.figure('Valid calls after them', valid.join(' '))
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
  }
}

export const EDGE_PHASES: PhaseSpec[] = [docsTraversal, attachmentNames, createBudget]
