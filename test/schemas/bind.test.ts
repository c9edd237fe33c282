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
