/**
 * Strict reads across instances (src/db/postgres/commit-delivery.ts): a write is acknowledged once
 * every instance reading has heard it, or once the lease of one that did not has run out; an
 * instance trusts what it heard only within its lease. Checked with a reader that never answers,
 * and with an instance whose connections to PostgreSQL stop carrying anything (a proxy between
 * them holds every byte), which is what a network partition looks like from both ends.
 */
import t from 'tap'
import { createServer, connect, type Server, type Socket } from 'node:net'
import pg from 'pg'
import { hostedInstances, sleep, withoutPostgres } from '../helpers/hosted.js'
import { createClientBody } from '../helpers/writes.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }
const AGENCY = 1001
/** src/db/postgres/commit-delivery.ts: READER_LEASE_MS. */
const LEASE_MS = 2000

t.setTimeout(240_000)

const createClient = async (url: string) => {
  const started = Date.now()
  const answer = await fetch(`${url}/vendor/agency/${AGENCY}/client?version=4.0`, {
    method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(createClientBody())
  })
  const { clientNumber } = await answer.json() as { clientNumber: number }
  return { status: answer.status, clientNumber, tookMs: Date.now() - started }
}
const getClient = async (url: string, clientNumber: number) =>
  (await fetch(`${url}/vendor/agency/${AGENCY}/client/${clientNumber}?version=4.0`, { headers: AUTH })).status

/** A TCP proxy to PostgreSQL that can hold every byte in both directions, the connections kept open. */
async function holdingProxy (target: URL): Promise<{ port: number, hold: (held: boolean) => void, close: () => void }> {
  const sockets: Socket[] = []
  let held = false
  const server: Server = createServer((downstream) => {
    const upstream = connect(Number(target.port), target.hostname)
    for (const socket of [downstream, upstream]) {
      sockets.push(socket)
      socket.on('error', () => { downstream.destroy(); upstream.destroy() })
      if (held) socket.pause()
    }
    downstream.pipe(upstream)
    upstream.pipe(downstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    hold (on) {
      held = on
      for (const socket of sockets) on ? socket.pause() : socket.resume()
    },
    close () {
      for (const socket of sockets) socket.destroy()
      server.close()
    }
  }
}

const hosted = hostedInstances(t)

t.test('strict reads: writes wait for every reader to hear them, readers trust only within their lease', { skip: withoutPostgres }, async (t) => {
  const a = await hosted.start()

  await t.test('a registered reader that never answers holds a write until its lease has run out, no longer', async (t) => {
    const silent = new pg.Client({ connectionString: hosted.url() })
    await silent.connect()
    t.teardown(() => silent.end().catch(() => undefined))
    // registered as an instance does it, on a connection that stays open and answers no ping
    await silent.query("INSERT INTO sandbox_readers (instance, listener_pid, until) VALUES ('silent', pg_backend_pid(), now() + interval '3 seconds')")
    const held = await createClient(a.url)
    t.equal(held.status, 200, 'the write is acknowledged')
    t.ok(held.tookMs >= 2500, `once the silent reader's lease ran out (${held.tookMs} ms after it was sent)`)

    await silent.query("UPDATE sandbox_readers SET until = now() + interval '30 seconds' WHERE instance = 'silent'")
    await silent.end()
    await sleep(200) // its backend has ended
    const after = await createClient(a.url)
    t.equal(after.status, 200)
    t.ok(after.tookMs < LEASE_MS, `a reader whose listening connection ended is not waited for, whatever its lease (${after.tookMs} ms)`)
  })

  await t.test('an instance cut off from PostgreSQL stops trusting what it heard once its lease runs out', async (t) => {
    const target = new URL(hosted.url())
    const proxy = await holdingProxy(target)
    t.teardown(() => proxy.close())
    const through = new URL(hosted.url())
    through.port = String(proxy.port)
    const b = await hosted.start({ SANDBOX_DATABASE_URL: through.toString() })
    const warm = await createClient(a.url)
    t.equal(await getClient(b.url, warm.clientNumber), 200, 'B reads what A writes')

    // B registers as a reader once it listens, a moment after it answers its first request
    const admin = new pg.Client({ connectionString: hosted.url() })
    await admin.connect()
    const readers = async () => Number((await admin.query<{ n: string }>(
      'SELECT count(*) AS n FROM sandbox_readers r WHERE until > now() AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.listener_pid)')).rows[0].n)
    for (let waited = 0; await readers() < 2 && waited < 10_000; waited += 50) await sleep(50)
    t.equal(await readers(), 2, 'A and B are registered readers')
    await admin.end()
    proxy.hold(true)
    const written = await createClient(a.url)
    t.equal(written.status, 200, 'A acknowledges its write while B hears nothing')
    t.ok(written.tookMs >= LEASE_MS - 500, `once B's lease ran out (${written.tookMs} ms)`)
    // B's answer may come only once it can ask PostgreSQL: what it heard before is not enough
    const read = getClient(b.url, written.clientNumber)
    await sleep(500)
    proxy.hold(false)
    t.equal(await read, 200, 'B reads the write acknowledged before its request, not what it heard before it was cut off')
  })
})
