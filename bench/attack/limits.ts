import { connect } from 'node:net'
import { text } from './http.js'
import type { PhaseSpec, Run } from './context.js'
import { ABC, b64, attachmentHeaders, createClientBody, DEMO_FIXTURE_FILE, JSON_TYPE, liveClients, logNote, receipt } from './world.js'
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'

/** Body limits and parsers: oversized control bodies, deep nesting, overflowing numbers, the smaller ones. */

const MiB = 1024 * 1024
const GiB = 1024 * MiB
const fmt = (bytes: number) => (bytes >= MiB ? `${(bytes / MiB).toFixed(bytes % MiB === 0 ? 0 : 2)} MiB` : `${bytes} bytes`)
const isProblem = (type: string | string[] | undefined) => /^application\/problem\+json/.test(String(type ?? ''))

/** True when the server answers 413 to the headers alone (Content-Length above its limit) within waitMs. */
function announces413 (origin: string, path: string, contentLength: number, waitMs: number): Promise<boolean> {
  const url = new URL(origin)
  return new Promise((resolve) => {
    let seen = ''
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`)
    })
    const finish = (result: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(result)
    }
    const timer = setTimeout(() => finish(false), waitMs)
    socket.on('data', (c: Buffer) => {
      seen += c.toString('latin1')
      if (seen.includes('\r\n')) finish(seen.startsWith('HTTP/1.1 413'))
    })
    socket.on('error', () => finish(false))
  })
}

/**
 * The largest Content-Length the endpoint accepts, found from the headers alone (no body is
 * sent). First every round size from 1 MiB to 1 GiB and one byte more, all at once; when no pair
 * brackets the limit, a 17-way search between the closest of them, 16 probes at a time. Silence
 * counts as accepted, and a busy server is silent too: the bound found is asked again with a long
 * wait (1 s), and the search starts over below it when it turns out rejected. null: 1 GiB is accepted.
 */
async function findLimit (run: Run, path: string): Promise<number | null> {
  const rejects = async (n: number, waitMs: number) => {
    run.phase.tried++
    return announces413(run.target.origin, path, n, waitMs)
  }
  if (!(await rejects(GiB + 1, 3000))) return null
  const sizes = [1, 2, 4, 8, 16, 32, 50, 64, 100, 128, 200, 256, 500, 512, 1024].flatMap((m) => [m * MiB, m * MiB + 1])
  const rejected = await Promise.all(sizes.map((n) => rejects(n, 500)))
  let lo = 0
  let hi = GiB + 1
  for (const [i, size] of sizes.entries()) if (rejected[i]) hi = Math.min(hi, size)
  for (const [i, size] of sizes.entries()) if (!rejected[i] && size < hi) lo = Math.max(lo, size)
  for (let attempt = 0; attempt < 3 && !run.phase.expired; attempt++) {
    while (hi - lo > 1 && !run.phase.expired) {
      const step = Math.max(1, Math.ceil((hi - lo) / 17))
      const points: number[] = []
      for (let x = lo + step; x < hi && points.length < 16; x += step) points.push(x)
      const answers = await Promise.all(points.map((n) => rejects(n, 300)))
      const first = answers.indexOf(true)
      hi = first === -1 ? hi : points[first]
      lo = first === -1 ? points[points.length - 1] : first === 0 ? lo : points[first - 1]
    }
    if (lo === 0 || !(await rejects(lo, 1000))) return lo
    hi = lo
    lo = 0
  }
  return lo
}

const oversizedBodies: PhaseSpec = {
  name: 'oversized-bodies',
  title: 'Oversized control bodies (reset, agency import): just over the limit streamed chunked, at the limit',
  budgetMs: { short: 7_000, full: 50_000 },
  async run (run) {
    const p = run.phase
    const endpoints = [{ path: '/_sandbox/reset', name: 'reset', at: 0 }, { path: '/_sandbox/agencies', name: 'agency import', at: 0 }]
    const head = Buffer.from('{"p":"')
    const tail = Buffer.from('"}')
    const lives = async (crashes: number, after: string) =>
      p.check('the server lives on', run.target.crashes.length === crashes && (await run.healthy()), after)
    for (const endpoint of endpoints) {
      const { path, name } = endpoint
      if (p.expired) return
      await run.settle() // a server still busy with the last body would look as if it accepted any size
      const limit = await findLimit(run, path)
      p.figure(`${name}: largest Content-Length accepted`, limit === null ? 'none below 1 GiB' : fmt(limit))
      p.check('a limit is announced: 413 for a Content-Length above it', limit !== null, `${path} accepts 1 GiB`)
      endpoint.at = limit ?? GiB
      const crashes = run.target.crashes.length

      // One byte over the limit, chunked: the server only learns the size by reading it (and the
      // body goes no further, so the client is not still writing when the server closes).
      const over = await run.stream({ method: 'POST', path, headers: JSON_TYPE, head, fill: Buffer.from('a'), fillBytes: endpoint.at + 1 - head.length, tail: Buffer.alloc(0), chunked: true, endBody: false })
      p.figure(`${name}: chunked body just over the limit`, `${over.status || over.error} after ${fmt(over.written)} sent, ${over.ms.toFixed(0)} ms`)
      p.check('413 problem for a chunked body just over the limit', over.status === 413 && isProblem(over.headers['content-type']), `${path}: ${over.status} ${over.error ?? ''} ${text(over).slice(0, 120)}`)
      await lives(crashes, `${path} after the chunked body`)
      if (p.expired) return

      // At the limit (the crash): one long string, Content-Length given.
      if (name === 'reset' || !run.options.short) {
        const atLimit = await run.stream({ method: 'POST', path, headers: JSON_TYPE, head, fill: Buffer.from('a'), fillBytes: endpoint.at - head.length - tail.length, tail, chunked: false })
        p.figure(`${name}: string document at the limit`, `${atLimit.status || atLimit.error}, ${atLimit.ms.toFixed(0)} ms`)
        p.check('a document at the limit is answered with a 4xx (not a fixture), never a 5xx or a crash',
          atLimit.status >= 400 && atLimit.status < 500 && run.target.crashes.length === crashes, `${path}: ${atLimit.status} ${atLimit.error ?? ''} ${text(atLimit).slice(0, 120)}`)
        await lives(crashes, `${path} after the document at the limit`)
      }
    }
    // Full run, last: at the limit, an array of empty objects (the most objects per byte JSON allows).
    if (run.options.short) return
    for (const { path, name, at } of endpoints) {
      if (p.expired) return
      await run.settle()
      const crashes = run.target.crashes.length
      const many = await run.stream({ method: 'POST', path, headers: JSON_TYPE, head: Buffer.from('['), fill: Buffer.from('{},'), fillBytes: Math.floor((at - 4) / 3) * 3, tail: Buffer.from('{}]'), chunked: false })
      p.figure(`${name}: [{},{},…] at the limit`, `${many.status || many.error}, ${many.ms.toFixed(0)} ms`)
      p.check('a document at the limit is answered with a 4xx (not a fixture), never a 5xx or a crash',
        many.status >= 400 && many.status < 500 && run.target.crashes.length === crashes, `${path} [{},…]: ${many.status} ${many.error ?? ''} ${text(many).slice(0, 120)}`)
      await lives(crashes, `${path} after [{},…]`)
    }
  }
}

const DEPTH = 10_000
const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH)
const deepArray = '['.repeat(DEPTH) + ']'.repeat(DEPTH)

const deepNesting: PhaseSpec = {
  name: 'deep-nesting',
  title: `JSON nested ${DEPTH.toLocaleString('en-US')} deep in every body the sandbox accepts`,
  budgetMs: { short: 1_500, full: 10_000 },
  async run (run) {
    const p = run.phase
    const [first, second] = liveClients(1001)
    const vendor = { ...JSON_TYPE, authorization: ABC }
    const without = (o: object) => JSON.stringify(o).slice(0, -1)
    const cases = (deep: string) => [
      { what: 'fault rule effect.body', method: 'POST', path: '/_sandbox/faults', headers: JSON_TYPE, body: `{"match":{"path":"/vendor/agency/1001/offices"},"effect":{"status":418,"body":${deep}}}` },
      { what: 'client details (PATCH)', method: 'PATCH', path: `/_sandbox/agencies/1001/clients/${first.clientNumber}`, headers: JSON_TYPE, body: `{"details":{"source":"x","extra":${deep}}}` },
      { what: 'reset fixture', method: 'POST', path: '/_sandbox/reset', headers: JSON_TYPE, body: `{"integrations":[],"agencies":[],"extra":${deep}}` },
      { what: 'agency import', method: 'POST', path: '/_sandbox/agencies', headers: JSON_TYPE, body: `{"agencyId":3999,"extra":${deep}}` },
      { what: 'integration', method: 'POST', path: '/_sandbox/integrations', headers: JSON_TYPE, body: `{"clientId":"deep","extra":${deep}}` },
      { what: 'clock', method: 'PUT', path: '/_sandbox/clock', headers: JSON_TYPE, body: `{"frozen":false,"extra":${deep}}` },
      { what: 'vendor log note, deep ignored key', method: 'POST', path: `/vendor/agency/1001/client/${second.clientNumber}/log?version=4.0`, headers: vendor, body: `${without(logNote(run.rng.uuid()))},"extra":${deep}}` },
      { what: 'vendor batch read', method: 'POST', path: '/vendor/agency/1001/clients?version=4.0', headers: vendor, body: `{"clientNumbers":[${first.clientNumber}],"extra":${deep}}` },
      { what: 'vendor receipts', method: 'POST', path: `/vendor/agency/1001/client/${second.clientNumber}/receipts?version=4.0`, headers: vendor, body: `[${without(receipt(run.rng.uuid()))},"extra":${deep}}]` },
      { what: 'vendor create client', method: 'POST', path: '/vendor/agency/1001/client?version=4.0', headers: vendor, body: `${without(createClientBody(run.rng.uuid()))},"Extra":${deep}}` }
    ]
    for (const [shape, deep] of [['objects', deepObject], ['arrays', deepArray]] as const) {
      for (const c of cases(deep)) {
        if (p.expired) return
        const a = await run.request({ method: c.method, path: c.path, headers: c.headers, body: c.body })
        p.check(`400 for ${DEPTH.toLocaleString('en-US')}-deep JSON, before anything is stored`, a.status === 400, `${c.what} (${shape}): ${a.status} ${text(a).slice(0, 100)}`)
        if (c.what.startsWith('vendor log note')) {
          // Whatever the answer, the journal must hold this request with that status.
          const journal = await run.request({ path: '/_sandbox/requests?method=POST&limit=20' })
          const entries = journal.status === 200 ? (JSON.parse(text(journal)) as { path: string; status: number }[]) : []
          p.check('the journal lists the deep vendor write with its answer', entries.some((e) => e.path === c.path.split('?')[0] && e.status === a.status),
            `journal ${journal.status}, no entry ${c.path.split('?')[0]} with status ${a.status}`)
        }
      }
    }
    const faults = await run.request({ path: '/_sandbox/faults' })
    p.check('fault listing still 200', faults.status === 200, `GET /_sandbox/faults: ${faults.status} ${text(faults).slice(0, 100)}`)
    const offices = await run.request({ path: '/vendor/agency/1001/offices?version=4.0', headers: { authorization: ABC } })
    p.check('the vendor request a stored deep fault would answer is 200', offices.status === 200, `offices: ${offices.status} ${text(offices).slice(0, 100)}`)
    await run.request({ method: 'DELETE', path: '/_sandbox/faults' })
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
  }
}

const overflowingNumbers: PhaseSpec = {
  name: 'overflowing-numbers',
  title: 'Integers in control paths and queries: 1e999, beyond range, signs, fractions, hex',
  budgetMs: { short: 1_500, full: 8_000 },
  async run (run) {
    const p = run.phase
    const values = ['1e999', '99999999999999999999', '1e3', '1.5', 'Infinity', 'NaN', '-1', '0x10', '+5', ' 7']
    const targets = (v: string) => [
      `/_sandbox/agencies/1001/clients?q=a&limit=${v}`,
      `/_sandbox/agencies/${v}/clients`,
      `/_sandbox/agencies/1001/clients/${v}`,
      `/_sandbox/agencies/${v}/writes`,
      `/_sandbox/agencies/1001/writes?clientNumber=${v}`,
      `/_sandbox/requests?limit=${v}`,
      `/_sandbox/requests?agencyId=${v}`,
      `/_sandbox/requests?status=${v}`
    ]
    for (const raw of values) {
      const v = encodeURIComponent(raw)
      for (const path of targets(v)) {
        if (p.expired) return
        const a = await run.request({ path })
        p.check('400 for an integer that is not plain digits within range', a.status === 400, `${path}: ${a.status} ${text(a).slice(0, 100)}`)
      }
      const vendor = await run.request({ path: `/vendor/agency/${v}/clients?version=4.0`, headers: { authorization: ABC } })
      p.check('vendor: a 4xx for an agency id that is not plain digits', vendor.status >= 400 && vendor.status < 500, `/vendor/agency/${v}/clients: ${vendor.status}`)
    }
  }
}

const smallerOnes: PhaseSpec = {
  name: 'smaller-ones',
  title: '431 as problem+json, JSON sent as text/plain, unpadded base64 headers, __proto__ in fixtures',
  budgetMs: { short: 1_500, full: 8_000 },
  async run (run) {
    const p = run.phase
    const host = new URL(run.target.origin).host
    const big = await run.raw(`GET /vendor/agencies?version=4.0 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${ABC}\r\nX-Padding: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`)
    const contentType = /\r\ncontent-type:\s*([^\r]*)/i.exec(big.head)?.[1]
    p.check('431 for oversized headers, as application/problem+json', big.status === 431 && isProblem(contentType), `${big.status} ${contentType ?? '(no content-type)'} ${big.body.toString('utf8').slice(0, 100)}`)

    const client = liveClients(1001)[2].clientNumber
    const plain: { path: string; headers: Record<string, string>; body: string }[] = [
      { path: `/vendor/agency/1001/client/${client}/log?version=4.0`, headers: { authorization: ABC, 'content-type': 'text/plain' }, body: JSON.stringify(logNote(run.rng.uuid())) },
      { path: '/vendor/agency/1001/clients?version=4.0', headers: { authorization: ABC, 'content-type': 'text/plain' }, body: '{"clientNumbers":[1000]}' },
      { path: '/_sandbox/faults', headers: { 'content-type': 'text/plain' }, body: '{"effect":{"status":418},"match":{"path":"/nowhere"}}' }
    ]
    for (const c of plain) {
      const a = await run.request({ method: 'POST', ...c })
      p.check('415 naming the type for a JSON body sent as text/plain', a.status === 415 && text(a).includes('text/plain'), `${c.path}: ${a.status} ${text(a).slice(0, 120)}`)
    }
    await run.request({ method: 'DELETE', path: '/_sandbox/faults' })

    const gz = gzipSync(Buffer.from('%PDF-1.4 unpadded'))
    for (const header of ['Desc', 'LogNote', 'FileName']) {
      const headers = attachmentHeaders(ABC, run.rng.uuid(), 'scan.pdf', { [header]: b64('ab').replace(/=+$/, '') })
      const a = await run.request({ method: 'POST', path: `/vendor/agency/1001/client/${client}/attachment?version=4.0`, headers, body: gz })
      p.check('400 naming the header for unpadded base64', a.status === 400 && text(a).includes(header), `${header}: ${a.status} ${text(a).slice(0, 120)}`)
    }

    // __proto__ as a key of a small valid fixture (agency 2001 with two clients) and of an integration in it.
    const full = JSON.parse(readFileSync(DEMO_FIXTURE_FILE, 'utf8')) as { integrations: { clientId: string; agencies: { agencyId: number }[] }[]; agencies: { agencyId: number; clients: unknown[] }[] }
    const agency = full.agencies.find((a) => a.agencyId === 2001)!
    const small = {
      integrations: full.integrations.filter((i) => i.clientId === 'northwind-crm').map((i) => ({ ...i, agencies: i.agencies.filter((a) => a.agencyId === 2001) })),
      agencies: [{ ...agency, clients: agency.clients.slice(0, 2) }]
    }
    const valid = await run.request({ method: 'POST', path: '/_sandbox/reset', headers: JSON_TYPE, body: JSON.stringify(small) })
    p.check('the small fixture itself is valid (reset 200)', valid.status === 200, `${valid.status} ${text(valid).slice(0, 160)}`)
    // An own "__proto__" key, as JSON.parse makes one from the text.
    const withProto = <T extends object>(o: T, value: object): T => {
      const copy = { ...o }
      Object.defineProperty(copy, '__proto__', { value, enumerable: true, configurable: true, writable: true })
      return copy
    }
    const [agency0] = small.agencies
    const variants = [
      { where: 'top level', body: JSON.stringify(withProto(small, { polluted: true })) },
      { where: 'an agency', body: JSON.stringify({ ...small, agencies: [withProto(agency0, { active: false })] }) },
      { where: 'a client', body: JSON.stringify({ ...small, agencies: [{ ...agency0, clients: [withProto(agency0.clients[0] as object, { deleted: true }), agency0.clients[1]] }] }) },
      { where: 'an integration', body: JSON.stringify({ ...small, integrations: [withProto(small.integrations[0], { clientSecret: 'x' })] }) }
    ]
    for (const v of variants) {
      const a = await run.request({ method: 'POST', path: '/_sandbox/reset', headers: JSON_TYPE, body: v.body })
      p.check('400 naming __proto__ as an unexpected property of a fixture', a.status === 400 && text(a).includes('__proto__'), `${v.where}: ${a.status} ${text(a).slice(0, 120)}`)
    }
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
  }
}

export const LIMIT_PHASES: PhaseSpec[] = [oversizedBodies, deepNesting, overflowingNumbers, smallerOnes]
