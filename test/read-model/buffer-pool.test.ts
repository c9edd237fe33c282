import t from 'tap'
import { connect } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import { sendEncodedAnswers } from '../../src/plugins/send-bytes.js'
import { BufferPool } from '../../src/read-model/buffer-pool.js'
import { EncodedJson } from '../../src/read-model/index.js'
import { AGENCY, DEMO, build, demoFixture } from '../helpers/app.js'

t.test('small answers are not pooled; of the kept buffers, the smallest that fits is lent', async (t) => {
  const pool = new BufferPool(10_000, 100)
  const small = pool.take(99)
  pool.give(small)
  t.equal(pool.kept, 0, 'under one unit: a plain buffer, never kept')
  const [big, mid] = [pool.take(900), pool.take(300)]
  pool.give(big)
  pool.give(mid)
  t.equal(pool.take(250).buffer, mid.buffer, 'the 300-byte buffer, not the 900-byte one, for 250 bytes')
  t.equal(pool.take(850).buffer, big.buffer, 'so the 900-byte one is there for a large answer')
})

t.test('a buffer given back is lent again for an answer that fits, and only then', async (t) => {
  const pool = new BufferPool(1000, 100)
  const a = pool.take(250)
  t.equal(a.length, 250, 'exactly the length asked')
  a.fill(1)
  pool.give(a)
  t.equal(pool.kept, 1)
  const b = pool.take(300)
  t.equal(b.buffer, a.buffer, 'the same memory: 250 was rounded up to 300')
  t.equal(pool.kept, 0)
  const c = pool.take(301)
  t.not(c.buffer, a.buffer, 'a larger answer gets new memory')
  t.equal(c.buffer.byteLength, 400, 'rounded up to the unit')
})

t.test('giving back twice, or a buffer it never lent, never makes two answers share memory', async (t) => {
  const pool = new BufferPool(1000, 100)
  const a = pool.take(100)
  pool.give(a)
  pool.give(a)
  t.equal(pool.kept, 1, 'the second give is ignored')
  pool.give(Buffer.alloc(100))
  pool.give(Buffer.from('not lent'))
  t.equal(pool.kept, 1, 'foreign buffers are ignored')
  const x = pool.take(100)
  const y = pool.take(100)
  t.not(x.buffer, y.buffer, 'two answers taken together never share memory')
})

t.test('keeps at most its budget of bytes, and no buffer larger than that', async (t) => {
  const pool = new BufferPool(250, 100)
  const taken = [pool.take(100), pool.take(100), pool.take(100)]
  for (const b of taken) pool.give(b)
  t.equal(pool.kept, 2, 'two buffers of 100 fit a budget of 250, a third does not')
  const big = pool.take(5000)
  t.equal(big.length, 5000)
  pool.give(big)
  t.equal(pool.kept, 2, 'an answer past the budget is never kept')
  t.equal(pool.take(240).buffer.byteLength, 250, 'rounded up, but never past the budget')
})

t.test('concurrent batch reads over a real socket each get their own answer while answer buffers are reused', async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const live = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients.filter((c) => c.deleted !== true).map((c) => c.clientNumber)
  // 60 different batches, 8 rounds: answers written while earlier ones are still being sent
  const batches = Array.from({ length: 60 }, (_, i) => live.slice(i % 40, (i % 40) + 20 + (i % 7) * 25).reverse())
  const ask = (numbers: number[]) => fetch(`${address}/vendor/agency/${AGENCY.main}/clients?version=4.0&include=Details,People,Policies`, {
    method: 'POST', headers: { authorization: DEMO, 'content-type': 'application/json' }, body: JSON.stringify({ clientNumbers: numbers })
  }).then(async (res) => ({ status: res.status, body: await res.text() }))
  const expected = await Promise.all(batches.map(async (numbers) => (await app.inject({
    method: 'POST', url: `/vendor/agency/${AGENCY.main}/clients?version=4.0&include=Details,People,Policies`, headers: { authorization: DEMO }, payload: { clientNumbers: numbers }
  })).body))
  let wrong = 0
  for (let round = 0; round < 8; round++) {
    const answers = await Promise.all(batches.map(ask))
    answers.forEach((a, i) => {
      if (a.status !== 200 || a.body !== expected[i]) wrong++
    })
  }
  t.equal(wrong, 0, '480 answers, each byte for byte the one its own request asked for')
  t.ok(expected.every((body, i) => (JSON.parse(body) as unknown[]).length === batches[i].length), 'the expected answers hold every client asked')
})

t.test('an answer still being written to a slow client is never reused for another answer', async (t) => {
  // 60 clients of about 110 kB (names padded): a 6 to 7 MB answer, more than the kernel takes from a client that does not read
  // (about 4 MB here) and less than the pool keeps (8 MiB)
  const fixture = demoFixture()
  const agency = fixture.agencies.find((a) => a.agencyId === AGENCY.main)!
  const live = agency.clients.filter((c) => c.deleted !== true)
  for (const [i, c] of live.slice(0, 60).entries()) {
    for (const p of c.people ?? []) p.lastName = `${p.lastName}-${String(i).padStart(2, '0')}-`.padEnd(85_000, 'abcdefghij'[i % 10])
  }
  const app = await build(t, { fixture })
  const address = new URL(await app.listen({ host: '127.0.0.1', port: 0 }))
  const url = `/vendor/agency/${AGENCY.main}/clients?version=4.0&include=Details,People`
  const numbers = live.slice(0, 60).map((c) => c.clientNumber)
  const body = (asked: number[]) => JSON.stringify({ clientNumbers: asked })
  const expectedOf = async (asked: number[]) =>
    (await app.inject({ method: 'POST', url, headers: { authorization: DEMO }, payload: { clientNumbers: asked } })).rawPayload
  const expected = await expectedOf(numbers)
  t.ok(expected.length > 6_000_000 && expected.length < 8 * 1024 * 1024, `the slow answer is ${expected.length} bytes`)

  // the slow client sends its request and reads nothing for a while
  const socket = connect(Number(address.port), address.hostname)
  const chunks: Buffer[] = []
  const ended = new Promise<void>((resolve) => socket.on('end', resolve))
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.pause()
  const payload = body(numbers)
  socket.write(`POST ${url} HTTP/1.1\r\nHost: sandbox\r\nAuthorization: ${DEMO}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`)
  await sleep(300)

  // meanwhile other answers of about the same size are written, into whatever buffers the pool lends
  for (let i = 1; i <= 3; i++) {
    const asked = [...numbers.slice(i), ...numbers.slice(0, i)]
    const res = await fetch(`${address.origin}${url}`, { method: 'POST', headers: { authorization: DEMO, 'content-type': 'application/json' }, body: body(asked) })
    t.equal(Buffer.compare(Buffer.from(await res.arrayBuffer()), await expectedOf(asked)), 0, 'a fast client gets its own answer')
  }

  socket.resume()
  await ended
  const raw = Buffer.concat(chunks)
  const split = raw.indexOf('\r\n\r\n')
  t.match(raw.subarray(0, split).toString('latin1'), /^HTTP\/1\.1 200/)
  t.equal(Buffer.compare(raw.subarray(split + 4), expected), 0, 'the slow client gets its answer byte for byte')
})

t.test('the send-bytes plugin gives a lent answer back once it is sent, or once its connection is gone', async (t) => {
  const pool = new BufferPool(16 * 1024 * 1024, 64 * 1024)
  const app = Fastify()
  sendEncodedAnswers(app)
  const answerOf = (bytes: number) => {
    const body = pool.take(bytes)
    body.fill(0x20)
    body[0] = 0x5b // [
    body[bytes - 1] = 0x5d // ]
    return new EncodedJson(body, () => pool.give(body))
  }
  app.get('/small', () => new EncodedJson('{"plain":true}'))
  app.get('/big/:bytes', (request) => answerOf(Number((request.params as { bytes: string }).bytes)))
  t.teardown(() => app.close())
  const address = new URL(await app.listen({ host: '127.0.0.1', port: 0 }))
  const until = async (done: () => boolean, what: string) => {
    for (let waited = 0; !done(); waited += 10) {
      if (waited > 5000) throw new Error(`timed out waiting for ${what}`)
      await sleep(10)
    }
  }

  const small = await fetch(`${address.origin}/small`)
  t.equal(small.headers.get('content-type'), 'application/json; charset=utf-8', 'encoded answers are JSON in UTF-8')
  t.equal(await small.text(), '{"plain":true}', 'sent unchanged, never serialized again')

  const big = await fetch(`${address.origin}/big/200000`)
  t.equal(big.headers.get('content-type'), 'application/json; charset=utf-8')
  t.equal((await big.arrayBuffer()).byteLength, 200_000)
  await until(() => pool.kept === 1, 'the sent answer to come back')
  t.equal(pool.kept, 1, 'given back once sent')

  // a client that asks for 6 MB, reads nothing and leaves: the answer comes back once the connection is gone
  const socket = connect(Number(address.port), address.hostname)
  socket.pause()
  socket.write('GET /big/6000000 HTTP/1.1\r\nHost: sandbox\r\n\r\n')
  await sleep(300)
  t.equal(pool.kept, 1, 'the 6 MB answer stays lent while its reader has not taken it')
  socket.destroy()
  await until(() => pool.kept === 2, 'the abandoned answer to come back')
  t.equal(pool.kept, 2, 'given back when the connection closed early')
})

t.test('the send-bytes plugin writes a chunked answer with its length, and releases it once written, or at once when its client already left', async (t) => {
  const app = Fastify()
  sendEncodedAnswers(app)
  const released = { count: 0 }
  const chunks = [Buffer.from('['), Buffer.from('"ü'.padEnd(100_000, 'x') + '"'), Buffer.from(','), Buffer.from('2'), Buffer.from(']')]
  app.get('/chunks', () => new EncodedJson(chunks, () => released.count++))
  app.get('/late', async () => {
    await sleep(300)
    return new EncodedJson(chunks, () => released.count++)
  })
  t.teardown(() => app.close())
  const address = new URL(await app.listen({ host: '127.0.0.1', port: 0 }))

  const res = await fetch(`${address.origin}/chunks`)
  t.equal(res.headers.get('content-length'), String(Buffer.concat(chunks).length), 'its length, not chunked transfer encoding')
  t.equal(res.headers.get('transfer-encoding'), null)
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  t.equal(Buffer.compare(Buffer.from(await res.arrayBuffer()), Buffer.concat(chunks)), 0, 'the chunks in order, byte for byte')
  for (let waited = 0; released.count < 1 && waited < 5000; waited += 10) await sleep(10)
  t.equal(released.count, 1, 'released once written')

  // a client that leaves before its answer is ready: the response is closed already, and no 'close' will come
  const socket = connect(Number(address.port), address.hostname)
  socket.write('GET /late HTTP/1.1\r\nHost: sandbox\r\n\r\n')
  await sleep(50)
  socket.destroy()
  for (let waited = 0; released.count < 2 && waited < 5000; waited += 10) await sleep(10)
  t.equal(released.count, 2, 'released when the answer was ready for a client already gone')
})

t.test('an answer sent from the batch cache to a slow client stays whole while other answers fill the cache past its budget and start it over', async (t) => {
  // 254 live clients of about 110 kB (names padded): 28 MB, more than the 16 MiB the cache keeps
  const fixture = demoFixture()
  const live = fixture.agencies.find((a) => a.agencyId === AGENCY.main)!.clients.filter((c) => c.deleted !== true)
  for (const [i, c] of live.entries()) {
    for (const p of c.people ?? []) p.lastName = `${p.lastName}-${String(i).padStart(3, '0')}-`.padEnd(85_000, 'abcdefghij'[i % 10])
  }
  const app = await build(t, { fixture })
  // a Unix socket: the kernel takes little of an answer its client does not read (a TCP client's buffer may grow to 32 MB)
  const dir = mkdtempSync(join(tmpdir(), 'slow-reader-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'sandbox.sock')
  await app.listen({ path })
  const url = `/vendor/agency/${AGENCY.main}/clients?version=4.0&include=Details,People`
  const numbers = live.map((c) => c.clientNumber)
  const answerOf = async (asked: number[]) =>
    (await app.inject({ method: 'POST', url, headers: { authorization: DEMO }, payload: { clientNumbers: asked } })).rawPayload
  const expected = await answerOf(numbers.slice(0, 60))

  // the slow client's answer (about 6.6 MB) is the first the cache keeps; it reads nothing for now
  const socket = connect(path)
  const chunks: Buffer[] = []
  const ended = new Promise<void>((resolve) => socket.on('end', resolve))
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.pause()
  const payload = JSON.stringify({ clientNumbers: numbers.slice(0, 60) })
  socket.write(`POST ${url} HTTP/1.1\r\nHost: sandbox\r\nAuthorization: ${DEMO}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`)
  await sleep(300)

  // the other 194 clients fill the cache past its budget; then others again, twice: a cache started over would write them where the slow answer is
  for (const asked of [numbers.slice(60), numbers.slice(100, 200), numbers.slice(100, 200)]) {
    const fast = await answerOf(asked)
    t.equal(JSON.parse(fast.toString()).length, asked.length, `a fast client gets its answer (${asked.length} clients)`)
  }

  socket.resume()
  await ended
  const raw = Buffer.concat(chunks)
  const split = raw.indexOf('\r\n\r\n')
  t.match(raw.subarray(0, split).toString('latin1'), /^HTTP\/1\.1 200/)
  t.equal(Buffer.compare(raw.subarray(split + 4), expected), 0, `the slow client gets its ${expected.length} bytes as they were`)
})
