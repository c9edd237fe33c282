import t from 'tap'
import { hoistNamedSchemas } from '../../src/plugins/openapi-components.js'
import { build, DEMO } from '../helpers/app.js'

const address = { title: 'Address', type: 'object', properties: { city: { type: 'string' } } }
const person = { title: 'Person', type: 'object', properties: { title: { type: 'string' }, home: address } }

const documentOf = (body: unknown, answer: unknown) => ({
  openapi: '3.1.0',
  info: { title: 'a title that is not a schema', version: '1' },
  components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
  paths: {
    '/people': {
      post: {
        parameters: [{ name: 'q', in: 'query', schema: { type: 'string' } }],
        requestBody: { content: { 'application/json': { schema: body } } },
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: answer } } } }
      }
    }
  }
})

t.test('titled schemas become components referenced where they were used, nested ones too', async (t) => {
  const doc = hoistNamedSchemas(documentOf(person, { type: 'array', items: person }), '4.0')
  const op = doc.paths['/people'].post
  t.same(op.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/Person' })
  t.same(op.responses[200].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/Person' } })
  const schemas = (doc.components as unknown as { schemas: Record<string, unknown> }).schemas
  t.same(Object.keys(schemas), ['Address', 'Person'], 'each once, sorted by name')
  t.same(schemas.Person, { ...person, properties: { title: { type: 'string' }, home: { $ref: '#/components/schemas/Address' } } },
    'a property named title is a property, not a name')
  t.same((doc.components as { securitySchemes: unknown }).securitySchemes, { basic: { type: 'http', scheme: 'basic' } }, 'other components stay')
  t.equal(doc.info.title, 'a title that is not a schema')
})

t.test('two different schemas under one title stop the document instead of one taking the other\'s name', async (t) => {
  const other = { ...address, properties: { zip: { type: 'string' } } }
  t.throws(() => hoistNamedSchemas(documentOf(person, other), '3.0'), /two different schemas are titled 'Address' in the 3\.0 document/)
})

t.test('the receipts route still validates each receipt on its own: the document describes more than the route checks', async (t) => {
  const app = await build(t)
  const doc = (await app.inject({ url: '/openapi/4.0.json' })).json()
  t.same(doc.paths['/vendor/agency/{agencyId}/client/{clientId}/receipts'].post.requestBody.content['application/json'].schema.items,
    { $ref: '#/components/schemas/Receipt' })
  const receipt = { refId: '0f8fad5b-d9cb-469f-a165-70867728950e', ts: '2026-10-01T10:00:00Z', channel: 29, logNote: 'paid', total: 12.5 }
  const res = await app.inject({
    method: 'POST',
    url: '/vendor/agency/1001/client/1000/receipts?version=4.0',
    headers: { authorization: DEMO },
    payload: [receipt, { ...receipt, refId: '7c9e6679-7425-40de-944b-e07fc1f90ae7', total: undefined }, 'not a receipt']
  })
  t.equal(res.statusCode, 200, res.body)
  t.match(res.json(), [{ code: 200 }, { code: 400, message: /Total is required/ }, { code: 400 }])
})
