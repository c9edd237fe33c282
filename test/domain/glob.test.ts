import fc from 'fast-check'
import t from 'tap'
import { capPath, compileGlob, MAX_GLOB_LENGTH, MAX_MATCHED_PATH, PATH_CUT_MARKER } from '../../src/domain/glob.js'

t.test('path globs: * within a segment, ** across, ? one character, no backtracking', async (t) => {
  const cases: [string, string, boolean][] = [
    ['/vendor/agencies', '/vendor/agencies', true],
    ['/vendor/agencies', '/vendor/agencies/x', false],
    ['/vendor/agency/*/client', '/vendor/agency/1001/client', true],
    ['/vendor/agency/*/client', '/vendor/agency/1001/x/client', false],
    ['/vendor/agency/*/client/*', '/vendor/agency/1001/client/1000', true],
    ['/vendor/agency/*/client/*', '/vendor/agency/1001/client/1000/log', false],
    ['/vendor/**', '/vendor/agency/1001/client/1000/log', true],
    ['**/log', '/vendor/agency/1001/client/1000/log', true],
    ['/vendor/agency/100?/offices', '/vendor/agency/1001/offices', true],
    ['/vendor/agency/100?/offices', '/vendor/agency/10012/offices', false],
    ['*', '', true],
    ['', '', true],
    ['', 'x', false],
    ['/v*r/**/c*t', '/vendor/agency/1/client', true]
  ]
  for (const [glob, text, expected] of cases) t.equal(compileGlob(glob)(text), expected, `${glob} ~ ${text}`)
  // Globs that make a regular expression backtrack for hours answer here in one linear pass.
  t.equal(compileGlob('*'.repeat(500) + 'x')('/'.repeat(5000) + 'y'), false)
  t.equal(compileGlob('**a'.repeat(150) + 'b')('a'.repeat(8000)), false)
})

/**
 * The reference: a glob as a regular expression, matched on code units (no `u` flag), as the
 * automaton does. Only for short inputs: a regular expression backtracks on long ones.
 */
function referenceMatch (glob: string, text: string): boolean {
  const source = glob.replace(/\*{2,}|\*|\?|[^*?]/g, (part) =>
    part.startsWith('**') ? '[\\s\\S]*' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[\\^$.|+()[\]{}-]/g, '\\$&'))
  return new RegExp(`^(?:${source})$`).test(text)
}

t.test('globs agree with a reference matcher (property test on short globs and paths)', async (t) => {
  // A small alphabet, so that globs and paths often overlap; one character outside Latin-1 and
  // one astral character (two code units) as well.
  const alphabet = fc.constantFrom('a', 'b', '/', '.', '-', 'é', '中', '\u{1F600}')
  const globPart = fc.oneof(alphabet, fc.constantFrom('*', '**', '?', '***'))
  const globs = fc.array(globPart, { maxLength: 14 }).map((parts) => parts.join(''))
  const paths = fc.array(alphabet, { maxLength: 24 }).map((parts) => parts.join(''))
  fc.assert(fc.property(globs, paths, (glob, path) => compileGlob(glob)(path) === referenceMatch(glob, path)), { numRuns: 20_000 })
  // Globs long enough to span several 32-bit words of the automaton, on paths that they match
  // when the stars take the right lengths.
  const long = fc.array(fc.constantFrom('a', 'b', '/', '*', '?', '**'), { minLength: 30, maxLength: 90 }).map((p) => p.join(''))
  fc.assert(fc.property(long, fc.array(fc.constantFrom('a', 'b', '/'), { maxLength: 40 }), (glob, extra) => {
    const literal = glob.replace(/\*+/g, '').replace(/\?/g, 'a')
    for (const path of [literal, literal + extra.join(''), extra.join('') + literal]) {
      if (compileGlob(glob)(path) !== referenceMatch(glob, path)) return false
    }
    return true
  }), { numRuns: 3_000 })
  t.pass('no counterexample')
})

t.test('a maximum-length pathological glob over maximum-length paths is correct (the automaton at full width)', async (t) => {
  // `*a*a…*ab` keeps almost every state alive on a path of a's: the worst case for the automaton.
  const glob = '*a'.repeat((MAX_GLOB_LENGTH - 1) / 2 | 0) + 'b'
  t.ok(glob.length <= MAX_GLOB_LENGTH)
  const match = compileGlob(glob)
  const path = capPath('a'.repeat(MAX_MATCHED_PATH * 4))
  t.equal(path.length, MAX_MATCHED_PATH + PATH_CUT_MARKER.length)
  t.equal(match(path), false, 'no b: no match')
  t.equal(match('a'.repeat(MAX_MATCHED_PATH - 1) + 'b'), true, 'enough a’s and a b: a match')
  t.equal(match('a'.repeat(126) + 'b'), false, 'one a too few: no match')
  t.equal(match('a'.repeat(127) + 'b'), true, 'exactly as many a’s as the glob names: a match')
  t.equal(match('a'.repeat(127) + '/b'), false, '* stays within a segment')
  t.equal(compileGlob('**a'.repeat(85))('a'.repeat(85) + '/' + 'b'.repeat(MAX_MATCHED_PATH - 86)), false)
  t.equal(compileGlob('**a'.repeat(85))('a'.repeat(84) + '/' + 'b'.repeat(MAX_MATCHED_PATH - 86) + 'a'), true)
})

t.test('paths are capped with a marker before they are recorded or matched', async (t) => {
  t.equal(capPath('/vendor/agencies'), '/vendor/agencies')
  const exact = '/'.repeat(MAX_MATCHED_PATH)
  t.equal(capPath(exact), exact)
  const cut = capPath('/vendor/' + 'x'.repeat(10_000))
  t.equal(cut.length, MAX_MATCHED_PATH + 1)
  t.ok(cut.endsWith('x' + PATH_CUT_MARKER))
})
