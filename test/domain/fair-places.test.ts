import t from 'tap'
import { FairPlaces } from '../../src/domain/fair-places.js'

/** The worker's places: one per key at a time, the keys waiting served in turn, waiting bounded. */

t.test('a key holds one place at a time; the keys waiting are served in turn, each its own in order', async (t) => {
  const places = new FairPlaces(2, { maxWaiting: 100, maxWaitingPerKey: 100 })
  const served: string[] = []
  const releases = new Map<string, () => void>()
  const ask = (key: string, label: string) => places.take(key)!.then((release) => {
    served.push(label)
    releases.set(label, release)
  })
  const all = [ask('a', 'a1'), ask('a', 'a2'), ask('a', 'a3'), ask('b', 'b1'), ask('b', 'b2'), ask('c', 'c1')]
  await new Promise((resolve) => setImmediate(resolve))
  t.same(served, ['a1', 'b1'], "a's second waits though a place is free... for b, then c")
  t.equal(places.held, 2)
  releases.get('a1')!()
  await new Promise((resolve) => setImmediate(resolve))
  t.same(served, ['a1', 'b1', 'c1'], 'the freed place goes to c, which waited and holds none')
  releases.get('b1')!()
  releases.get('b1')!()
  await new Promise((resolve) => setImmediate(resolve))
  t.same(served, ['a1', 'b1', 'c1', 'a2'], 'then a (given back twice, a place counts once)')
  releases.get('c1')!()
  await new Promise((resolve) => setImmediate(resolve))
  t.same(served, ['a1', 'b1', 'c1', 'a2', 'b2'], 'b before a again: a holds a place')
  releases.get('a2')!()
  await Promise.all([...releases.values()].map((release) => release()))
  await Promise.race([Promise.all(all), new Promise((resolve) => setTimeout(resolve, 100))])
  t.same(served, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3'])
})

t.test('waiting is bounded, per key and in all, except for work that must wait its turn', async (t) => {
  const places = new FairPlaces(1, { maxWaiting: 3, maxWaitingPerKey: 2 })
  const held = await places.take('a')!
  const waiting = [places.take('a'), places.take('a')]
  t.ok(waiting.every((w) => w !== undefined), "a's first and second wait")
  t.equal(places.take('a'), undefined, 'a third is refused')
  waiting.push(places.take('b'))
  t.ok(waiting[2], 'another key still waits')
  t.equal(places.take('c'), undefined, 'until all wait as many as may')
  waiting.push(places.take('c', false))
  t.ok(waiting[3], 'unless it is unbounded')
  t.equal(places.waiting, 4)
  places.failWaiting(new Error('closing'))
  for (const w of waiting) await t.rejects(w!, /closing/, 'closing fails those waiting')
  t.equal(places.waiting, 0)
  held()
})
