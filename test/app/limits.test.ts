import t, { type Test } from 'tap'
import { request } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { ROOT } from '../../src/config.js'
import { validateFixture } from '../../src/fixture/validate.js'
import {
  BYTES_PER_VALUE, FIXTURE_BODY_LIMIT, JSON_BODY_LIMIT, MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody, scanJson
} from '../../src/http/json-body.js'
import { MAX_FIELD_ERRORS } from '../../src/plugins/errors.js'
import { AGENCY, DEMO, build } from '../helpers/app.js'
import { runCli, serveProcess, type Served } from '../helpers/process.js'
import { attachment, b64, logNote } from '../helpers/writes.js'
import { tempDir } from '../helpers/temp-dir.js'

/*
 * Limits of what one request may send: body sizes (413, and the server never exits), JSON
 * nesting depth (400 before anything is stored), header size (431), content types (415),
 * strict base64 headers and `__proto__` keys.
 */

const LOG_URL = `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`
const DEEP = 10_000
const deepArray = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)
const JSON_TYPE = { 'content-type': 'application/json' }

// ------------------------------------------------------------------------------------------------
// Item: body size limits, against a real process
// ------------------------------------------------------------------------------------------------

interface Answer { status: number; contentType: string; connection: string | undefined; body: string }

/** POSTs with the given headers and body stream; resolves with the answer even if the upload is cut short. */
function post (url: string, headers: Record<string, string>, body: Readable | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), connection: res.headers.connection, body: text }))
    })
    // The server closes the connection once it has answered 413; the rest of the upload is refused.
    req.on('error', (e: NodeJS.ErrnoException) => (['EPIPE', 'ECONNRESET'].includes(e.code ?? '') ? undefined : reject(e)))
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')))
    if (body === undefined) req.flushHeaders()
    else body.pipe(req)
  })
}

/** `bytes` of a JSON string document, made lazily in 64 KiB chunks (never held whole). */
function lazyJson (bytes: number): Readable {
  const chunk = Buffer.alloc(64 * 1024, 'a')
  return Readable.from((function * () {
    yield Buffer.from('{"p":"')
    for (let sent = 6; sent < bytes - 2; sent += chunk.length) yield chunk.subarray(0, Math.min(chunk.length, bytes - 2 - sent))
    yield Buffer.from('"}')
  })())
}

async function alive (t: Test, served: Served): Promise<void> {
  const res = await fetch(`${served.url}/_sandbox/health`)
  t.equal(res.status, 200, 'the server still answers')
  t.equal(served.child.exitCode, null, 'the process has not exited')
}

t.test('fixture bodies above the limit are 413 problems and the process stays up', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:' })
  t.teardown(() => served.child.kill('SIGTERM'))
  const over = FIXTURE_BODY_LIMIT + 1

  for (const path of ['/_sandbox/reset', '/_sandbox/agencies']) {
    // Declared length over the limit: refused before a byte of the body is read.
    let res = await post(served.url + path, { ...JSON_TYPE, 'content-length': String(over) }, undefined)
    t.equal(res.status, 413, `${path} with Content-Length ${over}`)
    t.match(res.contentType, /application\/problem\+json/)
    t.match(JSON.parse(res.body), { status: 413, detail: `The request body is larger than the ${FIXTURE_BODY_LIMIT / (1024 * 1024)} MiB this endpoint accepts` })
    await alive(t, served)

    // Chunked, no length given: cut off as soon as the limit is passed.
    res = await post(served.url + path, { ...JSON_TYPE, 'transfer-encoding': 'chunked' }, lazyJson(over + 1024 * 1024))
    t.equal(res.status, 413, `${path} chunked past the limit`)
    t.match(JSON.parse(res.body), { status: 413 })
    // closing while the client still sends would reset the connection, which can lose the 413 on its way
    t.not(res.connection, 'close', 'the connection stays open while the rest of the body is dropped')
    await alive(t, served)
  }
})

t.test('a control body over 1 MiB is 413 naming the limit', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/_sandbox/faults', headers: JSON_TYPE, payload: JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }) })
  t.equal(res.statusCode, 413)
  t.match(res.json(), { detail: 'The request body is larger than the 1 MiB this endpoint accepts' })
})

t.test('a body holds at most one value per 16 bytes of its limit; at most 200 field errors are listed', async (t) => {
  const app = await build(t)
  const maxValues = JSON_BODY_LIMIT / BYTES_PER_VALUE
  const empties = (n: number) => '[' + Array.from({ length: n }, () => '{}').join(',') + ']'
  const batch = { method: 'POST' as const, url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: { ...JSON_TYPE, authorization: DEMO } }
  // 40,000 empty objects count 80,000 (each object and each comma): refused before validation.
  let res = await app.inject({ ...batch, payload: empties(40_000) })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { detail: `The JSON holds more than ${maxValues} values (objects, arrays and items); this endpoint accepts at most ${maxValues}`, errors: [{ field: '(body)' }] })
  // numbers alone (no object or array among them) count as well: 80,000 of them are refused alike
  res = await app.inject({ ...batch, payload: `{"clientNumbers":[${Array.from({ length: 80_000 }, () => '1').join(',')}]}` })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { detail: `The JSON holds more than ${maxValues} values (objects, arrays and items); this endpoint accepts at most ${maxValues}` }, 'numbers count as values')
  // 20,000 would fit the budget, but a batch that long is refused by its length before its items
  // are looked at; 200 bad items (the most a batch takes) are validated, and 200 fields listed.
  res = await app.inject({ ...batch, payload: empties(20_000) })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { detail: /^at most 200 client numbers per request/ })
  res = await app.inject({ ...batch, payload: `{"clientNumbers":${empties(MAX_FIELD_ERRORS)},"more":${empties(5_000)}}` })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors.length, MAX_FIELD_ERRORS)
  t.match(res.json(), { detail: `${MAX_FIELD_ERRORS} or more fields are invalid; the first ${MAX_FIELD_ERRORS} are listed` })
  t.ok(res.body.length < 64 * 1024, `the answer stays small (${res.body.length} bytes)`)
  t.equal(scanJson(Buffer.from('[1,2,3]'), 64, 4), 'ok', 'an array of three counts four')
  t.equal(scanJson(Buffer.from('[1,2,3]'), 64, 3), 'too-many-values')
  t.equal(scanJson(Buffer.from('{"a":"x,y,z"}'), 64, 2), 'ok', 'commas inside strings do not count')
  t.same(parseJsonBody(Buffer.from(`{"note":"${'[{'.repeat(100)}"}`)), { note: '[{'.repeat(100) }, 'brackets inside a string do not nest')
})

t.test('POST /_sandbox/agencies validates like a fixture: unknown fields named, at most 200 errors', async (t) => {
  const app = await build(t)
  const agency = (JSON.parse((await app.inject({ url: '/_sandbox/state' })).body) as { agencies: Record<string, unknown>[] }).agencies[0]
  let res = await app.inject({ method: 'POST', url: '/_sandbox/agencies', headers: JSON_TYPE, payload: { ...agency, agencyId: 9999, bogus: 1 } })
  t.equal(res.statusCode, 400, 'an unknown field is reported, not dropped')
  t.match(res.json(), { errors: [{ field: 'bogus' }] })
  const clients = Array.from({ length: 5_000 }, () => ({}))
  res = await app.inject({ method: 'POST', url: '/_sandbox/agencies', headers: JSON_TYPE, payload: { ...agency, agencyId: 9999, clients } })
  t.equal(res.statusCode, 400)
  t.ok(res.json().errors.length <= 200, `${res.json().errors.length} errors listed`)
  res = await app.inject({ method: 'POST', url: '/_sandbox/agencies', headers: JSON_TYPE, payload: { ...agency, agencyId: 9999 } })
  t.equal(res.statusCode, 201, 'a valid agency is added')
})

// ------------------------------------------------------------------------------------------------
// Item: nesting depth
// ------------------------------------------------------------------------------------------------

t.test('nestsDeeperThan counts objects and arrays outside strings', async (t) => {
  const bytes = (s: string) => Buffer.from(s)
  t.equal(nestsDeeperThan(bytes(deepArray(MAX_JSON_DEPTH)), MAX_JSON_DEPTH), false, `${MAX_JSON_DEPTH} levels pass`)
  t.equal(nestsDeeperThan(bytes(deepArray(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH), true, `${MAX_JSON_DEPTH + 1} levels do not`)
  t.equal(nestsDeeperThan(bytes('{"a":{"b":[{}]}}'), 3), true)
  t.equal(nestsDeeperThan(bytes('{"a":{"b":[1]}}'), 3), false)
  t.equal(nestsDeeperThan(bytes(`{"s":"${'['.repeat(500)}"}`), 1), false, 'brackets inside strings do not count')
  t.equal(nestsDeeperThan(bytes(`{"s":"\\"${'{'.repeat(500)}"}`), 1), false, 'an escaped quote does not end the string')
  t.equal(nestsDeeperThan(bytes(`["\\\\",${deepArray(3)}]`), 3), true, 'an escaped backslash does')
  t.equal(nestsDeeperThan(bytes('[[1],[2],[3]]'.repeat(100)), 2), false, 'siblings do not add up')
})

const tooDeep = (t: Test, res: { statusCode: number; json: () => unknown }, what: string) => {
  t.equal(res.statusCode, 400, what)
  t.match(res.json(), {
    status: 400,
    detail: new RegExp(`more than ${MAX_JSON_DEPTH} levels deep`),
    errors: [{ field: '(body)', message: `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep` }]
  }, `${what}: names the depth`)
}

t.test('deep JSON is refused before anything is stored, in every body', async (t) => {
  const app = await build(t)

  // A fault rule whose body nests 10,000 deep: refused, and the fault list still answers.
  let res = await app.inject({
    method: 'POST',
    url: '/_sandbox/faults',
    headers: JSON_TYPE,
    payload: `{"match":{"path":"/vendor/**"},"effect":{"status":503,"body":${deepArray(DEEP)}}}`
  })
  tooDeep(t, res, 'POST /_sandbox/faults')
  res = await app.inject({ url: '/_sandbox/faults' })
  t.equal(res.statusCode, 200, 'GET /_sandbox/faults still answers')
  t.same(res.json(), [], 'no rule was stored')
  res = await app.inject({ url: '/vendor/agencies?version=4.0', headers: { authorization: DEMO } })
  t.equal(res.statusCode, 200, 'vendor calls are not affected')

  // A fault body at the limit is taken (the rule and its effect are two of the levels).
  res = await app.inject({
    method: 'POST',
    url: '/_sandbox/faults',
    headers: JSON_TYPE,
    payload: `{"match":{"path":"/nowhere"},"effect":{"status":503,"body":${deepArray(MAX_JSON_DEPTH - 2)}}}`
  })
  t.equal(res.statusCode, 201, `a document exactly ${MAX_JSON_DEPTH} levels deep is accepted`)
  res = await app.inject({ url: '/_sandbox/faults' })
  t.equal(res.statusCode, 200)

  // Client details.
  const before = (await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/clients/1000` })).json()
  res = await app.inject({
    method: 'PATCH',
    url: `/_sandbox/agencies/${AGENCY.main}/clients/1000`,
    headers: JSON_TYPE,
    payload: `{"details":{"notes":${deepArray(DEEP)}}}`
  })
  tooDeep(t, res, 'PATCH client details')
  t.same((await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/clients/1000` })).json(), before, 'the client is unchanged')

  // A vendor write with a deep key the binder would ignore.
  const writesBefore = (await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes` })).json()
  res = await app.inject({
    method: 'POST',
    url: LOG_URL,
    headers: { ...JSON_TYPE, authorization: DEMO },
    payload: JSON.stringify(logNote()).replace(/^\{/, `{"ignored":${deepArray(DEEP)},`)
  })
  tooDeep(t, res, 'vendor log note')
  t.same((await app.inject({ url: `/_sandbox/agencies/${AGENCY.main}/writes` })).json(), writesBefore, 'no write was stored')
  res = await app.inject({ url: '/_sandbox/requests' })
  t.equal(res.statusCode, 200)
  t.ok((res.json() as { path: string; status: number }[]).some((e) => e.path.endsWith('/log') && e.status === 400), 'the refused write is in the journal')

  // A fixture.
  const counts = (await app.inject({ url: '/_sandbox/info' })).json().counts
  res = await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: JSON_TYPE, payload: `{"agencies":${deepArray(DEEP)}}` })
  tooDeep(t, res, 'POST /_sandbox/reset')
  t.same((await app.inject({ url: '/_sandbox/info' })).json().counts, counts, 'the world is unchanged')
})

t.test('the demo fixture and the state fit well within the depth limit', async (t) => {
  const demo = readFileSync(join(ROOT, 'fixtures', 'demo.json'))
  t.equal(nestsDeeperThan(demo, 16), false, 'demo.json nests at most 16 deep')
  const app = await build(t)
  const state = await app.inject({ url: '/_sandbox/state' })
  t.equal(nestsDeeperThan(state.rawPayload, 16), false, 'the state document nests at most 16 deep')
  const res = await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: JSON_TYPE, payload: state.rawPayload })
  t.equal(res.statusCode, 200, 'the state posts back')
})

// ------------------------------------------------------------------------------------------------
// Item: 431 and other parser-level refusals answer problem bodies (real socket)
// ------------------------------------------------------------------------------------------------

/** Sends raw bytes on a fresh connection and returns everything the server wrote before closing. */
function rawExchange (port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (d: string) => (answer += d))
    socket.on('close', () => resolve(answer))
    socket.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? resolve(answer) : reject(e)))
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer in 5 s')))
    socket.write(text)
  })
}

function parseRaw (answer: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head, body] = answer.split('\r\n\r\n', 2)
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) as Record<string, unknown> }
}

t.test('header fields too large: 431 problem; a malformed request: 400 problem', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port

  const big = parseRaw(await rawExchange(port, `GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`))
  t.equal(big.status, 431)
  t.match(big.headers, /content-type: application\/problem\+json/)
  t.match(big.body, { status: 431, title: 'Request Header Fields Too Large', detail: /16 KiB/ })

  const bad = parseRaw(await rawExchange(port, 'NOT HTTP AT ALL\r\n\r\n'))
  t.equal(bad.status, 400)
  t.match(bad.headers, /content-type: application\/problem\+json/)
  t.match(bad.body, { status: 400, title: 'Bad Request' })

  const res = await fetch(`http://127.0.0.1:${port}/_sandbox/health`)
  t.equal(res.status, 200, 'the server answers afterwards')
})

// ------------------------------------------------------------------------------------------------
// Item: JSON sent as text/plain
// ------------------------------------------------------------------------------------------------

t.test('JSON sent as text/plain is 415 naming the type', async (t) => {
  const app = await build(t)
  const expected = { status: 415, detail: 'Content-Type text/plain is not accepted here; send application/json' }
  let res = await app.inject({
    method: 'POST', url: LOG_URL, headers: { authorization: DEMO, 'content-type': 'text/plain; charset=utf-8' }, payload: JSON.stringify(logNote())
  })
  t.equal(res.statusCode, 415, 'vendor log note')
  t.match(res.headers['content-type'], /application\/problem\+json/)
  t.match(res.json(), expected)
  res = await app.inject({
    method: 'POST', url: '/_sandbox/faults', headers: { 'content-type': 'text/plain' }, payload: '{"effect":{"status":503}}'
  })
  t.equal(res.statusCode, 415, 'control call')
  t.match(res.json(), expected)
  t.same((await app.inject({ url: '/_sandbox/faults' })).json(), [], 'nothing stored')
})

// ------------------------------------------------------------------------------------------------
// Item: strict base64 headers need their padding
// ------------------------------------------------------------------------------------------------

t.test('an unpadded base64 header is a 400 naming it and the padding', async (t) => {
  const app = await build(t)
  const url = `/vendor/agency/${AGENCY.main}/client/1000/attachment?version=4.0`
  const unpadded = b64('ab').replace(/=+$/, '')
  let res = await app.inject({ method: 'POST', url, ...withAuth(attachment(Buffer.from('%PDF-1.4'), { FileName: unpadded })) })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { errors: [{ field: 'FileName', message: /padded base64.*'=' padding/ }] })
  res = await app.inject({ method: 'POST', url, ...withAuth(attachment(Buffer.from('%PDF-1.4'), { FileName: b64('ab') })) })
  t.equal(res.statusCode, 200, 'the padded value is taken')
})

function withAuth (a: { headers: Record<string, string>; payload: Buffer }) {
  return { headers: { ...a.headers, authorization: DEMO }, payload: a.payload }
}

// ------------------------------------------------------------------------------------------------
// Item: `__proto__` keys
// ------------------------------------------------------------------------------------------------

/** The demo state with an own `__proto__` key in its first agency (as JSON text: an object literal cannot hold one). */
async function stateWithProto (app: Awaited<ReturnType<typeof build>>, spelling = '__proto__'): Promise<string> {
  const state = JSON.parse((await app.inject({ url: '/_sandbox/state' })).body) as Record<string, unknown> & { agencies: unknown[] }
  const [first, ...rest] = state.agencies
  const agencies = `[{"${spelling}":{"agencyId":1},${JSON.stringify(first).slice(1)}${rest.map((a) => ',' + JSON.stringify(a)).join('')}]`
  const others = Object.entries(state).filter(([key]) => key !== 'agencies').map(([key, v]) => `${JSON.stringify(key)}:${JSON.stringify(v)}`)
  return `{${[...others, `"agencies":${agencies}`].join(',')}}`
}

t.test('a __proto__ key in a fixture is reported as an unknown field', async (t) => {
  const app = await build(t)
  const counts = (await app.inject({ url: '/_sandbox/info' })).json().counts
  for (const spelling of ['__proto__', '\\u005f_proto__']) {
    const res = await app.inject({ method: 'POST', url: '/_sandbox/reset', headers: JSON_TYPE, payload: await stateWithProto(app, spelling) })
    t.equal(res.statusCode, 400, `POST /_sandbox/reset with "${spelling}"`)
    t.same(res.json().errors, [{ field: 'agencies[0].__proto__', message: 'is not a known field' }])
  }
  t.same((await app.inject({ url: '/_sandbox/info' })).json().counts, counts, 'the world is unchanged')

  // The validator itself (programmatic starts), on a document that kept the key as data.
  const doc = JSON.parse(await stateWithProto(app)) as unknown
  const result = validateFixture(doc)
  t.match(result, { ok: false, errors: [{ field: 'agencies[0].__proto__', message: 'is not a known field' }] })
  t.equal(result.ok ? 0 : result.errors.length, 1)

  // A vendor body: refused the same way, never bound.
  const res = await app.inject({
    method: 'POST',
    url: LOG_URL,
    headers: { ...JSON_TYPE, authorization: DEMO },
    payload: JSON.stringify(logNote()).replace(/^\{/, '{"__proto__":{"refId":"x"},')
  })
  t.equal(res.statusCode, 400)
  t.same(res.json().errors, [{ field: '__proto__', message: 'is not a known field' }])
  t.throws(() => parseJsonBody(Buffer.from('[{"a":{"__proto__":1}}]')), { errors: [{ field: '[0].a.__proto__' }] })
})

t.test('agency-sandbox validate reports a __proto__ key with its path', async (t) => {
  const app = await build(t)
  const dir = tempDir(t, 'limits-')
  const file = join(dir, 'proto.json')
  writeFileSync(file, await stateWithProto(app))
  const out = await runCli(['validate', file])
  t.equal(out.code, 1)
  t.match(out.stdout + out.stderr, /(^|\s)agencies\[0\]\.__proto__: is not a known field/m)
})
