import t from 'tap'
import { ByteSlabs } from '../../src/read-model/byte-slabs.js'
import fc from 'fast-check'

const keep = (slabs: ByteSlabs, text: string) => slabs.keep(text, Buffer.byteLength(text, 'utf8'))
/** A kept item's text: the array of it alone, brackets taken off. */
const read = (slabs: ByteSlabs, handle: number) => Buffer.concat(slabs.jsonChunks([handle])).toString('utf8').slice(1, -1)

t.test('kept text reads back as its UTF-8 bytes, ASCII or not', async (t) => {
  const slabs = new ByteSlabs(64, 32)
  const ascii = keep(slabs, '{"a":1}')
  const accented = keep(slabs, '{"n":"Zoë Ñúñez €"}')
  t.equal(read(slabs, ascii), '{"a":1}')
  t.equal(read(slabs, accented), '{"n":"Zoë Ñúñez €"}')
  t.equal(slabs.size(accented), Buffer.byteLength('{"n":"Zoë Ñúñez €"}'), 'its size in bytes, not characters')
})

t.test('fills slab after slab up to the budget, then says full; a reset reuses the same memory', async (t) => {
  const slabs = new ByteSlabs(30, 10)
  const handles = ['aaaaaa', 'bbbbbb', 'cccccc'].map((text) => keep(slabs, text))
  t.same(handles.map((h) => read(slabs, h)), ['aaaaaa', 'bbbbbb', 'cccccc'], 'six bytes each: one a slab, as the rest of a slab is too small')
  t.equal(slabs.allocatedBytes, 30, 'three slabs of ten')
  t.equal(keep(slabs, 'dddddd'), -1, 'full: a fourth slab would pass the budget')
  t.equal(read(slabs, keep(slabs, 'eeee')), 'eeee', 'smaller text still fills the rest of the last slab')
  t.equal(keep(slabs, 'e'), -1, 'then nothing more fits')
  slabs.reset()
  const again = keep(slabs, 'ffffff')
  t.equal(again, handles[0], 'handles start over')
  t.equal(read(slabs, again), 'ffffff')
  t.equal(slabs.allocatedBytes, 30, 'nothing allocated by the reset')
})

t.test('keeps many more items than its first table holds', async (t) => {
  const slabs = new ByteSlabs(1 << 20, 1 << 16)
  const handles = Array.from({ length: 5000 }, (_, i) => keep(slabs, `{"n":${i}}`))
  t.ok(handles.every((h, i) => h === i), 'one handle each, in order')
  t.equal(read(slabs, handles[4321]), '{"n":4321}')
})

t.test('joins handles and text in order, with the separators', async (t) => {
  const slabs = new ByteSlabs(100, 50)
  const a = keep(slabs, '{"a":1}')
  const b = keep(slabs, '"ü"')
  const bracket = (parts: Array<number | string>) => slabs.jsonArray(parts).toString('utf8')
  t.equal(bracket([a, '{"x":"é"}', b]), '[{"a":1},{"x":"é"},"ü"]')
  t.same(JSON.parse(bracket([])), [], 'nothing joined is an empty array')
  t.equal(bracket(['7']), '[7]')
})

t.test('text larger than a slab is refused loudly; no budget keeps nothing', async (t) => {
  const slabs = new ByteSlabs(100, 10)
  t.throws(() => keep(slabs, 'x'.repeat(11)), RangeError)
  t.equal(keep(new ByteSlabs(0, 10), 'x'), -1, 'a budget below one slab keeps nothing')
  t.throws(() => new ByteSlabs(10, 0), /positive slab size/)
})

t.test('handles kept one after another join in one run: any order, any mix with text, across slabs, the same array', async (t) => {
  const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 6 })).map((s) => JSON.stringify(s))
  fc.assert(fc.property(
    fc.array(text, { minLength: 1, maxLength: 40 }),
    fc.integer({ min: 16, max: 64 }),
    fc.array(fc.oneof(fc.nat(), text), { maxLength: 60 }),
    (kept, slabBytes, picks) => {
      const slabs = new ByteSlabs(64 * 64, slabBytes)
      const handles = kept.map((k) => (Buffer.byteLength(k) > slabBytes ? -1 : keep(slabs, k)))
      // parts: a kept item by index (runs of consecutive indexes are likely), or text not kept
      const chosen = picks.map((p) => (typeof p === 'number' && handles[p % kept.length] !== -1 ? { handle: handles[p % kept.length], text: kept[p % kept.length] } : { text: String(p) }))
      const parts = chosen.map((c) => c.handle ?? c.text)
      return slabs.jsonArray(parts).toString('utf8') === `[${chosen.map((c) => c.text).join(',')}]`
    }
  ), { numRuns: 2000 })
  // the runs a batch read makes: every item, in the order kept, and the same items twice over
  const slabs = new ByteSlabs(1024, 64)
  const items = Array.from({ length: 30 }, (_, i) => `{"n":${i}}`)
  const handles = items.map((k) => keep(slabs, k))
  t.equal(slabs.jsonArray(handles).toString(), `[${items.join(',')}]`)
  t.equal(slabs.jsonArray([...handles, ...handles]).toString(), `[${[...items, ...items].join(',')}]`)
  t.equal(slabs.jsonArray([handles[3], handles[5], handles[4]]).toString(), `[${items[3]},${items[5]},${items[4]}]`)
})
