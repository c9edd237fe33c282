import t from 'tap'
import canonicalize from 'canonicalize'
import fc from 'fast-check'
import { canonicalJson, canonicalJsonInTurns, NotCanonicalizable } from '../../../src/domain/examiner/canonical-json.js'

/**
 * The canonical JSON reports are signed in is RFC 8785: the same text as the `canonicalize`
 * package (its authors' reference implementation) for any JSON value, written at once or in turns.
 */

const both = (value: unknown) => {
  let reference: string | Error
  try {
    reference = canonicalize(value)!
  } catch (e) {
    reference = e as Error
  }
  let ours: string | Error
  try {
    ours = canonicalJson(value)
  } catch (e) {
    ours = e as Error
  }
  return { reference, ours }
}

t.test('RFC 8785\'s own cases: member order by UTF-16 code units, numbers in their shortest form, string escapes', async (t) => {
  // the sorting example of RFC 8785 section 3.2.3, and numbers of its appendix B
  const sorting = Object.fromEntries([
    ['\u20ac', 'Euro Sign'], ['\r', 'Carriage Return'], ['\ufb33', 'Hebrew Letter Dalet With Dagesh'], ['1', 'One'],
    ['\ud83d\ude00', 'Emoji: Grinning Face'], ['\u0080', 'Control'], ['\u00f6', 'Latin Small Letter O With Diaeresis']
  ])
  t.equal(canonicalJson(sorting), canonicalize(sorting))
  t.match(canonicalJson(sorting), /^\{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":.*"\u20ac":"Euro Sign","\ud83d\ude00":.*"\ufb33":/)
  const numbers = [0, -0, 1e21, 1e-7, 333333333.3333333, 9007199254740992, 5e-324, -1.7976931348623157e308, 295147905179352830000, 1e23]
  t.equal(canonicalJson(numbers), '[0,0,1e+21,1e-7,333333333.3333333,9007199254740992,5e-324,-1.7976931348623157e+308,295147905179352830000,1e+23]')
  const strings = { s: '\u0000\u001f\b\t\n\f\r"\\/\u007f\u2028\u00e9' }
  t.equal(canonicalJson(strings), canonicalize(strings))
  t.equal(canonicalJson({ b: [true, false, null, [], {}], a: { d: 1, c: undefined } }), '{"a":{"d":1},"b":[true,false,null,[],{}]}', 'an undefined member is left out, as JSON.stringify does')
})

t.test('what the scheme refuses is refused: lone surrogates, numbers that are not finite, what JSON cannot hold', async (t) => {
  for (const value of [`a${String.fromCharCode(0xd800)}`, { [String.fromCharCode(0xdc00)]: 1 }, [Number.NaN], { n: Number.POSITIVE_INFINITY }, [1, () => 1], { s: Symbol('s') }]) {
    t.throws(() => canonicalJson(value), NotCanonicalizable)
  }
})

t.test('any JSON value: the same text as the reference implementation, at once and in turns', async (t) => {
  const differences: string[] = []
  await fc.assert(fc.asyncProperty(fc.jsonValue(), async (value) => {
    const { reference, ours } = both(value)
    const inTurns = typeof reference === 'string' ? await canonicalJsonInTurns(value, 3) : undefined
    const agrees = typeof reference === 'string' ? ours === reference && inTurns === reference : ours instanceof NotCanonicalizable
    if (!agrees) differences.push(`${JSON.stringify(value)}: ${String(reference)} / ${String(ours)} / ${inTurns}`)
    return agrees
  }), { numRuns: 500 })
  t.same(differences, [])
})
