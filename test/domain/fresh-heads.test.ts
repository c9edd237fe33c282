/**
 * Strict hosted reads (src/domain/worlds/fresh-heads.ts): a request is answered from heads read
 * after it arrived, shared by the requests of one turn (a later turn asks again), or, while the
 * instance listens within its reader's lease, from what it heard announced.
 */
import t from 'tap'
import { performance } from 'node:perf_hooks'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Heads } from '../../src/db/postgres/catalogue.js'
import { FreshHeads } from '../../src/domain/worlds/fresh-heads.js'

/** A database whose answers the test gives: each question waits until answered. */
function database () {
  const questions: Array<{ answer: (catalogue: number) => void, fail: (e: Error) => void }> = []
  const read = async () => await new Promise<Heads>((resolve, reject) => {
    questions.push({ answer: (catalogue) => resolve({ catalogue, worlds: new Map() }), fail: reject })
  })
  return { questions, heads: new FreshHeads(read, 'strict') }
}

const catalogueOf = async (heads: Promise<Heads>) => (await heads).catalogue

t.test('the requests of one turn share one question', async (t) => {
  const { questions, heads } = database()
  const answers = [heads.get(), heads.get(), heads.get()]
  t.equal(questions.length, 1)
  questions[0].answer(1)
  t.same(await Promise.all(answers.map(catalogueOf)), [1, 1, 1])
})

t.test('a request of a later turn is never answered from a question asked before it came', async (t) => {
  const { questions, heads } = database()
  const first = heads.get()
  await nextTurn()
  const second = heads.get()
  const alsoSecond = heads.get()
  t.equal(questions.length, 2, 'it asks again, without waiting for the question on its way')
  questions[0].answer(1)
  questions[1].answer(2)
  t.same([await catalogueOf(first), await catalogueOf(second), await catalogueOf(alsoSecond)], [1, 2, 2], 'each turn its own answer')
})

t.test('a failed question fails the requests of its turn only', async (t) => {
  const { questions, heads } = database()
  const first = heads.get()
  await nextTurn()
  const second = heads.get()
  questions[0].fail(new Error('connection lost'))
  await t.rejects(first, /connection lost/)
  questions[1].answer(5)
  t.equal(await catalogueOf(second), 5)
})

t.test('strict reads trust what was heard only while listening within the lease', async (t) => {
  const { questions, heads } = database()
  heads.listenerUp({ catalogue: 3, worlds: new Map([['w1', 7]]) })
  heads.get().catch(() => undefined)
  t.equal(questions.length, 1, 'listening without a lease: it asks')
  questions[0].answer(3)
  await nextTurn()

  heads.trust(performance.now() + 60_000)
  heads.announce('w1', 8)
  const heard = await heads.get()
  t.equal(questions.length, 1, 'within the lease: no question')
  t.same([heard.catalogue, heard.worlds.get('w1')], [3, 8], 'what was heard, the latest announcement included')

  heads.trust(performance.now() - 1)
  heads.get().catch(() => undefined)
  t.equal(questions.length, 2, 'past the lease: it asks again')
  questions[1].answer(3)
  await nextTurn()

  heads.trust(performance.now() + 60_000)
  heads.listenerDown()
  heads.get().catch(() => undefined)
  t.equal(questions.length, 3, 'not listening, whatever the lease: it asks')
  questions[2].answer(3)
})
