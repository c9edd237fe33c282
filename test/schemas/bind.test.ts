import t from 'tap'
import { Type } from '@sinclair/typebox'
import { bindPart, markEnumeration } from '../../src/schemas/bind.js'

// Array items that are numbers or booleans bind as themselves without the per-item work of the
// binder, unless the items are marked: a numbered enumeration binds a number to its member.
t.test('an array of a numbered enumeration binds each number to its member', async (t) => {
  const channel = markEnumeration(Type.Union([Type.Literal('Email'), Type.Literal('Phone')]), ['Email', 'Phone'], true)
  const warnings: string[] = []
  const bound = bindPart([1, 'email', 0, true], Type.Array(channel), 'body', warnings)
  t.same(bound.value, ['Phone', 'Email', 'Email', true], 'numbers by position, names in any case; anything else left for the validator')
  t.same(bound.faults, [])
  t.same(warnings, [])
})

t.test('an array of integers keeps its numbers and binds digits sent as text', async (t) => {
  const bound = bindPart([1001, '1002', true, 'x'], Type.Array(Type.Integer()), 'body', [])
  t.same(bound.value, [1001, 1002, true, 'x'], 'a string of digits becomes its number; the rest is the validator\'s to refuse')
  t.same(bound.faults, [])
})

// A name is matched in any case, so two casings of one name are one key given twice, whatever the
// first one's value: a null (bound as absent) counts as given, and the key spelled as the schema
// spells it is found as surely as any other casing.
t.test('a key given twice in two casings is caught after a null, and names the first casing', async (t) => {
  const schema = Type.Object({ refId: Type.String(), channel: Type.Optional(Type.String()) })
  const sameAfterNull = bindPart({ ChanNel: null, channel: null, refId: 'a' }, schema, 'body', [])
  t.same(sameAfterNull.faults, [], 'the same null twice is no fault')
  const warnings: string[] = []
  const differentAfterNull = bindPart({ ChanNel: null, channel: 'Email', refId: 'a' }, schema, 'body', warnings)
  t.same(differentAfterNull.faults, [{ pointer: '/channel', message: 'is given twice with different values (as ChanNel and channel); send it once' }])
  t.same(differentAfterNull.value, { refId: 'a' }, 'neither value binds')
  const exactFirst = bindPart({ refId: 'a', REFID: 'b' }, schema, 'body', [])
  t.same(exactFirst.faults, [{ pointer: '/refId', message: 'is given twice with different values (as refId and REFID); send it once' }])
  const queryWarnings: string[] = []
  const query = bindPart({ REFID: 'a', refId: 'b' }, schema, 'querystring', queryWarnings)
  t.same(query.value, { refId: 'a' }, 'a query binds the first')
  t.same(queryWarnings, ['query parameter refId repeats REFID: the first value binds, the others are ignored'])
})
