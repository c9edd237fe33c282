import t from 'tap'
import { Faults, type FaultInput, type FaultRequest, type SharedFaultCounts } from '../../src/domain/faults.js'
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

/** Counts kept in memory, as PostgreSQL keeps them for several instances (db/postgres/fault-counts.ts). */
function countsInMemory (): SharedFaultCounts {
  const rows = new Map<string, { matched: number, hits: number, exhausted: boolean }>()
  return {
    async match (id) {
      const row = rows.get(id) ?? { matched: 0, hits: 0, exhausted: false }
      rows.set(id, row)
      if (row.exhausted) return undefined
      return ++row.matched
    },
    async hit (id, times) {
      const row = rows.get(id)
      if (row === undefined || row.exhausted) return undefined
      row.hits++
      row.exhausted = times !== undefined && row.hits >= times
      return row.hits
    },
    all: async () => new Map(rows)
  }
}

t.test('rules decided with shared counts, by two replicas in turn, affect the requests one replica alone would', async (t) => {
  const rules: FaultInput[] = [
    { match: { path: '/vendor/agencies' }, effect: { status: 503 }, times: 4 },
    { match: { clientId: 'abc' }, effect: { status: 500 }, every: 3, probability: 0.6, seed: 42 },
    { effect: { status: 502 }, probability: 0.3, seed: 7 }
  ]
  const alone = new Faults()
  const [a, b] = [new Faults(), new Faults()]
  const counts = countsInMemory()
  for (const rule of rules) alone.add(rule)
  for (const rule of rules) a.add(rule)
  b.adopt(a.state())
  a.share(counts)
  b.share(counts)
  const request = (i: number): FaultRequest => ({ method: 'GET', path: i % 2 === 0 ? '/vendor/agencies' : '/vendor/agency/1001/client/1000', version: '4.0', clientId: 'abc', agencyId: null })
  const expected: Array<string | undefined> = []
  const shared: Array<string | undefined> = []
  for (let i = 0; i < 60; i++) {
    expected.push(alone.decide(request(i))?.id)
    shared.push((await (i % 3 === 0 ? a : b).decideShared(request(i)))?.id)
  }
  t.same(shared, expected, 'the same rule for each of 60 requests')
  t.ok(new Set(expected).size >= 3, 'every rule and no rule among them')
  const listed = await b.current()
  t.same(listed.map((r) => [r.hits, r.matched]), alone.list().map((r) => [r.hits, r.matched]), 'and the same counts')
})
