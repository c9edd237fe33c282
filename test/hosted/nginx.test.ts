/**
 * The nginx recipe (hosted/nginx.conf), run by Debian's nginx in front of two instances: it routes
 * by world, so all of a world's requests, a partner's (by the Basic user name's world) and the
 * control plane's (by the path's world), reach one instance, which took the world on its first
 * request: none of them is forwarded.
 */
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { NGINX, startNginxFront } from '../../scripts/nginx-front.js'
import { hostedInstances, withoutPostgres } from '../helpers/hosted.js'

t.setTimeout(180_000)

t.test('nginx routes each world to one instance', { timeout: 150_000, skip: withoutPostgres || (existsSync(NGINX) ? false : 'nginx is not installed') }, async (t) => {
  const cluster = hostedInstances(t)
  await cluster.ready()
  const [a, b] = await Promise.all([cluster.start(), cluster.start()])
  const front = await startNginxFront(a.url, b.url)
  t.teardown(() => front.stop())
  t.not(front.recipe, readFileSync(join(ROOT, 'hosted', 'nginx.conf'), 'utf8'), 'the recipe names the servers this test replaces')

  const worlds: Array<{ id: string, integrations: Array<{ clientId: string, clientSecret: string }> }> = []
  for (let i = 0; i < 6; i++) {
    const created = await fetch(`${front.origin}/_sandbox/worlds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    t.equal(created.status, 201, 'a world created through nginx', { diagnostic: false })
    worlds.push(await created.json() as typeof worlds[number])
  }
  const answered = new Map<string, number>()
  for (const world of [...worlds, { id: 'default', integrations: [{ clientId: 'abc', clientSecret: '123' }] }]) {
    const { clientId, clientSecret } = world.integrations[0]
    const basic = { authorization: 'Basic ' + Buffer.from(`${clientId}:${clientSecret}`).toString('base64') }
    const control = world.id === 'default' ? '/_sandbox' : `/_sandbox/worlds/${world.id}`
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, async () => await fetch(`${front.origin}/vendor/agencies?version=4.0`, { headers: basic })),
      fetch(`${front.origin}/vendor/agency/1001/client/1001?version=4.0`, { headers: basic }),
      fetch(`${front.origin}${control}/clock`),
      fetch(`${front.origin}${control}/requests`),
      fetch(`${front.origin}${control}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: { path: '/vendor/agency/9999/**' }, effect: { status: 503 } }) })
    ])
    t.same(answers.map((answer) => answer.status), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201], `world ${world.id}: answered`)
    const instances = new Set(answers.map((answer) => answer.headers.get('x-sandbox-instance')))
    t.equal(instances.size, 1, `world ${world.id}: every answer from one instance`)
    t.same(answers.filter((answer) => answer.headers.has('x-sandbox-forwarded-by')).length, 0, `world ${world.id}: none forwarded`)
    const instance = [...instances][0] ?? ''
    answered.set(instance, (answered.get(instance) ?? 0) + 1)
  }
  t.comment(`worlds per instance: ${[...answered.values()].join(', ')}`)
  const first = { authorization: 'Basic ' + Buffer.from(`${worlds[0].integrations[0].clientId}:${worlds[0].integrations[0].clientSecret}`).toString('base64') }
  const [viaA, viaB] = await Promise.all([a, b].map(async (served) => await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: first })))
  t.equal(viaA.headers.get('x-sandbox-instance'), viaB.headers.get('x-sandbox-instance'), 'sent to either instance directly, a world is answered by its owner')
  t.ok(viaA.headers.has('x-sandbox-forwarded-by') !== viaB.headers.has('x-sandbox-forwarded-by'), 'through the other, the answer says it was forwarded')
})
