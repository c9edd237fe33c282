import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { ROOT, SETTINGS, loadConfig } from '../../src/config.js'
import { DEMO } from '../helpers/app.js'
import { serveProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

/** Dockerfile instructions as [KEYWORD, arguments], continuation lines joined. */
function instructions (text: string): [string, string][] {
  return text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [kw, ...rest] = l.split(/\s+/)
      return [kw.toUpperCase(), rest.join(' ')] as [string, string]
    })
}

t.test('Dockerfile: two stages, production dependencies only, non-root, 0.0.0.0, /data volume, health check', async (t) => {
  const ins = instructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
  const froms = ins.filter(([k]) => k === 'FROM').map(([, a]) => a)
  t.equal(froms.length, 2, 'multi-stage')
  t.match(froms[0], /node:20.* AS build/i)
  t.match(froms[1], /node:20.* AS run/i)
  const runStage = ins.slice(ins.findIndex(([k, a]) => k === 'FROM' && /AS run/i.test(a)))
  const buildStage = ins.slice(0, ins.findIndex(([k, a]) => k === 'FROM' && /AS run/i.test(a)))
  t.ok(buildStage.some(([k, a]) => k === 'RUN' && /npm ci/.test(a)), 'the build stage installs with dev dependencies')
  t.ok(buildStage.some(([k, a]) => k === 'RUN' && /npm prune --omit=dev/.test(a)), 'then drops them')
  t.notOk(runStage.some(([k, a]) => k === 'RUN' && /npm (ci|install)/.test(a)), 'the run stage installs nothing')
  t.ok(runStage.some(([k, a]) => k === 'COPY' && /--from=build .*node_modules/.test(a)))
  for (const dir of ['dist/bundle', 'dist/validators', 'dist/openapi', 'migrations', 'fixtures', 'public']) {
    t.ok(runStage.some(([k, a]) => k === 'COPY' && a.includes(dir)), `the image has ${dir}/`)
  }
  const user = runStage.filter(([k]) => k === 'USER').map(([, a]) => a)
  t.same(user, ['node'], 'runs as the non-root node user')
  const env = runStage.filter(([k]) => k === 'ENV').map(([, a]) => a).join(' ')
  t.match(env, /HOST=0\.0\.0\.0/)
  t.match(env, /SANDBOX_DB=\/data\//)
  const port = loadConfig({}).port
  t.match(env, new RegExp(`PORT=${port}\\b`))
  t.ok(runStage.some(([k, a]) => k === 'EXPOSE' && a === String(port)), 'exposes the default port')
  t.ok(runStage.some(([k, a]) => k === 'VOLUME' && a.includes('/data')))
  const health = runStage.find(([k]) => k === 'HEALTHCHECK')
  t.ok(health !== undefined)
  t.match(health![1], /\/_sandbox\/health/)
  t.match(runStage.find(([k]) => k === 'ENTRYPOINT')![1], /dist\/bundle\/cli\.js/, 'runs the bundled CLI, as the bin does')
  // podman 4 refuses HEALTHCHECK --start-interval, and resolves short image names only through an alias table.
  t.notMatch(health![1], /--start-interval/, 'no --start-interval (podman 4 refuses the build)')
  for (const from of froms) t.match(from, /^[a-z0-9.-]+\.[a-z]{2,}(:\d+)?\/[^\s]+\/[^\s]+:[^\s]+ AS /i, `fully qualified base image: ${from}`)
  const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')
  for (const entry of ['node_modules', 'dist', 'data', '.git']) t.ok(ignore.includes(entry), `.dockerignore has ${entry}`)
})

t.test('docker-compose.yml: port, named volume, health check, settings with their defaults', async (t) => {
  const text = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')
  const compose = parse(text) as {
    services: Record<string, { build: string; ports: string[]; environment: Record<string, string>; volumes: string[]; healthcheck: { test: string[] } }>
    volumes: Record<string, unknown>
  }
  const svc = compose.services.sandbox
  t.ok(svc, 'a sandbox service')
  t.equal(svc.build, '.')
  t.same(svc.ports, ['8080:8080'])
  const [volume, target] = svc.volumes[0].split(':')
  t.equal(target, '/data')
  t.ok(volume in compose.volumes, 'a named volume')
  t.match(svc.healthcheck.test.join(' '), /\/_sandbox\/health/)
  t.equal(svc.environment.PORT, '8080')
  t.equal(svc.environment.HOST, '0.0.0.0')
  t.match(svc.environment.SANDBOX_DB, /^\/data\//)
  for (const key of Object.keys(svc.environment)) t.ok(SETTINGS.some((s) => s.env === key), `${key} is a documented setting`)
  t.match(text, /#.*SANDBOX_FIXTURES/, 'a commented example of a partner fixture')
  t.match(text, /#\s*- \.\/.*\.json:\/fixtures\//, 'a commented fixture mount')
})

t.test('the app as the container runs it: HOST=0.0.0.0 and the database under a data folder', async (t) => {
  const dir = tempDir(t, 'sandbox-container-')
  const served = await serveProcess({ HOST: '0.0.0.0', SANDBOX_DB: join(dir, 'data', 'sandbox.db') })
  t.teardown(() => served.child.kill('SIGKILL'))
  t.match(served.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const health = await fetch(served.url + '/_sandbox/health')
  t.equal(health.status, 200)
  const res = await fetch(served.url + '/vendor/agencies?version=4.0', { headers: { authorization: DEMO } })
  t.equal(res.status, 200)
  t.ok(served.lines.some((l) => /WARNING: HOST=0\.0\.0\.0 exposes the control API/.test(l)), 'a loud warning without a control token')
  served.child.kill('SIGTERM')
  t.equal(await served.exited, 0)

  const guarded = await serveProcess({ HOST: '0.0.0.0', SANDBOX_DB: join(dir, 'data', 'sandbox.db'), SANDBOX_CONTROL_TOKEN: 't0ken' })
  t.teardown(() => guarded.child.kill('SIGKILL'))
  t.notOk(guarded.lines.some((l) => /WARNING/.test(l)), 'no warning with a token')
  t.equal((await fetch(guarded.url + '/_sandbox/info')).status, 401)
  t.equal((await fetch(guarded.url + '/_sandbox/info', { headers: { authorization: 'Bearer t0ken' } })).status, 200)
  guarded.child.kill('SIGTERM')
  await guarded.exited
})
