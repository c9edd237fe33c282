import t from 'tap'
import { runScenario, type Scenario } from '../../bench/attack/hostile-upstream.js'
import { kindOf, sendJson, world, worldAnswer } from '../../bench/attack/fake-upstream.js'

/**
 * What an upstream answers that the fixture cannot hold is left out and said (one summary line
 * per kind, with its count), never written: the fixture written always passes validate, the
 * same check serve makes. What cannot be left out stops the import before anything is written.
 * Values whose conversion would run the answer's own keys (`valueOf`, `toString`) do not crash
 * it. (Agencies listed twice, `__proto__` keys, nesting and answers of the wrong shape:
 * hostile-upstream.test.ts.)
 */

const judge = async (t: { ok(value: unknown, message: string): unknown }, scenario: Scenario) => {
  const { run, checks } = await runScenario(scenario)
  for (const [name, ok, detail] of checks) t.ok(ok, `${name}${ok ? '' : `: ${detail}`}`)
  return run
}

/** An object no conversion to a number or a string survives. */
const UNCONVERTIBLE = { valueOf: 1, toString: 1 }

t.test('offices and users listed twice, a client listed live and deleted: the first kept, each kind counted', async (t) => {
  const run = await judge(t, {
    name: 'listed-twice',
    title: '',
    outcome: 'written',
    answer: (a, res) => {
      const kind = kindOf(a)
      if (kind === 'offices') return (sendJson(res, 200, [...world.offices(), world.offices()[1]]), true)
      if (kind === 'users') return (sendJson(res, 200, [...world.users(), world.users()[0], world.users()[1]]), true)
      if (kind === 'deleted') return (sendJson(res, 200, [world.liveIds()[0]]), true)
      return false
    }
  })
  t.match(run.stdout, 'offices listed more than once: 1 left out')
  t.match(run.stdout, 'users listed more than once: 2 left out')
  t.match(run.stdout, 'clients listed both live and deleted: 1 left out')
  t.match(run.stdout, '10 clients and 0 deleted clients')
})

t.test('values that run their own keys when converted: left out or written as JSON, no crash', async (t) => {
  const run = await judge(t, {
    name: 'unconvertible',
    title: '',
    outcome: 'written',
    answer: (a, res) => {
      const kind = kindOf(a)
      if (kind === 'ids') return (sendJson(res, 200, [...world.liveIds(), UNCONVERTIBLE]), true)
      if (kind === 'offices') return (sendJson(res, 200, world.offices().map((o, i) => (i === 1 ? { ...o, city: UNCONVERTIBLE } : o))), true)
      if (kind === 'batch') return (sendJson(res, 200, [...(worldAnswer(a).body as unknown[]), { clientNumber: UNCONVERTIBLE }]), true)
      return false
    }
  })
  t.match(run.stdout, 'listed client numbers that are no id: 1 left out')
  t.match(run.stderr, 'city {"valueOf":1,"toString":1} written as a string')
})

t.test('what no leaving out can fix stops the import before anything is written: a secret the fixture refuses', async (t) => {
  const run = await judge(t, {
    name: 'secret-too-long',
    title: '',
    outcome: 'fails',
    args: ['--keep-secret', '--client-secret', 's'.repeat(201)],
    answer: () => false,
    // no request is at fault: the line names the field instead
    namesRequest: false
  })
  t.match(run.stderr, /^import: stopped: the fixture would not validate: integrations\[0\]\.clientSecret: /m)
})
