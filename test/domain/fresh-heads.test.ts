/**
 * Strict hosted reads (src/domain/worlds/fresh-heads.ts): a request is answered from heads read
 * after it arrived, shared by the requests of one turn; a later turn asks again.
 */
import t from 'tap'
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
