import t from 'tap'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { build, demoFixture, grownDemoFixture } from '../helpers/app.js'

/**
 * Fair, bounded use of the workers: one world holds at most one place on the fixture worker while
 * others wait, so four readers of a large world's state document that never read their answer
 * (real sockets) hold one place, and another world's reset with a large fixture, and its own state
 * document, are answered meanwhile (before, the four held every place and the others answered 429).
 * A reader that takes nothing for 10 s has its answer cut and its connection reset, so what the
 * kernel held for it is dropped; the world's next reader takes the place.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test("four idle readers of a large world's state document; another world's reset and state document are answered", async (t) => {
  // a state document of some 20 MB: far more than the sockets' buffers hold
  const app = await build(t, { fixture: grownDemoFixture((_fixture, clients) => clients >= 6_000) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const create = async (body: object) => {
    const res = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: body })
    t.equal(res.statusCode, 201, res.body.slice(0, 200))
    return res.json().id as string
  }
  const large = await create({ from: 'default' })
  const other = await create({ from: 'default' })

  const readers: Socket[] = []
  t.teardown(() => { for (const socket of readers) socket.destroy() })
  for (let i = 0; i < 4; i++) {
    const socket = connect(port, '127.0.0.1')
    readers.push(socket)
    socket.on('error', () => {})
    socket.write(`GET /_sandbox/worlds/${large}/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
    // it never reads what comes back
    socket.pause()
  }
  const runner = app.worlds.fixtures
  // until the four requests have reached the worker (or wait for it)
  for (let i = 0; i < 400 && runner.reading + runner.queued < 4; i++) await sleep(25)
  t.equal(runner.reading, 1, 'the large world holds one place, its first reader\'s')
  t.equal(runner.queued, 3, 'its three other readers wait for it')

  const fixture = grownDemoFixture((f) => JSON.stringify(f).length > 2 * 1024 * 1024)
  const reset = await app.inject({ method: 'POST', url: `/_sandbox/worlds/${other}/reset`, payload: fixture })
  t.equal(reset.statusCode, 200, `another world's reset to a large fixture is answered (${reset.body.slice(0, 200)})`)
  t.equal(reset.json().counts.clients, fixture.agencies.reduce((n, a) => n + a.clients.length, 0))
  const state = await fetch(`http://127.0.0.1:${port}/_sandbox/worlds/${other}/state`)
  t.equal(state.status, 200, "another world's state document is answered")
  t.equal((await state.json() as ReturnType<typeof demoFixture>).agencies.length, fixture.agencies.length, 'whole')
  const created = await app.inject({ method: 'POST', url: '/_sandbox/worlds', payload: { fixture } })
  t.equal(created.statusCode, 201, 'so is a new world from a large fixture')

  // The first reader is given up after 10 s without taking a byte: the second one takes the place.
  for (let i = 0; i < 600 && runner.queued > 2; i++) await sleep(25)
  t.equal(runner.queued, 2, "the first reader's place went to the next")
  const whole = Buffer.byteLength(JSON.stringify(app.worlds.get(large)!.state()))
  const answers = await Promise.all(readers.map(async (socket) => {
    let bytes = 0
    let tail = ''
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.byteLength
      tail = (tail + chunk.toString('latin1')).slice(-5)
    })
    const ended = once(socket, 'close')
    socket.resume()
    await ended
    return { bytes, whole: tail === '0\r\n\r\n' }
  }))
  const cut = answers.filter((a) => !a.whole)
  t.equal(cut.length, 1, 'one answer was cut, the others were sent whole once read')
  // a connection closed without a reset would still hand over what the kernel held for it (megabytes)
  t.ok(cut[0].bytes < 1024 * 1024, `the cut answer ends with what its reader's own buffer held (${cut[0].bytes} of ${whole} bytes): the connection was reset`)
})
