import t from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { gzipBomb } from '../../bench/attack/fake-upstream.js'
import { GiveUpError, MAX_ANSWER_BYTES, UnexpectedAnswer, VendorClient } from '../../src/import/http.js'

/**
 * The vendor client the import and compare commands read with, against a real server on
 * 127.0.0.1: an answer is read as it comes and stops at MAX_ANSWER_BYTES (as sent and once
 * gunzipped), a 429 counts against the retries, and no Retry-After makes a request outlast
 * --timeout × (--retries + 1). The server counts what it was asked and what it managed to send.
 */

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void

async function serve (t: { teardown(fn: () => void): void }, handler: Handler): Promise<{ url: string; asked: () => number; sent: () => number }> {
  let asked = 0
  let sent = 0
  const server = createServer((req, res) => {
    const write = res.write.bind(res)
    res.write = ((chunk: Buffer | string, ...rest: unknown[]) => {
      sent += Buffer.byteLength(chunk)
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest)
    }) as typeof res.write
    handler(req, res, ++asked)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked: () => asked, sent: () => sent }
}

const client = (url: string, options: { timeoutMs?: number; retries?: number } = {}) =>
  new VendorClient({ baseUrl: url, clientId: 'abc', clientSecret: '123', backoffMs: 10, maxBackoffMs: 20, ...options })

async function failure (p: Promise<unknown>): Promise<Error> {
  try {
    await p
  } catch (e) {
    return e as Error
  }
  throw new Error('no failure')
}

t.test('an endless body stops at the limit: the server could not send much more', async (t) => {
  const chunk = Buffer.alloc(64 * 1024, 0x30)
  const up = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) { /* until the socket pushes back */ }
      if (!res.destroyed) res.once('drain', pump)
    }
    pump()
  })
  const c = client(up.url)
  const e = await failure(c.get('/vendor/agencies?version=4.0'))
  c.close()
  t.type(e, UnexpectedAnswer, 'an answer that cannot be used: not retried')
  t.match(e.message, `GET ${up.url}/vendor/agencies?version=4.0: the answer is more than 6 MiB (the most an answer may hold)`)
  t.equal(up.asked(), 1)
  // the socket's buffers hold a few MiB besides what was read
  t.ok(up.sent() < MAX_ANSWER_BYTES + 16 * 1024 * 1024, `the server sent ${(up.sent() / 1024 / 1024).toFixed(1)} MiB`)
})

t.test('a gzip bomb stops once the inflated bytes pass the limit', async (t) => {
  const bomb = gzipBomb(400 * 1024 * 1024)
  const up = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) })
    res.end(bomb)
  })
  const before = process.memoryUsage().arrayBuffers
  const c = client(up.url)
  const e = await failure(c.get('/vendor/agencies?version=4.0'))
  c.close()
  t.type(e, UnexpectedAnswer)
  t.match(e.message, 'the answer is more than 6 MiB once decompressed')
  const grown = process.memoryUsage().arrayBuffers - before
  t.ok(grown < 64 * 1024 * 1024, `buffers grew by ${(grown / 1024 / 1024).toFixed(0)} MiB, not by the 448 MiB inflated`)
  const big = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_ANSWER_BYTES + 1) })
    res.end()
  })
  const c2 = client(big.url)
  t.match((await failure(c2.get('/x'))).message, `is ${(MAX_ANSWER_BYTES + 1).toLocaleString('en-US')} bytes, more than 6 MiB`, 'a declared length above the limit is refused before the body')
  c2.close()
})

t.test('gzip that inflates to nothing, without end: stopped by the bytes received', async (t) => {
  const empty = Buffer.concat(Array.from({ length: 4096 }, () => gzipSync(Buffer.alloc(0))))
  const up = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
    const pump = () => {
      while (!res.destroyed && res.write(empty)) { /* until the socket pushes back */ }
      if (!res.destroyed) res.once('drain', pump)
    }
    pump()
  })
  const c = client(up.url, { timeoutMs: 5_000, retries: 0 })
  const e = await failure(c.get('/x'))
  c.close()
  t.type(e, UnexpectedAnswer, 'not a time-out: the answer cannot be used')
  t.match(e.message, 'the answer is more than 6 MiB (the most an answer may hold)')
})

t.test('JSON is checked before it is parsed: nesting, values, shape', async (t) => {
  const bodies = ['['.repeat(10_000) + ']'.repeat(10_000), `[${'0,'.repeat(400_000)}0]`, '{"agencies":[]}', 'not json \u001b[2J']
  const up = await serve(t, (_req, res, n) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(bodies[n - 1])
  })
  const c = client(up.url)
  t.match((await failure(c.getJsonArray('/a'))).message, `GET ${up.url}/a answered 200 with JSON nested more than 64 levels deep`)
  t.match((await failure(c.getJsonArray('/b'))).message, 'answered 200 with JSON of more than 393,216 values')
  t.match((await failure(c.getJsonArray('/c'))).message, 'answered 200 with a JSON object where a JSON array is due')
  t.match((await failure(c.getJsonArray('/d'))).message, 'answered 200 with a body that is not JSON')
  c.close()
})

t.test('429 counts against the retries, and Retry-After is honoured up to 60 s', async (t) => {
  const up = await serve(t, (_req, res) => {
    res.writeHead(429, { 'retry-after': '0' })
    res.end()
  })
  const c = client(up.url, { retries: 3 })
  const e = await failure(c.get('/x'))
  t.type(e, GiveUpError)
  t.match(e.message, 'answered 429 (gave up after 4 attempts)')
  t.equal(up.asked(), 4, 'the first attempt and 3 retries, not 100')

  const long = await serve(t, (_req, res) => {
    res.writeHead(429, { 'retry-after': '300' })
    res.end()
  })
  const c2 = client(long.url, { retries: 6, timeoutMs: 60_000 })
  const e2 = await failure(c2.get('/x'))
  t.match(e2.message, `GET ${long.url}/x: answered 429 with Retry-After: 300, longer than the 60 s a wait may last (gave up after 1 attempt)`)
  t.equal(long.asked(), 1, 'gives up at once instead of waiting 5 minutes')
  c.close()
  c2.close()
})

t.test('no wait outlasts the time a request may take: --timeout × (--retries + 1)', async (t) => {
  const up = await serve(t, (_req, res) => {
    res.writeHead(503, { 'retry-after': '3' })
    res.end()
  })
  // 1 s per attempt, 2 retries: 3 s in all; a 3 s wait after the first answer would end past it
  const c = client(up.url, { timeoutMs: 1000, retries: 2 })
  const e = await failure(c.get('/x'))
  t.type(e, GiveUpError, 'resumable')
  t.match(e.message, 'answered 503 with Retry-After: 3; the next attempt would start after the 3 s a request may take (--timeout × (--retries + 1)) (gave up after 1 attempt)')
  t.equal(up.asked(), 1)
  c.close()
})
