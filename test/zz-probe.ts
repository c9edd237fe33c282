import t from 'tap'
import { DEMO, IDLE, build, demoFixture } from './helpers/app.js'

t.test('probe', async (t) => {
  const app = await build(t, { config: { logLevel: 'error' } as never })
  const auth = { authorization: DEMO }
  const show = async (name: string, o: Record<string, unknown>) => {
    const r = await app.inject(o as never)
    console.log(name, r.statusCode, r.headers['content-type'], r.body.slice(0, 300))
  }
  await show('Infinity', { url: '/vendor/agency/Infinity/users?version=4.0', headers: auth })
  await show('+1001', { url: '/vendor/agency/+1001/offices?version=4.0', headers: auth })
  const c2001 = demoFixture().agencies.find((a) => a.agencyId === 2001)!.clients[0].clientNumber
  for (const [name, cred] of [['idle', IDLE], ['demo', DEMO]]) {
    await show(`${name} v1 log +2001 existing client idx 99`, { method: 'POST', url: `/vendor/agency/+2001/client/${c2001}`, headers: { authorization: cred }, payload: { Action: 1, Body: 'b', Description: 'd', RefId: crypto.randomUUID(), TS: '2026-11-20T10:00:00Z', PolicyIndex: 99 } })
    await show(`${name} v1 log +2001 unknown client`, { method: 'POST', url: `/vendor/agency/+2001/client/99999`, headers: { authorization: cred }, payload: { Action: 1, Body: 'b', Description: 'd', RefId: crypto.randomUUID(), TS: '2026-11-20T10:00:00Z', PolicyIndex: 99 } })
    await show(`${name} v1 log 2001 plain`, { method: 'POST', url: `/vendor/agency/2001/client/${c2001}`, headers: { authorization: cred }, payload: { Action: 1, Body: 'b', Description: 'd', RefId: crypto.randomUUID(), TS: '2026-11-20T10:00:00Z', PolicyIndex: 99 } })
  }
})
