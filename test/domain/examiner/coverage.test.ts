import t from 'tap'
import { AGENCY, build } from '../../helpers/app.js'
import { reportOf, startSession, vendor } from '../../helpers/examiner.js'
import { operationsOf } from '../../../src/versions/operations.js'

t.test('coverage lists every operation of each version used, with the statuses seen, and what was never exercised', async (t) => {
  const app = await build(t)
  const { id } = await startSession(app)
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/client/1000?version=3.0`)
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/client/999999?Version=3.0`)
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/offices`)
  await vendor(app, 'GET', '/vendor/agencies?version=9.9')
  const { coverage } = await reportOf(app, id)
  const versions = [...new Set(coverage.operations.map((o) => o.version))]
  t.same(versions, ['4.0', '3.0', '1'], 'the versions used, not the unsupported one')
  for (const version of ['4.0', '3.0', '1'] as const) {
    t.same(coverage.operations.filter((o) => o.version === version).map((o) => o.operation), operationsOf(version), `every operation of ${version}, in table order`)
  }
  const outcomes = (version: string, operation: string) => coverage.operations.find((o) => o.version === version && o.operation === operation)?.outcomes
  t.same(outcomes('4.0', 'agencies'), { 200: 1 })
  t.same(outcomes('3.0', 'getClient'), { 200: 1, 404: 1 })
  t.same(outcomes('1', 'offices'), { 200: 1 })
  t.same(outcomes('4.0', 'createClient'), {})
  t.ok(coverage.notExercised.some((o) => o.version === '4.0' && o.operation === 'createClient'))
  t.notOk(coverage.notExercised.some((o) => o.version === '3.0' && o.operation === 'getClient'))
  t.equal(coverage.notExercised.length, coverage.operations.filter((o) => Object.keys(o.outcomes).length === 0).length)
  t.same(coverage.checklist.map((c) => [c.item, c.exercised]), [['202-handled', false], ['429-handled', false], ['403-handled', false]])
})
