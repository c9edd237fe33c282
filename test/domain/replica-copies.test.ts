/**
 * A hosted replica's copy of its world's data (src/domain/worlds/replica.ts): dropped only while
 * no request uses it, and then holding nothing of the log, its create-client window included
 * (the entries replayed when it is loaded again bring the window's events back, once).
 */
import t from 'tap'
import type { Db } from '../../src/db/database.js'
import type { WorldLog } from '../../src/db/postgres/world-log.js'
import { SlidingWindow } from '../../src/domain/sliding-window.js'
import { WorldReplica, type ReplicatedWorld } from '../../src/domain/worlds/replica.js'

function fakeWorld () {
  const adopted: string[] = []
  const world = {
    id: 'w1',
    sql: { requireCapture: () => undefined },
    createBudget: new SlidingWindow(25, 1000),
    adoptDatabase: (db: Db) => { adopted.push(db.name) }
  }
  return { world: world as unknown as ReplicatedWorld, adopted, budget: world.createBudget }
}
const standIn = () => ({ name: 'stand-in' }) as unknown as Db
// dropping a copy reads nothing of the log
const log = {} as WorldLog

t.test('a copy in use is not dropped; once unused, it is', async (t) => {
  const { world, adopted } = fakeWorld()
  const replica = new WorldReplica(world, log, { migrationsDir: '' }, 7)
  t.ok(replica.holdsCopy, 'a replica made at an entry of the log holds a copy')
  const release = replica.use()
  const other = replica.use()
  t.equal(await replica.dropCopy(standIn), false, 'not dropped while two requests use it')
  release()
  release()
  t.equal(await replica.dropCopy(standIn), false, 'nor while one still does (a release counts once)')
  other()
  t.equal(await replica.dropCopy(standIn), true, 'dropped once none does')
  t.same(adopted, ['stand-in'], 'the stand-in took its place')
  t.notOk(replica.holdsCopy, 'no copy held')
  t.equal(replica.seq, 0, 'nothing of the log held')
  t.equal(await replica.dropCopy(standIn), false, 'a dropped copy is not dropped again')
})

t.test('a dropped copy forgets the create-client window its next load replays', async (t) => {
  const { world, budget } = fakeWorld()
  const replica = new WorldReplica(world, log, { migrationsDir: '' }, 3)
  budget.record('abc', 1000)
  t.equal(budget.state('abc', 1000).remaining, 24)
  await replica.dropCopy(standIn)
  t.equal(budget.state('abc', 1000).remaining, 25, 'its events come back with the entries replayed, counted once')
})

t.test('a replica made at entry 0 holds no copy until its first catch-up', async (t) => {
  const { world } = fakeWorld()
  const replica = new WorldReplica(world, log, { migrationsDir: '' }, 0)
  t.notOk(replica.holdsCopy)
  await replica.announced(5)
  t.notOk(replica.holdsCopy, 'an announced commit does not load it')
})

t.test('a request need not wait only while no turn of this instance is held or waited for', async (t) => {
  const { world } = fakeWorld()
  let answer!: (entries: []) => void
  const slowLog = { entriesAfter: async () => await new Promise<[]>((resolve) => { answer = resolve }) } as unknown as WorldLog
  const replica = new WorldReplica(world, slowLog, { migrationsDir: '' }, 3)
  t.ok(replica.caughtUpNow(3), 'at its head, nothing running: nothing to wait for')
  t.notOk(replica.caughtUpNow(4), 'behind the head asked for')
  const catchingUp = replica.caughtUp(4)
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(replica.caughtUpNow(3), 'while a catch-up holds the turn, even a request it does not concern waits for it')
  answer([])
  await catchingUp
  t.ok(replica.caughtUpNow(3), 'once the turn is given back, nothing to wait for again')
})
