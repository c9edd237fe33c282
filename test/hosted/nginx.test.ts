/**
 * The nginx recipe (hosted/nginx.conf), run by Debian's nginx in front of two instances: it routes
 * by world, so all of a world's requests, a partner's (by the Basic user name's world) and the
 * control plane's (by the path's world), reach one instance, which took the world on its first
 * request: none of them is forwarded.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { hostedInstances, sleep, withoutPostgres } from '../helpers/hosted.js'

const NGINX = '/usr/sbin/nginx'

t.setTimeout(180_000)

const freePort = async () => await new Promise<number>((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number }
    server.close(() => resolve(port))
  })
})

t.test('nginx routes each world to one instance', { timeout: 150_000, skip: withoutPostgres || (existsSync(NGINX) ? false : 'nginx is not installed') }, async (t) => {
  const cluster = hostedInstances(t)
  await cluster.ready()
  const [a, b] = await Promise.all([cluster.start(), cluster.start()])
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-nginx-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const port = await freePort()
  // the recipe as it is, its servers and port this test's; nginx in the foreground, one process, its files here
  const recipe = readFileSync(join(ROOT, 'hosted', 'nginx.conf'), 'utf8')
    .replace('server sandbox-a:8080', `server ${new URL(a.url).host}`)
    .replace('server sandbox-b:8080', `server ${new URL(b.url).host}`)
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replace('http {', `http {\n  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`)
  t.not(recipe, readFileSync(join(ROOT, 'hosted', 'nginx.conf'), 'utf8'), 'the recipe names the servers this test replaces')
  writeFileSync(join(dir, 'nginx.conf'), `daemon off;\nmaster_process off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\n${recipe}`)
  const nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' })
  t.teardown(() => { nginx.kill('SIGKILL') })
  const front = `http://127.0.0.1:${port}`
  for (let i = 0; i < 50; i++) {
    if ((await fetch(`${front}/_sandbox/health`).catch(() => undefined))?.status === 200) break
    await sleep(100)
  }

  const worlds: Array<{ id: string, integrations: Array<{ clientId: string, clientSecret: string }> }> = []
  for (let i = 0; i < 6; i++) {
    const created = await fetch(`${front}/_sandbox/worlds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    t.equal(created.status, 201, 'a world created through nginx', { diagnostic: false })
    worlds.push(await created.json() as typeof worlds[number])
  }
  const answered = new Map<string, number>()
  for (const world of [...worlds, { id: 'default', integrations: [{ clientId: 'abc', clientSecret: '123' }] }]) {
    const { clientId, clientSecret } = world.integrations[0]
    const basic = { authorization: 'Basic ' + Buffer.from(`${clientId}:${clientSecret}`).toString('base64') }
    const control = world.id === 'default' ? '/_sandbox' : `/_sandbox/worlds/${world.id}`
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, async () => await fetch(`${front}/vendor/agencies?version=4.0`, { headers: basic })),
      fetch(`${front}/vendor/agency/1001/client/1001?version=4.0`, { headers: basic }),
      fetch(`${front}${control}/clock`),
      fetch(`${front}${control}/requests`),
      fetch(`${front}${control}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: { path: '/vendor/agency/9999/**' }, effect: { status: 503 } }) })
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
