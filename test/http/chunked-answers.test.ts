import t from 'tap'
import { once } from 'node:events'
import { connect, type AddressInfo, type Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { AGENCY, build, DEMO, grownDemoFixture } from '../helpers/app.js'

/**
 * A batch answer of 64 KiB or more is sent from the batch cache's memory as several chunks
 * (src/plugins/send-bytes.ts), written to the response in one go. Over a real socket each answer
 * is whole, its Content-Length true, and the connection stays usable for the requests behind it.
 */

const BATCH = `/vendor/agency/${AGENCY.main}/clients?version=4.0`
const INCLUDE = '&include=Details,People,Contacts,Claims,Policies,Invoices'

function batchRequest (numbers: number[], close = false): string {
  const body = JSON.stringify({ clientNumbers: numbers })
  return `POST ${BATCH}${INCLUDE} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${DEMO}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${close ? 'Connection: close\r\n' : ''}\r\n${body}`
}

interface RawAnswer { status: number, contentLength: number, body: Buffer }

/** The HTTP/1.1 answers of a connection with a Content-Length each, read until it closes. */
async function answersOf (socket: Socket): Promise<RawAnswer[]> {
  const parts: Buffer[] = []
  socket.on('data', (chunk: Buffer) => parts.push(chunk))
  await once(socket, 'close')
  let bytes = Buffer.concat(parts)
  const answers: RawAnswer[] = []
  while (bytes.length > 0) {
    const end = bytes.indexOf('\r\n\r\n')
    if (end < 0) throw new Error(`a head without its end: ${bytes.subarray(0, 200).toString('latin1')}`)
    const head = bytes.subarray(0, end).toString('latin1')
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])
    const contentLength = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1])
    answers.push({ status, contentLength, body: bytes.subarray(end + 4, end + 4 + contentLength) })
    bytes = bytes.subarray(end + 4 + contentLength)
  }
  return answers
}

/** Records what is logged through each reply's logger (where Fastify reports a response's stream ending badly). */
function replyLogSpy (lines: string[]) {
  return (app: FastifyInstance) => app.addHook('onRequest', (_request, reply, done) => {
    const log = reply.log
    const record = (level: string) => (...args: unknown[]) => lines.push(`${level} ${JSON.stringify(args.at(-1))}`)
    reply.log = Object.assign(Object.create(log) as FastifyBaseLogger, { info: record('info'), warn: record('warn'), error: record('error') })
    done()
  })
}

t.test('large batch answers over one keep-alive connection are whole, with a true Content-Length, one after the other', async (t) => {
  const logged: string[] = []
  const app = await build(t, { fixture: grownDemoFixture((_fixture, clients) => clients >= 400), beforeReady: replyLogSpy(logged) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const ids = (await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: { authorization: DEMO } })).json() as number[]
  const first = ids.slice(0, 200)
  const second = ids.slice(100, 300).reverse()
  // the reference: each client alone in a batch of one, an answer far under 64 KiB (copied, never chunked)
  const alone = new Map<number, string>()
  for (const n of new Set([...first, ...second])) {
    const res = await app.inject({ method: 'POST', url: `${BATCH}${INCLUDE}`, headers: { authorization: DEMO }, payload: { clientNumbers: [n] } })
    alone.set(n, res.body.slice(1, -1))
  }
  const expected = (numbers: number[]) => `[${numbers.map((n) => alone.get(n)).join(',')}]`
  t.ok(Buffer.byteLength(expected(first)) > 256 * 1024, `an answer of ${Buffer.byteLength(expected(first))} bytes, far above 64 KiB`)

  // four requests written at once, on one connection: the first twice (once read, once kept)
  const socket = connect(port, '127.0.0.1')
  const answers = answersOf(socket)
  socket.write(batchRequest(first) + batchRequest(first) + batchRequest(second) + batchRequest([first[0]], true))
  const [a, b, c, d] = await answers
  for (const [name, answer, numbers] of [['first', a, first], ['first again', b, first], ['second', c, second], ['a batch of one', d, [first[0]]]] as const) {
    t.equal(answer?.status, 200, `${name}: 200`)
    t.equal(answer?.body.length, answer?.contentLength, `${name}: as many bytes as its Content-Length (${answer?.contentLength})`)
    t.equal(answer?.body.toString('utf8'), expected([...numbers]), `${name}: the clients asked for, in their order, each as read alone`)
  }
  t.same(logged, [], 'no answer\'s stream was cut short (Fastify logs one that closes before it ends)')
})

t.test('a reader that leaves before its large batch answer is read leaves the server answering', async (t) => {
  const app = await build(t, { fixture: grownDemoFixture((_fixture, clients) => clients >= 400) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const ids = (await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0`, headers: { authorization: DEMO } })).json() as number[]
  for (let i = 0; i < 20; i++) {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(batchRequest(ids.slice(0, 200)))
    // gone before, during or after its answer
    setTimeout(() => socket.destroy(), i % 4)
  }
  const socket = connect(port, '127.0.0.1')
  const answers = answersOf(socket)
  socket.write(batchRequest(ids.slice(0, 200), true))
  const [answer] = await answers
  t.equal(answer?.status, 200)
  t.equal(answer?.body.length, answer?.contentLength, 'whole')
  t.equal((JSON.parse(answer?.body.toString('utf8') ?? '[]') as unknown[]).length, 200)
})
