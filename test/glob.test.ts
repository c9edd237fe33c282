import t from 'tap'
import { compileGlob } from '../src/domain/journal.js'

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
  // Globs that make a regular expression backtrack for hours answer here in one linear pass per token.
  t.equal(compileGlob('*'.repeat(500) + 'x')('/'.repeat(5000) + 'y'), false)
  t.equal(compileGlob('**a'.repeat(150) + 'b')('a'.repeat(8000)), false)
})
