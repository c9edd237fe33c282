import t from 'tap'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { AGENCY, basic, build } from '../helpers/app.js'
import { logNote } from '../helpers/writes.js'

/**
 * Each world's requests take turns (src/domain/worlds/request-turns.ts): whatever they end in (an
 * answer, an error, a client that leaves mid-body, an answer a fault drops), every turn taken is
 * given back, and a world at its bound keeps answering.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test('every ending gives the turn back: answers, refusals, errors, dropped answers, clients that leave', async (t) => {
  const app = await build(t, { config: { worlds: { max: 10, maxBytes: 1024 ** 3, worldMaxBytes: 64 * 1024 ** 2, ttlSeconds: 3600, requestsInProgress: 2 } } })
  const created = (await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: {} })).json()
  const world = app.worlds.get(created.id)!
  const auth = { authorization: basic(created.integrations[0].clientId, created.integrations[0].clientSecret) }
  const requests = []
  for (let i = 0; i < 60; i++) {
    const kind = i % 6
    requests.push(app.inject(
      kind === 0
        ? { method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, headers: auth, payload: logNote() }
        : kind === 1
          ? { method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/1000/log?version=4.0`, headers: auth, payload: { refId: 'not a uuid' } }
          : kind === 2
            ? { url: '/vendor/agencies?version=4.0', headers: auth }
            : kind === 3
              ? { url: `/vendor/agency/${AGENCY.main}/client/999999?version=4.0`, headers: auth }
              : kind === 4
                ? { method: 'POST', url: `/_sandbox/worlds/${created.id}/faults`, payload: { effect: { status: 'x' } } }
                : { url: `/_sandbox/worlds/${created.id}/clock` }
    ).catch(() => undefined))
  }
  const answers = await Promise.all(requests)
  t.ok(answers.filter((a) => a !== undefined).every((a) => a!.statusCode < 500), 'no 5xx')

  // over real sockets: answers a fault drops, and clients that leave in the middle of a body
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  await app.inject({ method: 'POST', url: `/_sandbox/worlds/${created.id}/faults`, payload: { match: { path: '/vendor/agencies' }, effect: { dropAnswer: true }, times: 5 } })
  const dropped = await Promise.all(Array.from({ length: 5 }, async () => await fetch(`http://127.0.0.1:${port}/vendor/agencies?version=4.0`, { headers: auth }).then(() => 'answered', () => 'dropped')))
  t.same(dropped, Array(5).fill('dropped'), 'five answers dropped')
  for (let i = 0; i < 6; i++) {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(`POST /vendor/agency/${AGENCY.main}/client/1000/log?version=4.0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"refId":`)
    await sleep(20)
    socket.destroy()
  }
  for (let i = 0; i < 100 && (world.requests.running > 0 || world.requests.waiting > 0); i++) await sleep(20)
  t.equal(world.requests.running, 0, 'no turn is left taken')
  t.equal(world.requests.waiting, 0, 'nobody waits')
  const after = await app.inject({ url: `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`, headers: auth })
  t.equal(after.statusCode, 200, 'the world answers as before')
})

t.test('a world with many requests in progress does not keep another waiting behind all of them', async (t) => {
  const app = await build(t, { config: { worlds: { max: 10, maxBytes: 1024 ** 3, worldMaxBytes: 64 * 1024 ** 2, ttlSeconds: 3600, requestsInProgress: 2 } } })
  const authOf = async (name: string) => {
    const { integrations: [abc] } = (await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { name } })).json()
    return { authorization: basic(abc.clientId, abc.clientSecret) }
  }
  const loud = await authOf('hammered')
  const quiet = await authOf('quiet')
  const order: string[] = []
  const requests = []
  for (let i = 0; i < 40; i++) {
    requests.push(app.inject({ url: `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`, headers: loud }).then((res) => order.push(`loud ${res.statusCode}`)))
  }
  requests.push(app.inject({ url: `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`, headers: quiet }).then((res) => order.push(`quiet ${res.statusCode}`)))
  await Promise.all(requests)
  const position = order.indexOf('quiet 200')
  t.ok(position >= 0 && position < 10, `the quiet world's read, sent after 40 reads of another world, was answered among the first (${position + 1} of ${order.length})`)
  t.same(new Set(order.filter((o) => o.startsWith('loud'))), new Set(['loud 200']), 'every read answered in the end')
})

t.test('a request whose client left while a fault held it gives its turn back: the world answers after many of them', async (t) => {
  const app = await build(t, { config: { worlds: { max: 10, maxBytes: 1024 ** 3, worldMaxBytes: 64 * 1024 ** 2, ttlSeconds: 3600, requestsInProgress: 2 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  await app.inject({ method: 'POST', url: '/_sandbox/faults', payload: { match: { method: 'POST', path: '/vendor/agency/*/client/*/log' }, effect: { delayMs: 150 } } })
  const auth = basic('abc', '123')
  for (let i = 0; i < 6; i++) {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(`POST /vendor/agency/${AGENCY.main}/client/1000/log?version=4.0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"refId":`)
    await sleep(20)
    socket.destroy()
  }
  await sleep(400) // every delay has ended, each after its client left
  const world = app.worlds.default
  t.equal(world.requests.running, 0, 'no turn is left taken')
  const answer = await fetch(`http://127.0.0.1:${port}/_sandbox/requests`, { signal: AbortSignal.timeout(5000) }).then((res) => res.status, (e: Error) => e.name)
  t.equal(answer, 200, 'the world answers')
})

t.test('a body announced over its limit, and health, are answered at once while the world\'s turns are all held by bodies that do not come', async (t) => {
  const app = await build(t, { config: { worlds: { max: 10, maxBytes: 1024 ** 3, worldMaxBytes: 64 * 1024 ** 2, ttlSeconds: 3600, requestsInProgress: 2 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const send = (contentLength: number) => {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(`POST /_sandbox/reset HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`)
    t.teardown(() => { socket.destroy() })
    return socket
  }
  // two resets whose bodies never come hold the default world's two turns
  send(100)
  send(100)
  const world = app.worlds.default
  for (let i = 0; i < 100 && world.requests.running < 2; i++) await sleep(20)
  t.equal(world.requests.running, 2, 'both turns held')
  const oversized = send(1024 ** 3)
  const status = await new Promise<string>((resolve) => {
    let seen = ''
    oversized.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1')
      if (seen.includes('\r\n')) resolve(seen.slice(0, seen.indexOf('\r\n')))
    })
    setTimeout(() => resolve('no answer within 3 s'), 3000)
  })
  t.equal(status, 'HTTP/1.1 413 Payload Too Large', 'the 413 comes without a turn')
  t.equal(world.requests.waiting, 0, 'and nothing waits for one')
  const health = await fetch(`http://127.0.0.1:${port}/_sandbox/health`, { signal: AbortSignal.timeout(3000) }).then((r) => r.status, (e: Error) => e.name)
  t.equal(health, 200, 'health waits for no world\'s turn')
})
