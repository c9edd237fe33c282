/**
 * Hosted worlds' starts (src/domain/worlds/shared-starts.ts): read from the catalogue when a reset
 * needs one, one copy kept for the worlds that share a start, the latest few kept at most; a world
 * deleted answers 404 and PostgreSQL out of reach 503.
 */
import t from 'tap'
import { SharedStarts } from '../../src/domain/worlds/shared-starts.js'

function catalogue (digestOf: Record<string, string>) {
  const bodiesRead: string[] = []
  const digestsRead: string[] = []
  return {
    bodiesRead,
    digestsRead,
    startDigest: async (worldId: string) => {
      digestsRead.push(worldId)
      if (worldId === 'unreachable') throw new Error('connect ECONNREFUSED 127.0.0.1:5432')
      return digestOf[worldId]
    },
    startBody: async (digest: string) => {
      bodiesRead.push(digest)
      return Buffer.from(`start ${digest}`)
    }
  }
}

t.test('worlds that share a start share one read of it', async (t) => {
  const store = catalogue({ w1: 'demo', w2: 'demo', w3: 'other' })
  const starts = new SharedStarts(store)
  t.equal((await starts.of('w1')()).toString(), 'start demo')
  t.equal((await starts.of('w2')()).toString(), 'start demo')
  t.equal((await starts.of('w1')()).toString(), 'start demo')
  t.equal((await starts.of('w3')()).toString(), 'start other')
  t.same(store.bodiesRead, ['demo', 'other'], 'each start read once')
  t.same(store.digestsRead, ['w1', 'w2', 'w3'], "each world's digest asked once")
  starts.forget('w1')
  await starts.of('w1')()
  t.same(store.digestsRead.at(-1), 'w1', 'asked again once the world is forgotten')
})

t.test('at most eight starts kept: the one used longest ago is read again', async (t) => {
  const digests = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`w${i}`, `d${i}`]))
  const store = catalogue(digests)
  const starts = new SharedStarts(store)
  for (let i = 0; i < 9; i++) await starts.of(`w${i}`)()
  await starts.of('w8')()
  t.equal(store.bodiesRead.length, 9, 'the latest still kept')
  await starts.of('w0')()
  t.equal(store.bodiesRead.at(-1), 'd0', 'the first, pushed out by the ninth, read again')
})

t.test('a deleted world answers 404, PostgreSQL out of reach 503', async (t) => {
  const starts = new SharedStarts(catalogue({}))
  const refusal = async (worldId: string) => await starts.of(worldId)().then(() => undefined, (e: { status?: number, detail?: string }) => ({ status: e.status, detail: e.detail }))
  t.same(await refusal('gone'), { status: 404, detail: 'World gone was deleted' })
  t.equal((await refusal('unreachable'))?.status, 503)
})
