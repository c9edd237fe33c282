/**
 * Hosted mode: a world's activity simulator runs at the world's owner. Started through either
 * instance, it runs on exactly one of them, both report the same state, a stop through either
 * stops it, a clock-time simulator's changes are made in the advance's write, and when the owner
 * running a real-time simulator is killed, the instance that takes the world over goes on with it.
 */
import t from 'tap'
import pg from 'pg'
import { hostedInstances, sleep, withoutPostgres } from '../helpers/hosted.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }
const JSON_TYPE = { 'content-type': 'application/json' }
const AGENCY = 1001

t.setTimeout(240_000)

interface Status { running: boolean, settings: { seed: number } | null, changes: number, byKind: Record<string, number> }

const skip = withoutPostgres
{
  const cluster = hostedInstances(t)
  const start = async () => await cluster.start()
  const control = async (url: string, method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${url}/_sandbox${path}`, { method, headers: body === undefined ? {} : JSON_TYPE, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: answer.status, json: await answer.json() as Record<string, unknown> }
  }
  const status = async (url: string) => (await control(url, 'GET', '/simulator')).json as unknown as Status

  /** The instances whose commits made a running simulator's changes (the world's log names each commit's writer). */
  const changers = async (seed: number): Promise<Map<string, number>> => {
    const db = new pg.Client({ connectionString: cluster.url() })
    await db.connect()
    const { rows } = await db.query<{ instance: string, state: Buffer | null }>("SELECT instance, state FROM world_log WHERE world_id = 'default' AND kind = 'commit' ORDER BY seq")
    await db.end()
    const counts = new Map<string, number>()
    for (const row of rows) {
      const state = row.state === null ? undefined : (JSON.parse(row.state.toString('utf8')) as { simulator: Status }).simulator
      const made = state !== undefined && state.settings?.seed === seed && state.changes > 0
      if (made) counts.set(row.instance, (counts.get(row.instance) ?? 0) + 1)
    }
    return counts
  }
  /** An instance's name in the log (host:pid:random), by its process. */
  const pidOf = (instance: string) => Number(instance.split(':')[1])

  t.test('one simulator per world across two instances', { timeout: 200_000, skip }, async (t) => {
    const [a, b] = await Promise.all([start(), start()])

    await t.test('real time: started through one, run by the world\'s owner, the same state on both, stopped through either', async (t) => {
      t.equal((await control(a.url, 'POST', '/simulator', { ratePerMinute: 1200, seed: 5 })).status, 200, 'started through A')
      const onB = await status(b.url)
      t.ok(onB.running, 'B reports it running')
      t.same(onB.settings, { ratePerMinute: 1200, seed: 5 }, 'with the settings given to A')
      await sleep(1500)
      t.equal((await control(b.url, 'DELETE', '/simulator')).status, 200, 'stopped on B')
      await sleep(300) // a turn the leader had begun commits
      const [finalA, finalB] = [await status(a.url), await status(b.url)]
      t.equal(finalA.running, false, 'A reports it stopped')
      t.same(finalA, finalB, 'both report the same state')
      t.ok(finalA.changes >= 10, `it made ${finalA.changes} changes in 1.5 s at 20 a second`)
      const by = await changers(5)
      t.equal(by.size, 1, `every change made by one instance (${[...by.entries()].map(([i, n]) => `${i}: ${n} commits`).join(', ')})`)
      await sleep(1000)
      t.equal((await status(a.url)).changes, finalA.changes, 'no change after the stop')
    })

    await t.test('clock time: the advance makes the changes, through either instance', async (t) => {
      t.equal((await control(a.url, 'PUT', '/clock', { now: '2031-01-01T00:00:00Z', frozen: true })).status, 200)
      t.equal((await control(a.url, 'POST', '/simulator', { ratePerMinute: 6, seed: 7, clockTime: true, agencies: [AGENCY] })).status, 200, 'started on A')
      const advanced = await control(b.url, 'POST', '/clock/advance', { seconds: 600 })
      t.equal(advanced.status, 200, 'advanced on B')
      t.same(advanced.json.simulator, { changes: 60, skipped: 0 }, 'the period\'s 60 changes')
      t.equal((await status(a.url)).changes, 60, 'A reports them')
      const changed = await (await fetch(`${a.url}/vendor/agency/${AGENCY}/clients?version=4.0&asOf=2030-12-31T23:59:59Z`, { headers: AUTH })).json() as number[]
      t.ok(changed.length > 0, `A lists ${changed.length} clients changed in the period`)
      t.equal((await control(a.url, 'DELETE', '/simulator')).status, 200)
      t.equal((await control(a.url, 'DELETE', '/clock')).status, 200)
    })

    await t.test('the owner running a real-time simulator is killed: the instance that takes the world over goes on with it', async (t) => {
      t.equal((await control(b.url, 'POST', '/simulator', { ratePerMinute: 1200, seed: 9 })).status, 200, 'started through B')
      await sleep(1000)
      const before = await changers(9)
      t.equal(before.size, 1, `one instance runs it (${[...before.entries()].map(([i, n]) => `${i}: ${n} commits`).join(', ')})`)
      const leader = [a, b].find((served) => served.child.pid === pidOf([...before.keys()][0]))
      const survivor = leader === a ? b : a
      t.ok(leader !== undefined, 'the log names one of the two')
      leader?.child.kill('SIGKILL')
      await leader?.exited
      const since = (await status(survivor.url)).changes
      await sleep(3000)
      const after = await status(survivor.url)
      t.ok(after.running, 'still running')
      t.ok(after.changes > since + 10, `the survivor went on: ${since} changes at the kill, ${after.changes} 3 s later`)
      const by = await changers(9)
      t.ok((by.get([...by.keys()].find((i) => pidOf(i) === survivor.child.pid) ?? '') ?? 0) > 0, 'its own commits made them')
      t.equal((await control(survivor.url, 'DELETE', '/simulator')).status, 200)
    })
  })
}
