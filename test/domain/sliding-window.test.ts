import t from 'tap'
import { SlidingWindow } from '../../src/domain/sliding-window.js'

t.test('a sliding window counts only what is recorded, per key, over the last windowMs', async (t) => {
  const window = new SlidingWindow(3, 1000)
  let now = 10_000
  t.ok(window.hasRoom('a', now))
  t.same(window.state('a', now), { remaining: 3, resetMs: 0 }, 'asking uses nothing')
  window.record('a', now)
  now += 400
  window.record('a', now)
  window.record('a', now)
  t.notOk(window.hasRoom('a', now), 'three in the window')
  t.ok(window.hasRoom('b', now), 'another key has its own budget')
  t.same(window.state('a', now), { remaining: 0, resetMs: 600 }, 'the oldest leaves in 600 ms')
  now += 599
  t.notOk(window.hasRoom('a', now), 'still in the window 1 ms before')
  now += 1
  t.ok(window.hasRoom('a', now), 'exactly one window after the oldest, it has left')
  t.same(window.state('a', now), { remaining: 1, resetMs: 400 })
  now += 400
  t.same(window.state('a', now), { remaining: 3, resetMs: 0 }, 'all gone')
})

t.test('an event is placed at the time it began, even when recorded after a later one', async (t) => {
  const window = new SlidingWindow(2, 1000)
  window.record('a', 5_100) // a fast request that began later
  window.record('a', 5_000) // a slow one that began first
  t.same(window.state('a', 5_200), { remaining: 0, resetMs: 800 }, 'the oldest is the one that began first')
  t.ok(window.hasRoom('a', 6_000), 'it leaves one window after it began')
  t.same(window.state('a', 6_000), { remaining: 1, resetMs: 100 })
})
