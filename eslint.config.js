import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'

// neostandard: the Fastify ecosystem's style (no semicolons, single quotes, two spaces), with
// TypeScript rules; its stylistic rules make `eslint --fix` the formatter too.
export default [
  ...neostandard({
    ts: true,
    ignores: [...resolveIgnoresFromGitignore(), 'dist/**', 'coverage/**', '.tap/**']
  })
]
