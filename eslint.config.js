import globals from 'globals'
import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'

// neostandard: the Fastify ecosystem's style (no semicolons, single quotes, two spaces), with
// TypeScript rules; its stylistic rules make `eslint --fix` the formatter too.
export default [
  ...neostandard({
    ts: true,
    ignores: [...resolveIgnoresFromGitignore(), 'dist/**', 'coverage/**', '.tap/**']
  }),
  {
    rules: {
      // `void promise` marks a promise deliberately not awaited (a callback hook that must not return it).
      'no-void': ['error', { allowAsStatement: true }],
      // faker's locale modules are named after their locale (en_US).
      camelcase: ['error', { allow: ['^en_US$'] }]
    }
  },
  // The web console runs in the browser (plain ES modules, no build step).
  { files: ['public/**/*.js'], languageOptions: { globals: globals.browser } }
]
