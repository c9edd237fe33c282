import t from 'tap'
import { AjvCompiler } from '@fastify/ajv-compiler'
import { lazyValidatorFactory, listValidatorsMade, validatorsReady, VALIDATOR_OPTIONS, type ValidatorUse } from '../../src/plugins/lazy-validators.js'
import { loadPrecompiled, validatorKey } from '../../src/plugins/precompiled-validators.js'
import { ClientCreateRequestSchema } from '../../src/schemas/writes.js'
import { AGENCY, DEMO, build } from '../helpers/app.js'

type Validate = ((data: unknown) => boolean) & { errors?: unknown }

t.test('the build precompiled every validator the app makes (npm test builds first)', async (t) => {
  const made: ValidatorUse[] = []
  listValidatorsMade(made)
  try {
    await build(t)
  } finally {
    listValidatorsMade(undefined)
  }
  t.ok(made.length > 50, `${made.length} route parts validated`)
  const missing = made.filter((m) => loadPrecompiled(validatorKey(m.customOptions, m.route)) === undefined)
  t.same(missing.map((m) => `${m.route.method} ${m.route.url} ${m.route.httpPart}`), [], 'none is left to compile on first use')
})

t.test('a precompiled validator answers exactly as Ajv compiling the schema on the spot', async (t) => {
  const customOptions = { ...VALIDATOR_OPTIONS, coerceTypes: false }
  const route = { schema: ClientCreateRequestSchema, method: 'POST', url: '/vendor/agency/:agencyId/client', httpPart: 'body' }
  const precompiled = loadPrecompiled(validatorKey(customOptions, route))
  t.type(precompiled, 'function')
  const compiled = (AjvCompiler() as unknown as (e: unknown, o: unknown) => (r: unknown) => Validate)({}, { customOptions })(route)
  const bodies: unknown[] = [
    {},
    { Bogus: 1 },
    { Type: 'Personal', People: [{ FirstName: 7, DateOfBirth: 'soon' }], Contacts: 'none' },
    { Type: 'Commercial', BusinessDetail: { CompanyName: '' }, Policy: { LOBs: 'AUTOP' }, Log: [] }
  ]
  for (const body of bodies) {
    const [a, b] = [structuredClone(body), structuredClone(body)]
    t.equal(precompiled!(a), compiled(b), `${JSON.stringify(body)}: same verdict`)
    t.same(JSON.parse(JSON.stringify(precompiled!.errors ?? null)), JSON.parse(JSON.stringify(compiled.errors ?? null)), 'the same errors, in the same order')
    t.same(a, b, 'the same defaults and removals')
  }
})

t.test('a validator is used only for the very schema and options it was made from', async (t) => {
  const route = { schema: ClientCreateRequestSchema, httpPart: 'body' }
  const key = validatorKey({ ...VALIDATOR_OPTIONS, coerceTypes: false }, route)
  t.not(validatorKey(VALIDATOR_OPTIONS, route), key, 'other options: another key')
  t.not(validatorKey({ ...VALIDATOR_OPTIONS, coerceTypes: false }, { ...route, httpPart: 'querystring' }), key, 'another part: another key')
  const changed = { ...ClientCreateRequestSchema, required: [] }
  t.equal(loadPrecompiled(validatorKey({ ...VALIDATOR_OPTIONS, coerceTypes: false }, { schema: changed, httpPart: 'body' })), undefined, 'a changed schema finds no file (compiled on first use instead)')
})

t.test('first requests of every kind load their validators instead of compiling them', async (t) => {
  const app = await build(t)
  const before = { ...validatorsReady }
  const json = { authorization: DEMO, 'content-type': 'application/json' }
  const created = await app.inject({ method: 'POST', url: `/vendor/agency/${AGENCY.main}/client?version=4.0`, headers: json, payload: { Bogus: 1 } })
  t.equal(created.statusCode, 400)
  const read = await app.inject({ url: `/vendor/agency/${AGENCY.main}/client/1000?version=3.0&include=Policies`, headers: { authorization: DEMO } })
  t.equal(read.statusCode, 200)
  const control = await app.inject({ method: 'PUT', url: '/_sandbox/clock', payload: { now: '2027-01-01T00:00:00Z', frozen: true } })
  t.equal(control.statusCode, 200)
  t.ok(validatorsReady.loaded > before.loaded, `${validatorsReady.loaded - before.loaded} validators loaded`)
  t.equal(validatorsReady.compiled, before.compiled, 'none compiled on the spot')
})

t.test('a schema the build did not precompile is compiled by Ajv on its first use, and validates as Ajv does', async (t) => {
  type Factory = (externalSchemas: unknown, options: unknown) => (route: unknown) => Validate
  const make = (lazyValidatorFactory() as Factory)({}, { customOptions: VALIDATOR_OPTIONS })
  const schema = { type: 'object', properties: { Note: { type: 'string', maxLength: 3 } }, required: ['Note'] }
  const before = { ...validatorsReady }
  const validate = make({ schema, method: 'POST', url: '/not-precompiled', httpPart: 'body' })
  t.equal(validatorsReady.compiled, before.compiled, 'nothing compiled until the first request')
  t.equal(validate({ Note: 'abc' }), true)
  t.equal(validate({ Note: 'abcd' }), false)
  t.match(validate.errors, [{ instancePath: '/Note', keyword: 'maxLength' }], 'Ajv\'s errors, read off the function Fastify holds')
  t.equal(validatorsReady.compiled, before.compiled + 1, 'compiled once, on its first use')
})
