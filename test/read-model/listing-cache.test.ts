import t from 'tap'
import { ListingCache } from '../../src/read-model/listing-cache.js'

const json = (text: string) => Buffer.from(text)
const all = { deleted: false, officeId: null, sinceMs: null }

t.test('a listing is kept for its agency, filter and instant only', async (t) => {
  const cache = new ListingCache(1024)
  cache.set(1001, all, json('[1,2,3]'))
  cache.set(1001, { ...all, sinceMs: 0 }, json('[2]'))
  cache.set(1001, { ...all, deleted: true }, json('[9]'))
  cache.set(1001, { ...all, officeId: 12 }, json('[3]'))
  cache.set(1002, all, json('[7]'))
  t.equal(cache.get(1001, all)?.toString(), '[1,2,3]', 'every live client')
  t.equal(cache.get(1001, { ...all, sinceMs: 0 })?.toString(), '[2]', 'since an instant is not the whole listing')
  t.equal(cache.get(1001, { ...all, deleted: true })?.toString(), '[9]', 'deleted clients')
  t.equal(cache.get(1001, { ...all, officeId: 12 })?.toString(), '[3]', 'one office')
  t.equal(cache.get(1001, { ...all, officeId: 1 }), undefined, 'another office')
  t.equal(cache.get(1001, { ...all, sinceMs: 1 }), undefined, 'another instant')
  t.equal(cache.get(1002, all)?.toString(), '[7]', 'another agency')
  cache.deleteAll(1001)
  t.equal(cache.get(1001, all), undefined, 'forgotten with its agency')
  t.equal(cache.get(1001, { ...all, deleted: true }), undefined)
  t.equal(cache.get(1002, all)?.toString(), '[7]', 'the other agency keeps its listings')
})

t.test('listings start over when one more would pass the byte budget', async (t) => {
  const cache = new ListingCache(10)
  cache.set(1001, all, json('[1,2,3]'))
  cache.set(1002, all, json('[1]'))
  t.ok(cache.get(1001, all) !== undefined && cache.get(1002, all) !== undefined, '10 bytes kept')
  cache.set(1003, all, json('[4]'))
  t.equal(cache.get(1001, all), undefined, 'started over')
  t.equal(cache.get(1002, all), undefined)
  t.equal(cache.get(1003, all)?.toString(), '[4]', 'the new one is kept')
  // deleting does not give the bytes back: setting again and again cannot pass the budget
  for (let i = 0; i < 20; i++) {
    cache.deleteAll(1004)
    cache.set(1004, all, json('[5]'))
  }
  t.equal(cache.get(1003, all), undefined, 'started over again as forgotten listings added up')
})
