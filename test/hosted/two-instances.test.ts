/**
 * Hosted mode: two `serve` processes over one PostgreSQL database (a throw-away cluster) answer as
 * one sandbox: a write acknowledged by one is read by the other on the next request, the
 * create-client limit holds across them exactly, a pending write is applied once when both see the
 * reconnect, a SIGKILLed instance loses no acknowledged write, and a database that stops for 10 s
 * under load answers 503 with Retry-After until it is back, losing nothing.
 */
import t from 'tap'
import pg from 'pg'
import { postgresBinaries, startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { serveProcess, type Served } from '../helpers/process.js'
import { createClientBody, logNote, receipt } from '../helpers/writes.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }
const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' }
const AGENCY = 1001

// longer than the default file timeout (.taprc): a run of its own, or instances and a database to start
t.setTimeout(300_000)

const skip = postgresBinaries() === undefined ? 'PostgreSQL is not installed (.ci/run installs Debian\'s postgresql)' : false
{
  let postgres: ScratchPostgres
  const instances: Served[] = []
  const start = async (env: Record<string, string> = {}) => {
    const served = await serveProcess({ SANDBOX_DATABASE_URL: postgres.url, SANDBOX_DB: ':memory:', ...env })
    instances.push(served)
    return served.url
  }
  t.before(async () => { if (skip === false) postgres = await startScratchPostgres() })
  t.teardown(() => {
    for (const served of instances) {
      if (served.child.exitCode !== null && served.child.exitCode !== 0 && served.child.signalCode === null) t.comment(`an instance exited with ${served.child.exitCode}:\n${served.lines.slice(-30).join('\n')}`)
      served.child.kill('SIGKILL')
    }
    postgres?.destroy()
  })

  const createClient = async (url: string) => await fetch(`${url}/vendor/agency/${AGENCY}/client?version=4.0`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(createClientBody()) })
  const getClient = async (url: string, clientNumber: number) => await fetch(`${url}/vendor/agency/${AGENCY}/client/${clientNumber}?version=4.0`, { headers: AUTH })
  const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

  t.test('two instances over one database', { timeout: 180_000, skip }, async (t) => {
    // started together over an empty database: the log is seeded once
    const [a, b] = await Promise.all([start(), start()])
    const db = new pg.Client({ connectionString: postgres.url })
    await db.connect()
    const seeded = await db.query<{ n: string }>("SELECT count(*) AS n FROM world_log WHERE kind = 'snapshot'")
    await db.end()
    t.equal(Number(seeded.rows[0].n), 1, 'the default world was seeded once, by one of the two')

    await t.test('a write acknowledged by one is read by the other on the next request', async (t) => {
      const numbers: number[] = []
      let stale = 0
      for (let i = 0; i < 20; i++) {
        const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a]
        const created = await createClient(writer)
        t.equal(created.status, 200, 'created')
        const { clientNumber } = await created.json() as { clientNumber: number }
        numbers.push(clientNumber)
        if ((await getClient(reader, clientNumber)).status !== 200) stale++
        await sleep(45) // within the create-client limit
      }
      t.equal(stale, 0, 'no read on the other instance missed the write before it')
      t.same(numbers, numbers.map((_, i) => numbers[0] + i), 'client numbers follow each other across both instances')
    })

    await t.test('the create-client limit holds across instances: 100 creates within a second, 25 accepted', async (t) => {
      // the 100 must arrive within one second for exactly 25 to be right: a burst the machine spread
      // over longer (from the first sent to the last answered) proves nothing, and is tried again
      let answers: number[] = []
      for (let tries = 0; tries < 4; tries++) {
        await sleep(1100)
        const began = Date.now()
        answers = await Promise.all(Array.from({ length: 100 }, async (_, i) => (await createClient(i % 2 === 0 ? a : b)).status))
        if (Date.now() - began < 1000) break
        t.comment(`the burst took ${Date.now() - began} ms: tried again`)
      }
      t.equal(answers.filter((s) => s === 200).length, 25, '25 accepted')
      t.equal(answers.filter((s) => s === 429).length, 75, 'the rest refused with 429')
    })

    await t.test('a pending write is applied once when both instances see the reconnect', async (t) => {
      const patch = async (url: string, connected: boolean) => await fetch(`${url}/_sandbox/agencies/${AGENCY}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ connected }) })
      t.equal((await patch(a, false)).status, 200, 'agency disconnected on A')
      const note = logNote()
      const pending = await fetch(`${b}/vendor/agency/${AGENCY}/client/1001/log?version=4.0`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(note) })
      t.ok(pending.status < 300, `the log note is accepted as pending on B (${pending.status})`)
      const answers = await Promise.all([patch(a, true), patch(b, true)])
      const applied = await Promise.all(answers.map(async (r) => (await r.json() as { appliedPendingWrites: number }).appliedPendingWrites))
      t.equal(applied[0] + applied[1], 1, `applied once in all (${applied.join(' + ')})`)
      const writes = await (await fetch(`${a}/_sandbox/agencies/${AGENCY}/writes`)).json() as Array<{ refId: string, status: string }>
      t.same(writes.filter((w) => w.refId === note.refId).map((w) => w.status), ['applied'], 'one write with its refId, applied')
    })

    await t.test('a reset on one instance is what the other answers', async (t) => {
      await sleep(1100)
      const created = await (await createClient(a)).json() as { clientNumber: number }
      t.equal((await getClient(b, created.clientNumber)).status, 200)
      t.equal((await fetch(`${b}/_sandbox/reset`, { method: 'POST', headers: { 'content-type': 'application/json' } })).status, 200, 'reset on B')
      t.equal((await getClient(a, created.clientNumber)).status, 404, 'A no longer has the client the reset removed')
      const counts = await Promise.all([a, b].map(async (url) => (await (await fetch(`${url}/_sandbox/agencies`)).json() as Array<{ clients?: number }>)))
      t.same(counts[0], counts[1], 'both hold the same agencies after the reset')
      const fixtureClient = (await getClient(a, 1001)).status
      t.equal(fixtureClient, 200, 'the fixture\'s clients are there on A')
    })

    await t.test('the clock set on one instance is the clock of the other', async (t) => {
      const set = await fetch(`${a}/_sandbox/clock`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ now: '2031-05-04T03:02:01Z', frozen: true }) })
      t.equal(set.status, 200, 'set on A')
      t.same(await (await fetch(`${b}/_sandbox/clock`)).json(), { now: '2031-05-04T03:02:01.000Z', frozen: true }, 'B reads it')
      const created = await (await createClient(b)).json() as { clientNumber: number }
      const client = await (await getClient(a, created.clientNumber)).json() as { details: { clientSince: string } }
      t.equal(client.details.clientSince, '2031-05-04T00:00:00', 'a client created on B is dated by it')
      t.equal((await fetch(`${b}/_sandbox/clock`, { method: 'DELETE' })).status, 200, 'back to real time on B')
      t.equal((await (await fetch(`${a}/_sandbox/clock`)).json() as { frozen: boolean }).frozen, false, 'A runs again')
    })

    await t.test('notified reads: commits announced on the listening connection; while it is down, each request asks', async (t) => {
      await sleep(1100)
      const n = await start({ SANDBOX_HOSTED_READS: 'notified' })
      const visibleOnN = async () => {
        const created = await (await createClient(a)).json() as { clientNumber: number }
        const since = Date.now()
        while ((await getClient(n, created.clientNumber)).status !== 200) {
          if (Date.now() - since > 3000) return false
          await sleep(5)
        }
        return true
      }
      t.ok(await visibleOnN(), 'a write on A is read on N once it is announced')
      const admin = new pg.Client({ connectionString: postgres.url })
      await admin.connect()
      const ended = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agency-sandbox listener'")
      await admin.end()
      t.ok(ended.rowCount !== null && ended.rowCount >= 1, 'the listening connections were ended')
      await sleep(200) // N has seen its connection end (it listens again after 1 s)
      let stale = 0
      for (let i = 0; i < 10; i++) {
        const created = await (await createClient(a)).json() as { clientNumber: number }
        if ((await getClient(n, created.clientNumber)).status !== 200) stale++
        await sleep(45)
      }
      t.equal(stale, 0, 'while N does not listen, its next request reads every write acknowledged before it')
      await sleep(1500)
      t.ok(await visibleOnN(), 'listening again, N reads what A writes')
      instances.find((served) => served.url === n)?.child.kill('SIGKILL')
    })

    /** Writes of every kind a partner makes, in turn, until stopped: what each acknowledged (refIds, client numbers). */
    const writeLoad = (url: string, acknowledged: { refIds: string[], clients: number[] }, run: { stop: boolean }, statuses: number[] = []) => async () => {
      for (let i = 0; !run.stop; i++) {
        const kind = i % 3
        const note = logNote()
        const paid = receipt()
        try {
          const r = kind === 0
            ? await fetch(`${url}/vendor/agency/${AGENCY}/client/1001/log?version=4.0`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(note), signal: AbortSignal.timeout(8000) })
            : kind === 1
              ? await fetch(`${url}/vendor/agency/${AGENCY}/client/1001/receipts?version=4.0`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify([paid]), signal: AbortSignal.timeout(8000) })
              : await createClient(url)
          statuses.push(r.status)
          const body = await r.text()
          if (r.status !== 200) continue
          if (kind === 0) acknowledged.refIds.push(note.refId)
          if (kind === 1 && (JSON.parse(body) as Array<{ code: number }>)[0].code === 200) acknowledged.refIds.push(paid.refId)
          if (kind === 2) acknowledged.clients.push((JSON.parse(body) as { clientNumber: number }).clientNumber)
        } catch (e) {
          statuses.push((e as Error).name === 'TimeoutError' ? -1 : 0)
          await sleep(20) // a killed instance refuses connections
        }
        await sleep(5)
      }
    }
    const missing = async (url: string, acknowledged: { refIds: string[], clients: number[] }) => {
      const written = new Set((await (await fetch(`${url}/_sandbox/agencies/${AGENCY}/writes`)).json() as Array<{ refId: string }>).map((w) => w.refId))
      const clients = await Promise.all(acknowledged.clients.map(async (n) => ((await getClient(url, n)).status === 200 ? undefined : n)))
      return [...acknowledged.refIds.filter((refId) => !written.has(refId)), ...clients.filter((n) => n !== undefined)]
    }

    await t.test('SIGKILL of an instance under writes of every kind: the other answers, no acknowledged write is lost', async (t) => {
      await sleep(1100)
      const acknowledged = { refIds: [] as string[], clients: [] as number[] }
      const run = { stop: false }
      const writers = [writeLoad(a, acknowledged, run)(), writeLoad(a, acknowledged, run)(), writeLoad(b, acknowledged, run)(), writeLoad(b, acknowledged, run)()]
      await sleep(800)
      instances.find((served) => served.url === a)?.child.kill('SIGKILL')
      await sleep(800)
      run.stop = true
      await Promise.all(writers)
      t.ok(acknowledged.refIds.length > 10 && acknowledged.clients.length > 3, `${acknowledged.refIds.length} log notes and receipts and ${acknowledged.clients.length} clients acknowledged`)
      t.same(await missing(b, acknowledged), [], 'every acknowledged write is there')
      t.equal((await getClient(b, 1001)).status, 200, 'B still answers')
      const c = await start()
      t.same(await missing(c, acknowledged), [], 'an instance started afterwards has them all too')
    })

    await t.test('PostgreSQL stopped for 10 s under writes: 503 with Retry-After, never a 500 or a hang; back on its own, nothing lost', async (t) => {
      await sleep(1100)
      const acknowledged = { refIds: [] as string[], clients: [] as number[] }
      const run = { stop: false }
      const statuses: number[] = []
      const load = [writeLoad(b, acknowledged, run, statuses)(), writeLoad(b, acknowledged, run, statuses)()]
      const reads: number[] = []
      const reader = (async () => {
        while (!run.stop) {
          const answers = await Promise.all([getClient(b, 1001), fetch(`${b}/_sandbox/health`)].map(async (p) => await p.catch(() => undefined)))
          for (const answer of answers) {
            reads.push(answer?.status ?? 0)
            if (answer?.status === 503) t.equal(answer.headers.get('retry-after'), '1', 'Retry-After', { diagnostic: false })
          }
          await sleep(50)
        }
      })()
      await sleep(500)
      postgres.stop()
      const stoppedAt = reads.length
      await sleep(10_000)
      t.same([...new Set(reads.slice(stoppedAt + 4))], [503], 'reads and health answered 503 while the database was away')
      postgres.start()
      let back = 0
      for (let i = 0; i < 50 && back !== 200; i++) {
        back = (await getClient(b, 1001)).status
        if (back !== 200) await sleep(200)
      }
      t.equal(back, 200, 'answers again once the database is back')
      await sleep(1000)
      run.stop = true
      await Promise.all([...load, reader])
      t.same([...new Set([...statuses, ...reads])].filter((status) => ![200, 429, 503].includes(status)), [], 'no answer other than 200, 429 and 503, no hang, no dropped connection')
      t.ok(statuses.includes(503) && statuses.filter((status) => status === 200).length > 10, 'writes were refused during the outage and acknowledged around it')
      t.same(await missing(b, acknowledged), [], 'every write acknowledged before, during and after the outage is there')
    })
  })
}
