import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { CLOCK_MAX_MS, CLOCK_MIN_MS, CLOCK_RANGE } from '../../src/domain/clock.js'
import { parseTimestamp } from '../../src/time.js'
import { badRequest, invalidField, notFound } from '../../src/errors.js'
import {
  ClockAdvanceBody, ClockAdvancedSchema, ClockPutBody, ClockSchema, ClockSetSchema, FaultIdParams, FaultInputBody, RequestsQuery, SimulatorBody
} from '../../src/schemas/control.js'
import type { ControlOptions } from './options.js'

/** The clock, the request journal and fault rules. */
export default async function timeAndTraffic (fastify: FastifyInstance, _options: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get('/clock', { schema: { summary: 'The sandbox clock', response: { 200: ClockSchema } } }, (request) => request.world.clock.state())

  app.put('/clock', {
    schema: { summary: 'Set the clock to any time, forwards or back, freeze or unfreeze it', body: ClockPutBody, response: { 200: ClockSetSchema } }
  }, (request) => {
    const { clock } = request.world
    const { now, frozen } = request.body
    let target = clock.nowMs()
    if (now !== undefined) {
      const ms = parseTimestamp(now)
      if (ms === null) throw invalidField('now', `'${now}' is not an ISO 8601 date-time such as 2026-11-22T09:00:00Z`)
      if (ms < CLOCK_MIN_MS || ms > CLOCK_MAX_MS) throw invalidField('now', `'${now}' is outside the clock's range, ${CLOCK_RANGE} (years 1 to 9999)`)
      target = ms
    }
    // Any time is allowed (a test returns to the present in one call); the answer says when it went back.
    const before = clock.nowMs()
    clock.set(target, frozen ?? clock.state().frozen)
    return { ...clock.state(), ...(clock.nowMs() < before ? { movedBackwards: true } : {}) }
  })

  app.delete('/clock', {
    schema: { summary: 'Back to real time, running', response: { 200: ClockSchema } }
  }, (request) => {
    const { clock } = request.world
    clock.reset()
    return clock.state()
  })

  app.post('/clock/advance', {
    schema: {
      summary: 'Move the clock forward; a clock-time simulator makes the changes of that period (at most 10,000, spread over it) before the answer',
      body: ClockAdvanceBody,
      response: { 200: ClockAdvancedSchema }
    }
  }, async (request) => {
    const { clock, simulator } = request.world
    const from = clock.nowMs()
    const ms = Math.round(request.body.seconds * 1000)
    if (from + ms > CLOCK_MAX_MS) {
      throw invalidField('seconds', `would move the clock past 9999-12-31T23:59:59.999Z, the end of its range (${CLOCK_RANGE}); ` +
        `at most ${Math.floor((CLOCK_MAX_MS - from) / 1000)} seconds from ${new Date(from).toISOString()}`)
    }
    clock.advance(ms)
    const made = await simulator.onAdvance(from, clock.nowMs())
    return made === undefined ? clock.state() : { ...clock.state(), simulator: made }
  })

  app.post('/simulator', {
    schema: { summary: 'Start the agency activity simulator (replaces a running one)', body: SimulatorBody }
  }, async (request) => request.world.simulator.start(request.body))

  app.get('/simulator', { schema: { summary: 'Simulator status and the changes it made' } }, (request) => request.world.simulator.status())

  app.delete('/simulator', { schema: { summary: 'Stop the simulator' } }, (request) => request.world.simulator.stop())

  app.get('/requests', {
    schema: { summary: 'The request journal, oldest first (limit keeps the newest)', querystring: RequestsQuery }
  }, async (request, reply) => {
    const { journal } = request.world
    const entries = await journal.listJson(request.query)
    return reply.header('x-journal-capacity', String(journal.capacity)).header('x-journal-bytes', `${journal.bytes}/${journal.budgetBytes}`)
      .type('application/json; charset=utf-8').send(entries)
  })

  app.delete('/requests', { schema: { summary: 'Clear the request journal (its entries and their memory)' } }, async (request, reply) => {
    await request.world.journal.clear()
    return reply.code(204).send()
  })

  app.post('/faults', { schema: { summary: 'Add a fault rule', body: FaultInputBody } }, (request, reply) => {
    const { effect } = request.body
    if (effect.status === undefined && effect.delayMs === undefined && effect.drop !== true && effect.dropAnswer !== true) {
      throw badRequest('effect: give a status, a delayMs, drop: true or dropAnswer: true', [{ field: 'effect', message: 'needs status, delayMs, drop or dropAnswer' }])
    }
    if (effect.drop === true && effect.status !== undefined) {
      throw badRequest('effect: drop closes the connection, so it cannot also answer a status', [{ field: 'effect.drop', message: 'cannot be combined with status' }])
    }
    if (effect.dropAnswer === true) {
      // the request's own answer is the one dropped: nothing else can be answered or dropped earlier
      const other = (['status', 'body', 'headers', 'drop'] as const).find((key) => effect[key] !== undefined && effect[key] !== false)
      if (other !== undefined) {
        throw badRequest(`effect: dropAnswer lets the request be handled and drops its own answer, so it cannot be combined with ${other}`, [
          { field: 'effect.dropAnswer', message: `cannot be combined with ${other}; delayMs is the only effect it takes` }
        ])
      }
    }
    reply.code(201).send(request.world.faults.add(request.body))
  })

  app.get('/faults', { schema: { summary: 'Fault rules with their match and hit counts' } }, (request) => request.world.faults.list())

  app.delete('/faults', { schema: { summary: 'Remove every fault rule' } }, (request, reply) => {
    request.world.faults.clear()
    reply.code(204).send()
  })

  app.delete('/faults/:id', { schema: { summary: 'Remove a fault rule', params: FaultIdParams } }, (request, reply) => {
    if (!request.world.faults.remove(request.params.id)) throw notFound(`No fault rule ${request.params.id}`)
    reply.code(204).send()
  })
}
