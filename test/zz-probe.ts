import t from 'tap'
import { DEMO, build } from './helpers/app.js'

t.test('probe', async (t) => {
  const app = await build(t, { config: { logLevel: 'error' } as never })
  const show = async (name: string, o: Record<string, unknown>) => {
    const r = await app.inject(o as never)
    console.log(name, r.statusCode, r.headers['content-type'], r.body.slice(0, 300))
  }
  for (const body of ['"42"', '42', 'true', 'null', '"x"', '[]', '{}']) {
    await show(`receipts ${body}`, { method: 'POST', url: '/vendor/agency/1002/client/1000/receipts?version=3.0', headers: { authorization: DEMO, 'content-type': 'application/json' }, payload: body })
  }
  for (const body of ['"42"', '42', 'null']) {
    await show(`batch v1 ${body}`, { method: 'POST', url: '/vendor/agency/1001/clients', headers: { authorization: DEMO, 'content-type': 'application/json' }, payload: body })
    await show(`batch v4 ${body}`, { method: 'POST', url: '/vendor/agency/1001/clients?version=4.0', headers: { authorization: DEMO, 'content-type': 'application/json' }, payload: body })
  }
})
