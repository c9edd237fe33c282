/**
 * Hosted mode: the request journal is one for every instance. A read on either lists every
 * request answered on both before it began, with the same ids on both; `since` misses nothing; a
 * clear or a reset on one empties it for both, the requests the other answered just before
 * included; with the listening connections cut, reads still hold everything; a created world's
 * journal is its own on both and is deleted with it; an instance killed outright delays a read by
 * at most a few seconds, then is no longer waited for.
 */
import t from 'tap'
import pg from 'pg'
import { hostedInstances, sleep, withoutPostgres } from '../helpers/hosted.js'
import { logNote } from '../helpers/writes.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }
const AGENCY = 1001

t.setTimeout(240_000)

interface Entry { id: number, method: string, path: string, query: Record<string, string>, status: number }

const skip = withoutPostgres
{
  const cluster = hostedInstances(t)
  const start = async () => await cluster.start()
  /** A partner read, told apart from the others by its `n`. */
  const read = async (url: string, n: number) => {
    const answer = await fetch(`${url}/vendor/agency/${AGENCY}/client/1001?version=4.0&n=${n}`, { headers: AUTH })
    await answer.arrayBuffer()
    return answer.status
  }
  const journal = async (url: string, query = '', world = '') => {
    const answer = await fetch(`${url}/_sandbox${world}/requests${query}`)
    return { status: answer.status, entries: (answer.status === 200 ? await answer.json() : []) as Entry[] }
  }
  const numbers = (entries: Entry[]) => entries.map((e) => Number(e.query.n))

  t.test('one request journal for two instances', { timeout: 200_000, skip }, async (t) => {
    const [a, b] = await Promise.all([start(), start()])

    await t.test('a read on either lists what both answered, with the same ids', async (t) => {
      for (let n = 1; n <= 10; n++) t.equal(await read(n % 2 === 0 ? a.url : b.url, n), 200)
      const onA = await journal(a.url)
      t.equal(onA.status, 200)
      t.same(numbers(onA.entries), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'A lists the ten requests, the five B answered among them, in the order they were answered')
      const onB = await journal(b.url)
      t.same(onB.entries, onA.entries, 'B lists the same entries, with the same ids')
      t.ok(onA.entries.every((e, i) => i === 0 || e.id > onA.entries[i - 1].id), 'ids rise in that order')
      for (let n = 101; n <= 110; n++) t.equal(await read(n % 2 === 0 ? a.url : b.url, n), 200)
      t.same(numbers((await journal(b.url, '?limit=4')).entries), [107, 108, 109, 110], 'limit keeps the newest answered, whichever instance answered them')
    })

    await t.test('since, the filters and limit as on one instance', async (t) => {
      const last = (await journal(b.url)).entries.at(-1)!.id
      for (const n of [11, 12, 13]) await read(a.url, n)
      t.same(numbers((await journal(b.url, `?since=${last}`)).entries), [11, 12, 13], 'since: exactly the requests after it')
      const note = await fetch(`${b.url}/vendor/agency/${AGENCY}/client/1001/log?version=4.0`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(logNote()) })
      t.equal(note.status, 200)
      const posts = (await journal(a.url, '?method=post')).entries
      t.same(posts.map((e) => e.path), [`/vendor/agency/${AGENCY}/client/1001/log`], 'method: the log note B answered')
      t.same((await journal(a.url, '?path=**/log')).entries.map((e) => e.id), posts.map((e) => e.id), 'path glob')
      t.same(numbers((await journal(a.url, '?limit=2&method=GET')).entries), [12, 13], 'limit keeps the newest')
    })

    await t.test('a clear on one empties the journal for both, what the other answered just before included', async (t) => {
      for (let n = 20; n < 25; n++) await read(b.url, n)
      t.equal((await fetch(`${a.url}/_sandbox/requests`, { method: 'DELETE' })).status, 204, 'cleared on A')
      t.same((await journal(a.url)).entries, [], 'empty on A')
      t.same((await journal(b.url)).entries, [], 'empty on B')
      await read(b.url, 30)
      t.same(numbers((await journal(a.url)).entries), [30], 'what came after is listed')
      await read(a.url, 31)
      t.equal((await fetch(`${b.url}/_sandbox/reset`, { method: 'POST' })).status, 200, 'reset on B')
      t.same((await journal(a.url)).entries, [], 'a reset empties it too')
    })

    await t.test('the listening connections cut: reads still list what the other answered', async (t) => {
      const admin = new pg.Client({ connectionString: cluster.url() })
      await admin.connect()
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agency-sandbox listener'")
      await admin.end()
      await sleep(100)
      for (let n = 40; n < 44; n++) await read(b.url, n)
      const cut = await journal(a.url)
      t.equal(cut.status, 200)
      t.same(numbers(cut.entries), [40, 41, 42, 43], 'B shipped without hearing the read')
    })

    await t.test('a created world\'s journal is its own on both, and goes with it', async (t) => {
      const created = await fetch(`${a.url}/_sandbox/worlds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      t.equal(created.status, 201, 'a world created on A')
      const world = await created.json() as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
      const { clientId, clientSecret } = world.integrations[0]
      const inWorld = { authorization: 'Basic ' + Buffer.from(`${clientId}:${clientSecret}`).toString('base64') }
      for (const url of [a.url, b.url]) t.equal((await fetch(`${url}/vendor/agencies?version=4.0&world=1`, { headers: inWorld })).status, 200)
      const listed = (await journal(b.url, '', `/worlds/${world.id}`)).entries
      t.same(listed.map((e) => e.path), ['/vendor/agencies', '/vendor/agencies'], 'the world\'s journal lists the two, answered by A and B')
      t.notOk((await journal(b.url)).entries.some((e) => e.query.world === '1'), 'the default world\'s does not')
      t.equal((await fetch(`${b.url}/_sandbox/worlds/${world.id}`, { method: 'DELETE' })).status, 204, 'deleted on B')
      const db = new pg.Client({ connectionString: cluster.url() })
      await db.connect()
      const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM journal_entries WHERE world_id = $1', [world.id])
      await db.end()
      t.equal(Number(rows[0].n), 0, 'its entries are gone from the database')
    })

    await t.test('an instance killed outright is waited for a few seconds at most', async (t) => {
      await read(a.url, 51)
      b.child.kill('SIGKILL')
      await b.exited
      const began = Date.now()
      let answer = await journal(a.url)
      if (answer.status === 503) answer = await journal(a.url)
      t.equal(answer.status, 200, `answered after ${Date.now() - began} ms`)
      t.ok(Date.now() - began < 10_000, 'within seconds')
      t.ok(numbers(answer.entries).includes(51), 'with what the survivor answered')
    })
  })
}
