/**
 * Hosted mode's leases and fence, over a real PostgreSQL (src/db/postgres/owners.ts, world-log.ts):
 * one owner per world at a time; a claim takes a world only once its lease has run out, and bumps
 * the epoch; an owner that lost its lease can neither renew it nor append to the world's log; a
 * claim waits for an append in flight and comes after it; a lease given back is taken at once.
 */
import t from 'tap'
import { Owners } from '../../src/db/postgres/owners.js'
import { Fenced, WorldLog } from '../../src/db/postgres/world-log.js'
import { migratedPostgres, sleep, withoutPostgres } from '../helpers/hosted.js'

const LEASE_MS = 500
const entry = (text: string) => ({ kind: 'commit' as const, body: Buffer.from(text), records: null, state: null })

t.test('leases and the fence', { skip: withoutPostgres }, async (t) => {
  const { pool } = await migratedPostgres(t)
  const [x, y] = [new Owners(pool, 'x', LEASE_MS), new Owners(pool, 'y', LEASE_MS)]
  const [logX, logY] = [new WorldLog(pool, 'x'), new WorldLog(pool, 'y')]
  const seqs = async () => (await pool.query<{ seq: string, instance: string }>("SELECT seq, instance FROM world_log WHERE world_id = 'w' ORDER BY seq")).rows.map((r) => `${r.seq}:${r.instance}`)

  await t.test('one owner at a time; a lease that runs out is taken, with the next epoch', async (t) => {
    t.same(await x.claim('w', 'http://x'), { mine: true, epoch: 1 }, 'x claims a world nobody holds')
    const refused = await y.claim('w', 'http://y')
    t.match(refused, { mine: false, instance: 'x', address: 'http://x' }, 'y learns that x holds it, and where')
    t.ok(!refused.mine && refused.leftMs > 0 && refused.leftMs <= LEASE_MS, 'and for how long yet')
    t.same(await x.claim('w', 'http://x'), { mine: true, epoch: 2 }, 'the holder claiming again bumps the epoch')
    await logX.append('w', 2, 1, entry('x1'))
    t.same([...await x.renew([{ worldId: 'w', epoch: 2, facts: null, lastUsedMs: 0 }])], ['w'], 'x renews it')
    await sleep(LEASE_MS + 100)
    t.same(await y.claim('w', 'http://y'), { mine: true, epoch: 3 }, 'once it ran out, y takes it')
  })

  await t.test('the old owner can neither renew nor append', async (t) => {
    t.same([...await x.renew([{ worldId: 'w', epoch: 2, facts: null, lastUsedMs: 0 }])], [], 'x\'s renewal names no world')
    await t.rejects(logX.append('w', 2, 2, entry('x2')), Fenced, 'x\'s append is refused')
    await logY.append('w', 3, 2, entry('y2'))
    t.same(await seqs(), ['1:x', '2:y'], 'the log holds x\'s entry before the takeover and y\'s after it')
    await t.rejects(logY.append('w', 3, 2, entry('again')), 'an entry appended twice is refused (the log\'s key)')
  })

  await t.test('a claim waits for an append in flight, and comes after it', async (t) => {
    await y.release(['w'])
    t.same(await x.claim('w', 'http://x'), { mine: true, epoch: 4 }, 'a lease given back is taken at once')
    // an append holds the owner's row FOR SHARE until it commits: here one held open
    const appending = await pool.connect()
    await appending.query('BEGIN')
    await appending.query("SELECT 1 FROM world_owners WHERE world_id = 'w' AND instance = 'x' AND epoch = 4 FOR SHARE")
    await appending.query("INSERT INTO world_log (world_id, seq, kind, body, instance) VALUES ('w', 3, 'commit', 'x3', 'x')")
    await sleep(LEASE_MS + 100)
    const events: string[] = []
    const claim = y.claim('w', 'http://y').then((claimed) => { events.push(`claimed ${claimed.mine ? 'epoch' : ''}`) })
    await sleep(200)
    events.push('append committed')
    await appending.query('COMMIT')
    appending.release()
    await claim
    t.same(events, ['append committed', 'claimed epoch'], 'the claim answered once the append committed')
    t.same(await seqs(), ['1:x', '2:y', '3:x'], 'and the new owner reads the log with it')
  })
})
