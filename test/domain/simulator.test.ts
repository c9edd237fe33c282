/**
 * The simulator's catch-up is bounded: a clock advance makes at most MAX_CHANGES_PER_ADVANCE
 * changes, spread over its period, and says how many it skipped; the changes are made in turns,
 * so other requests are answered while they are made (a day at 30 a minute once held the event
 * loop for 38 s, the schema's largest advance for good).
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { Clock } from '../../src/domain/clock.js'
import { MAX_CHANGES_PER_ADVANCE } from '../../src/domain/simulator.js'
import { AGENCY, build, type Teardown } from '../helpers/app.js'

const ctl = (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as object }) })

const START = Date.parse('2026-12-01T00:00:00Z')

async function simulated (t: Teardown, ratePerMinute: number) {
  const clock = new Clock()
  clock.set(START, true)
  const app = await build(t, { clock })
  const started = await ctl(app, 'POST', '/simulator', { ratePerMinute, seed: 5, agencies: [AGENCY.main], clockTime: true })
  if (started.statusCode !== 200) throw new Error(`the simulator did not start: ${started.body}`)
  return app
}

/** Starts an advance and waits until its first changes are made; `answered` tells whether it has been answered. */
async function advanceUnderWay (app: FastifyInstance, seconds: number) {
  const state = { answered: false }
  const answer = ctl(app, 'POST', '/clock/advance', { seconds }).then((res) => {
    state.answered = true
    return res
  })
  let changes = 0
  while (changes === 0 && !state.answered) {
    // an injected request may be answered without the event loop reaching its next turn: wait for one
    await new Promise((resolve) => setTimeout(resolve, 5))
    changes = (await ctl(app, 'GET', '/simulator')).json().changes
  }
  return { answer, state, changes }
}

t.test("[B: Simulator catch-up past its cap] a day's advance at the rate of docs/control-api.md: the clock moves a day, at most 10,000 changes are made and the rest are said to be skipped", async (t) => {
  const app = await simulated(t, 30)
  const { answer, state, changes } = await advanceUnderWay(app, 86_400)
  t.ok(changes > 0 && changes < MAX_CHANGES_PER_ADVANCE, `the simulator's status is read while the catch-up runs (${changes} changes so far)`)
  const health = await ctl(app, 'GET', '/health')
  t.equal(health.statusCode, 200)
  t.notOk(state.answered, 'health is answered while the changes are still being made')
  const res = await answer
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json(), { now: '2026-12-02T00:00:00.000Z', frozen: true, simulator: { changes: MAX_CHANGES_PER_ADVANCE, skipped: 43_200 - MAX_CHANGES_PER_ADVANCE } })
  t.equal((await ctl(app, 'GET', '/simulator')).json().changes, MAX_CHANGES_PER_ADVANCE)
  // the changes are spread over the whole day
  const changedLate = await app.inject({ url: `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=2026-12-01T23:00:00Z`, headers: { authorization: 'Basic YWJjOjEyMw==' } })
  t.ok(changedLate.json().length > 0, 'clients changed in the last hour of the day')
})

t.test('the largest advance the schema takes, at the highest rate, is answered', { timeout: 120_000 }, async (t) => {
  const app = await simulated(t, 60_000)
  const res = await ctl(app, 'POST', '/clock/advance', { seconds: 315_360_000 })
  t.equal(res.statusCode, 200, res.body)
  const { simulator, now } = res.json()
  t.equal(now, '2036-11-28T00:00:00.000Z')
  t.equal(simulator.changes, MAX_CHANGES_PER_ADVANCE)
  t.equal(simulator.skipped, 315_360_000 * 1000 - MAX_CHANGES_PER_ADVANCE, 'every change of ten years at 1,000 a second but the 10,000 made')
})

t.test('an advance within the cap makes every change of its period, as before', async (t) => {
  const app = await simulated(t, 30)
  const res = await ctl(app, 'POST', '/clock/advance', { seconds: 3600 })
  t.same(res.json().simulator, { changes: 1800, skipped: 0 })
  t.same((await ctl(app, 'POST', '/clock/advance', { seconds: 1 })).json().simulator, { changes: 0, skipped: 0 }, 'half a change is carried to the next advance')
  t.same((await ctl(app, 'POST', '/clock/advance', { seconds: 1 })).json().simulator, { changes: 1, skipped: 0 })
})

t.test('stopping the simulator, or a reset, during a catch-up answers the advance with the changes made so far', async (t) => {
  for (const stop of [{ method: 'DELETE', url: '/simulator' }, { method: 'POST', url: '/reset' }] as const) {
    const app = await simulated(t, 30)
    const { answer } = await advanceUnderWay(app, 86_400)
    t.equal((await ctl(app, stop.method, stop.url)).statusCode, 200)
    const { simulator } = (await answer).json()
    t.ok(simulator.changes < MAX_CHANGES_PER_ADVANCE, `${stop.method} ${stop.url}: ${simulator.changes} changes made`)
    t.equal(simulator.changes + simulator.skipped, 43_200, 'the rest are skipped')
  }
})

t.test('without a clock-time simulator the advance answers the clock alone', async (t) => {
  const app = await build(t)
  const res = await ctl(app, 'POST', '/clock/advance', { seconds: 60 })
  t.same(Object.keys(res.json()).sort(), ['frozen', 'now'])
})
