import t from 'tap'
import { ALONE_FACTOR, RequestTurns, SHARED_MS, turnClock } from '../../src/domain/worlds/request-turns.js'

/** A world's requests: at most `limit` started per turn of the event loop and in progress, the others waiting in order. */

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

t.test('at most `limit` requests start per turn of the event loop; the others wait, in arrival order, for the next turns', async (t) => {
  const turns = new RequestTurns(2, 100)
  const started: number[] = []
  for (let i = 0; i < 5; i++) t.ok(turns.enter(() => { started.push(i); turns.leave() }), `request ${i} is taken`)
  t.same(started, [0, 1], 'two in this turn, though each ended at once')
  t.equal(turns.waiting, 3)
  const perTurn: number[][] = []
  while (turns.waiting > 0) {
    const before = started.length
    await nextTurn()
    perTurn.push(started.slice(before))
  }
  t.ok(perTurn.every((batch) => batch.length <= 2), `two at most per turn after it (${JSON.stringify(perTurn)})`)
  t.same(started, [0, 1, 2, 3, 4], 'in arrival order')
})

t.test('at most `limit` in progress; one ending lets the next start', async (t) => {
  const turns = new RequestTurns(2, 100)
  const ends: Array<() => void> = []
  let started = 0
  for (let i = 0; i < 5; i++) turns.enter(() => { started++; ends.push(() => turns.leave()) })
  for (let i = 0; i < 5; i++) await nextTurn()
  t.equal(started, 2, 'two in progress, the rest wait however many turns pass')
  t.equal(turns.running, 2)
  ends.shift()!()
  for (let i = 0; i < 3; i++) await nextTurn()
  t.equal(started, 3, 'one ended: one more')
})

t.test('waiting is bounded: one more is refused; unbounded, every request goes on at once', async (t) => {
  const turns = new RequestTurns(1, 2)
  turns.enter(() => {})
  t.ok(turns.enter(() => {}))
  t.ok(turns.enter(() => {}))
  t.notOk(turns.enter(() => t.fail('never runs')), 'a third waiting is refused')
  const open = new RequestTurns(Infinity)
  let ran = 0
  for (let i = 0; i < 10; i++) open.enter(() => { ran++ })
  t.equal(ran, 10, 'SANDBOX_WORLD_REQUESTS=0: all at once')
})

t.test('worlds are served in turn: each starts `limit` at most per turn, whatever another has waiting', async (t) => {
  const busy = new RequestTurns(4, 1000)
  const quiet = new RequestTurns(4, 1000)
  const order: string[] = []
  for (let i = 0; i < 50; i++) busy.enter(() => { order.push('busy'); busy.leave() })
  await nextTurn()
  quiet.enter(() => { order.push('quiet'); quiet.leave() })
  t.ok(order.indexOf('quiet') >= 0 && order.indexOf('quiet') <= 8, `the quiet world's request started within a turn or two of its arrival (position ${order.indexOf('quiet')} of ${order.length})`)
  // the busy world's last requests start before the next test: its worlds are alone
  while (busy.waiting > 0) await nextTurn()
})

t.test('a world alone for a second starts up to four times its bound a turn of requests without a body; one request of another world brings the bound back for every world', async (t) => {
  let nowMs = 1e12
  const realClock = turnClock.nowMs
  turnClock.nowMs = () => nowMs
  t.teardown(() => { turnClock.nowMs = realClock })
  const world = new RequestTurns(2, 1000)
  const other = new RequestTurns(2, 1000)
  // whatever world started a request before, this one follows it: the worlds are not alone for SHARED_MS
  world.enter(() => world.leave(), true)
  await nextTurn()

  /** Requests entered at once, and how many started in each turn until none waits. */
  const perTurn = async (turns: RequestTurns, count: number, bodiless: boolean) => {
    const counts: number[] = []
    let started = 0
    for (let i = 0; i < count; i++) turns.enter(() => { started++; turns.leave() }, bodiless)
    counts.push(started)
    while (turns.waiting > 0) {
      const before = started
      await nextTurn()
      counts.push(started - before)
    }
    return counts
  }
  // the first turn may have started some already (the last turn of the call before): the most a turn is what counts
  const most = async (turns: RequestTurns, count: number, bodiless: boolean) => Math.max(...await perTurn(turns, count, bodiless))
  t.equal(await most(world, 10, true), 2, 'right after another world: the bound a turn')
  nowMs += SHARED_MS
  t.equal(await most(world, 20, true), 2 * ALONE_FACTOR, `alone: ${ALONE_FACTOR} times the bound a turn`)
  t.equal(await most(world, 20, false), 2, 'requests with a body: the bound, alone or not')
  other.enter(() => other.leave(), true)
  t.equal(await most(world, 20, true), 2, 'another world started one: the bound again')
  nowMs += SHARED_MS - 1
  t.equal(await most(world, 20, true), 2, 'for a second')
  nowMs += 1
  t.equal(await most(world, 20, true), 2 * ALONE_FACTOR, 'and after it, alone again')
})
