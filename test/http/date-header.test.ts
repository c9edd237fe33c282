import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { connect, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from '../../src/config.js'
import { httpDate } from '../../src/http/date-header.js'
import { build, DEMO } from '../helpers/app.js'

/**
 * Contract section B, "The sandbox clock and HTTP": every answer's `Date` header reads the
 * sandbox clock. Over real sockets, since Node stamps real time on any answer without one.
 */

const FROZEN = '2031-01-02T03:04:05Z'
const FROZEN_HTTP = 'Thu, 02 Jan 2031 03:04:05 GMT'

async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

t.test('[B: The sandbox clock and HTTP] with the clock frozen at 2031-01-02T03:04:05Z, every answer is dated then: vendor, control, errors, faults', async (t) => {
  const app = await build(t)
  const url = await listen(app)
  const put = await fetch(`${url}/_sandbox/clock`, { method: 'PUT', ...json({ now: FROZEN, frozen: true }) })
  t.equal(put.status, 200)
  t.equal(put.headers.get('date'), FROZEN_HTTP, 'the answer to the PUT itself')

  const answers: [string, Promise<Response>, number][] = [
    ['vendor read', fetch(`${url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } }), 200],
    ['batch read (bytes sent as they are)', fetch(`${url}/vendor/agency/1001/clients?version=4.0`, { method: 'POST', headers: { authorization: DEMO, 'content-type': 'application/json' }, body: '{"clientNumbers":[1000]}' }), 200],
    ['401', fetch(`${url}/vendor/agencies?version=4.0`), 401],
    ['403', fetch(`${url}/vendor/agency/1003/offices?version=4.0`, { headers: { authorization: DEMO } }), 403],
    ['400 problem', fetch(`${url}/vendor/agency/1001/clients?version=4.0&asOf=yesterday`, { headers: { authorization: DEMO } }), 400],
    ['unknown route', fetch(`${url}/nowhere`), 404],
    ['control read', fetch(`${url}/_sandbox/info`), 200],
    ['control error', fetch(`${url}/_sandbox/clock`, { method: 'PUT', ...json({ now: 'soon' }) }), 400],
    ['console page', fetch(`${url}/_sandbox/ui/`), 200],
    ['redirect', fetch(`${url}/`, { redirect: 'manual' }), 302]
  ]
  for (const [what, answer, status] of answers) {
    const res = await answer
    await res.arrayBuffer()
    t.equal(res.status, status, what)
    t.equal(res.headers.get('date'), FROZEN_HTTP, `${what}: Date is the sandbox clock`)
  }

  const fault = await fetch(`${url}/_sandbox/faults`, { method: 'POST', ...json({ match: { path: '/vendor/agency/*/offices' }, effect: { status: 503 }, times: 1 }) })
  t.equal(fault.status, 201)
  const faulted = await fetch(`${url}/vendor/agency/1001/offices?version=4.0`, { headers: { authorization: DEMO } })
  t.equal(faulted.status, 503)
  t.equal(faulted.headers.get('date'), FROZEN_HTTP, 'a fault rule\'s answer')

  await fetch(`${url}/_sandbox/faults`, { method: 'POST', ...json({ match: { path: '/vendor/agencies' }, effect: { status: 500, headers: { date: 'Mon, 01 Jan 2001 00:00:00 GMT' } }, times: 1 }) })
  const chosen = await fetch(`${url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } })
  t.equal(chosen.headers.get('date'), 'Mon, 01 Jan 2001 00:00:00 GMT', 'a Date a fault rule sets on purpose is kept')

  await fetch(`${url}/_sandbox/clock/advance`, { method: 'POST', ...json({ seconds: 61 }) })
  const later = await fetch(`${url}/_sandbox/health`)
  t.equal(later.headers.get('date'), 'Thu, 02 Jan 2031 03:05:06 GMT', 'it follows the clock as it moves')
})

t.test('a request the HTTP parser refuses is answered with the sandbox clock\'s Date too', async (t) => {
  const app = await build(t)
  const url = await listen(app)
  await fetch(`${url}/_sandbox/clock`, { method: 'PUT', ...json({ now: FROZEN, frozen: true }) })
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1')
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (d: string) => (text += d))
    socket.on('close', () => resolve(text))
    socket.on('error', reject)
    socket.write('NOT HTTP AT ALL\r\n\r\n')
  })
  t.match(answer, /^HTTP\/1\.1 400 /)
  t.match(answer, new RegExp(`\r\nDate: ${FROZEN_HTTP}\r\n`))
})

t.test('HTTP dates name four-digit years: the clock beyond them reads as the nearest', async (t) => {
  t.equal(httpDate(Date.parse(FROZEN)), FROZEN_HTTP)
  t.equal(httpDate(Date.parse('9999-12-31T23:59:59Z') + 10 * 365 * 86_400_000), 'Fri, 31 Dec 9999 23:59:59 GMT')
  t.equal(httpDate(Date.parse('0000-01-01T00:00:00+05:00')), 'Sat, 01 Jan 0000 00:00:00 GMT')
})

interface GoodCitizenClass {
  new (target: { url: string, clientId: string, secret: string }): {
    syncAgency(agencyId: number): Promise<void>
    mirrors(): { agencyId: number, clients: { clientNumber: number, modified: string }[] }[]
  }
}

t.test('the reference client taking asOf from Date sees a change made after the clock moved back', async (t) => {
  const app = await build(t)
  const url = await listen(app)
  // A clock in the past: with real time in Date, the client's next asOf would lie after every change the sandbox stamps.
  await fetch(`${url}/_sandbox/clock`, { method: 'PUT', ...json({ now: '2021-06-01T12:00:00Z', frozen: true }) })
  const { GoodCitizen } = await import(pathToFileURL(join(ROOT, 'examples', 'node', 'good-citizen.mjs')).href) as { GoodCitizen: GoodCitizenClass }
  const citizen = new GoodCitizen({ url, clientId: 'abc', secret: '123' })
  await citizen.syncAgency(1001)
  const before = citizen.mirrors()[0].clients.find((c) => c.clientNumber === 1000)

  await fetch(`${url}/_sandbox/clock/advance`, { method: 'POST', ...json({ seconds: 120 }) })
  const patched = await fetch(`${url}/_sandbox/agencies/1001/clients/1000`, { method: 'PATCH', ...json({ details: { status: 'DeadFile' } }) })
  t.equal(patched.status, 200)
  await citizen.syncAgency(1001)
  const after = citizen.mirrors()[0].clients.find((c) => c.clientNumber === 1000)
  t.not(after?.modified, before?.modified, 'the second sync read client 1000 again')
  t.equal(after?.modified, '2021-06-01T12:02:00.000Z', 'and stored its new modified')
})
