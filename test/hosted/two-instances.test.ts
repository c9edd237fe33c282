/**
 * Hosted mode: two `serve` processes over one PostgreSQL database (a throw-away cluster) answer as
 * one sandbox, each world at its owner: the default world is seeded once, a world's requests are
 * answered by one instance whichever they are sent to, a write acknowledged through one is read
 * through the other on the next request, the create-client limit holds exactly, a pending write is
 * applied once, and a reset or a clock set through one is what the other answers.
 */
import t from 'tap'
import pg from 'pg'
import { postgresBinaries, startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { serveProcess, type Served } from '../helpers/process.js'
import { createClientBody, logNote } from '../helpers/writes.js'

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
    // the first request claims the default world, and its owner seeds it
    const answers = await Promise.all([getClient(a, 1001), getClient(b, 1001), getClient(a, 1002), getClient(b, 1002)])
    t.same(answers.map((r) => r.status), [200, 200, 200, 200], 'both answer')
    const seeded = await db.query<{ n: string, owners: string }>("SELECT (SELECT count(*) FROM world_log WHERE world_id = 'default' AND kind = 'snapshot') AS n, (SELECT count(*) FROM world_owners) AS owners")
    await db.end()
    t.equal(Number(seeded.rows[0].n), 1, 'the default world was seeded once, by one of the two')
    t.equal(Number(seeded.rows[0].owners), 1, 'one owner')
    const named = new Set(answers.map((r) => r.headers.get('x-sandbox-instance')))
    t.equal(named.size, 1, `every answer names the same instance (${[...named].join(', ')})`)

    await t.test('a request forwarded to the owner keeps its id: echoed, and in the owner\'s journal', async (t) => {
      const owner = answers[0].headers.get('x-sandbox-instance')
      const [ownerUrl, other] = (await getClient(a, 1001)).headers.get('x-sandbox-forwarded-by') === null ? [a, b] : [b, a]
      const sent = await fetch(`${other}/vendor/agency/${AGENCY}/client/1001?version=4.0`, { headers: { ...AUTH, 'x-request-id': 'trace-forwarded-1' } })
      t.equal(sent.headers.get('x-sandbox-instance'), owner, 'answered by the owner')
      t.not(sent.headers.get('x-sandbox-forwarded-by'), null, 'through the other instance')
      t.equal(sent.headers.get('x-request-id'), 'trace-forwarded-1', 'the id sent is echoed')
      const made = await fetch(`${other}/vendor/agency/${AGENCY}/client/1002?version=4.0`, { headers: AUTH })
      const madeId = made.headers.get('x-request-id') ?? ''
      // the ids an instance makes begin with its own prefix (src/http/request-id.ts): health is answered by the instance asked
      const prefixOf = (id: string | null) => id?.slice(0, 12)
      const reached = prefixOf((await fetch(`${other}/_sandbox/health`)).headers.get('x-request-id'))
      t.not(reached, prefixOf((await fetch(`${ownerUrl}/_sandbox/health`)).headers.get('x-request-id')), 'each instance makes ids of its own')
      t.equal(prefixOf(madeId), reached, 'the id is the one the instance the request reached made')
      const journal = await (await fetch(`${ownerUrl}/_sandbox/requests`)).json() as Array<{ requestId: string }>
      const ids = journal.map((e) => e.requestId)
      t.ok(ids.includes('trace-forwarded-1'), 'the owner journals the id sent')
      t.ok(ids.includes(madeId), 'and the id the forwarding instance made')
    })

    await t.test('a write acknowledged through one is read through the other on the next request', async (t) => {
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

    await t.test('a reset through one instance is what the other answers', async (t) => {
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

    await t.test('the clock set through one instance is the clock of the other', async (t) => {
      const set = await fetch(`${a}/_sandbox/clock`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ now: '2031-05-04T03:02:01Z', frozen: true }) })
      t.equal(set.status, 200, 'set on A')
      t.same(await (await fetch(`${b}/_sandbox/clock`)).json(), { now: '2031-05-04T03:02:01.000Z', frozen: true }, 'B reads it')
      const created = await (await createClient(b)).json() as { clientNumber: number }
      const client = await (await getClient(a, created.clientNumber)).json() as { details: { clientSince: string } }
      t.equal(client.details.clientSince, '2031-05-04T00:00:00', 'a client created on B is dated by it')
      t.equal((await fetch(`${b}/_sandbox/clock`, { method: 'DELETE' })).status, 200, 'back to real time on B')
      t.equal((await (await fetch(`${a}/_sandbox/clock`)).json() as { frozen: boolean }).frozen, false, 'A runs again')
    })

    await t.test('a world created through one instance is used through the other at once, one world after another', async (t) => {
      // each within a moment of the last: the other instance learns of each new world as it is asked for, not once a second
      const statuses: number[] = []
      const created: string[] = []
      for (let i = 0; i < 6; i++) {
        const answer = await fetch(`${a}/_sandbox/worlds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ttlSeconds":0}' })
        t.equal(answer.status, 201, 'created on A')
        const world = await answer.json() as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
        created.push(world.id)
        const { clientId, clientSecret } = world.integrations[0]
        statuses.push((await fetch(`${b}/vendor/agencies?version=4.0`, { headers: { authorization: 'Basic ' + Buffer.from(`${clientId}:${clientSecret}`).toString('base64') } })).status)
      }
      t.same(statuses, created.map(() => 200), 'each answered through B on its first request')
      const unknown = await fetch(`${b}/vendor/agencies?version=4.0`, { headers: { authorization: 'Basic ' + Buffer.from('abc@w0000000000:123').toString('base64') } })
      t.equal(unknown.status, 401, 'a world that does not exist is still unknown')
      for (const id of created) t.equal((await fetch(`${a}/_sandbox/worlds/${id}`, { method: 'DELETE' })).status, 204)
    })
  })
}
