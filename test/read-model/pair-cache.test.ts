import t from 'tap'
import { PairCache } from '../../src/read-model/bounded-cache.js'

t.test('a pair cache answers by both numbers, and forgets one entry', async (t) => {
  const cache = new PairCache<number, string | null>(10)
  cache.set(1001, 7, 'a')
  cache.set(1002, 7, 'b')
  cache.set(1001, 8, null)
  t.equal(cache.get(1001, 7), 'a')
  t.equal(cache.get(1002, 7), 'b', 'the same client number in another agency is another entry')
  t.equal(cache.get(1001, 8), null, 'a kept null (no such client) is told from nothing kept')
  t.equal(cache.get(1001, 9), undefined)
  t.equal(cache.get(1003, 7), undefined)
  cache.delete(1001, 7)
  t.equal(cache.get(1001, 7), undefined, 'deleted')
  t.equal(cache.get(1002, 7), 'b', 'the other agency keeps its entry')
  cache.delete(1004, 1)
  cache.set(1001, 10, 'c')
  cache.deleteAll(1001)
  t.equal(cache.get(1001, 8), undefined, 'an agency\'s entries are deleted at once')
  t.equal(cache.get(1001, 10), undefined)
  t.equal(cache.get(1002, 7), 'b', 'the other agency keeps its entry again')
})

t.test('a pair cache starts over when one more entry would pass its budget', async (t) => {
  const cache = new PairCache<number, number>(3)
  for (let n = 1; n <= 3; n++) cache.set(1, n, n)
  t.same([1, 2, 3].map((n) => cache.get(1, n)), [1, 2, 3], 'three kept')
  cache.set(2, 4, 4)
  t.same([1, 2, 3].map((n) => cache.get(1, n)), [undefined, undefined, undefined], 'the fourth starts it over')
  t.equal(cache.get(2, 4), 4, 'and is kept')
  // a deleted entry stays counted until the cache starts over: setting again cannot grow it past its budget
  for (let i = 0; i < 100; i++) {
    cache.delete(2, 4)
    cache.set(2, 4, i)
  }
  let kept = 0
  for (let n = 0; n < 10; n++) if (cache.get(2, n) !== undefined || cache.get(1, n) !== undefined) kept++
  t.ok(kept <= 3, `at most its budget kept (${kept})`)
  cache.clear()
  t.equal(cache.get(2, 4), undefined, 'cleared')
})
