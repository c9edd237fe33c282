import t from 'tap'
import { LIMITS, runScenario, SCENARIOS } from '../../bench/attack/hostile-upstream.js'

/**
 * The attack's hostile-upstream class, short form (bench/attack/hostile-upstream.ts; the full
 * run adds the 2 GiB bomb and four answers at the limit at once): `agency-sandbox import`, as a
 * child process bounded in time and memory, against a fake instance that answers one kind of
 * request with a gzip bomb, an endless or trickling body, Retry-After: 300, JSON nested 10,000
 * deep, escape sequences, or an object where an array is due. Each ends with one line naming
 * the request and the cause (exit 1) or a fixture that validates, peak RSS under 200 MB, no
 * stack trace, no files left unless the line offers to carry on, nothing raw on the terminal.
 */

for (const scenario of SCENARIOS.filter((s) => s.fullOnly !== true)) {
  t.test(`${scenario.name}: ${scenario.title}`, async (t) => {
    const { run, checks } = await runScenario(scenario)
    for (const [name, ok, detail] of checks) t.ok(ok, `${name}${ok ? '' : `: ${detail}`}`)
    t.comment(`peak RSS ${(run.peakKb / 1024).toFixed(0)} MB (the test kills it above ${LIMITS.killAboveKb / 1024} MB), exit ${run.code ?? run.signal}`)
  })
}
