import t from 'tap'
import { ByteSlabs } from '../../src/read-model/byte-slabs.js'

const keep = (slabs: ByteSlabs, text: string) => slabs.keep(text, Buffer.byteLength(text, 'utf8'))
const read = (slabs: ByteSlabs, handle: number) => {
  const out = Buffer.alloc(slabs.size(handle))
  slabs.copy(handle, out, 0)
  return out.toString('utf8')
}

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
