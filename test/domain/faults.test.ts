import t from 'tap'
import { Faults, type FaultInput, type FaultRequest } from '../../src/domain/faults.js'
import { seededDraw, seededRandom } from '../../src/domain/random.js'

/** mulberry32 as the sandbox first drew it, one state after another: the reference the seeded sequences keep. */
function mulberry32 (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), a | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

t.test('any draw of a seeded sequence is the one drawn in order', async (t) => {
  for (const seed of [1, 7, 42, 4294967295]) {
    const reference = mulberry32(seed)
    const inOrder = seededRandom(seed)
    let same = 0
    for (let k = 1; k <= 2000; k++) {
      const expected = reference()
      if (seededDraw(seed, k) === expected && inOrder() === expected) same++
    }
    t.equal(same, 2000, `seed ${seed}: 2,000 draws alike`)
  }
})

t.test('rules handed to another instance with their state (a takeover) go on deciding as one instance alone would', async (t) => {
  const rules: FaultInput[] = [
    { match: { path: '/vendor/agencies' }, effect: { status: 503 }, times: 4 },
    { match: { clientId: 'abc' }, effect: { status: 500 }, every: 3, probability: 0.6, seed: 42 },
    { effect: { status: 502 }, probability: 0.3, seed: 7 }
  ]
  const alone = new Faults()
  let owner = new Faults()
  for (const rule of rules) alone.add(rule)
  for (const rule of rules) owner.add(rule)
  const request = (i: number): FaultRequest => ({ method: 'GET', path: i % 2 === 0 ? '/vendor/agencies' : '/vendor/agency/1001/client/1000', version: '4.0', clientId: 'abc', agencyId: null })
  const expected: Array<string | undefined> = []
  const handed: Array<string | undefined> = []
  for (let i = 0; i < 60; i++) {
    expected.push(alone.decide(request(i))?.id)
    handed.push(owner.decide(request(i))?.id)
    if (i % 7 === 6) {
      // as the log carries it: JSON text
      const next = new Faults()
      next.adopt(JSON.parse(JSON.stringify(owner.state())))
      owner = next
    }
  }
  t.same(handed, expected, 'the same rule for each of 60 requests')
  t.ok(new Set(expected).size >= 3, 'every rule and no rule among them')
  t.same(owner.list().map((r) => [r.hits, r.matched, r.exhausted]), alone.list().map((r) => [r.hits, r.matched, r.exhausted]), 'and the same counts')
  t.equal(owner.add({ effect: { status: 500 } }).id, 'fault-4', 'numbering goes on')
})
