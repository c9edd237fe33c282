/**
 * A hosted sandbox backed up with pg_dump and restored with pg_restore into a new database
 * (docs/operations.md, "Backups"): an instance started over the restored database answers as the
 * original does: the tenants, the worlds, each world's whole state (its fixture document), its
 * clock, the clients written before the dump, and the tokens and credentials made before it.
 */
import t from 'tap'
import { startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { withoutPostgres } from '../helpers/hosted.js'
import { serveProcess, type Served } from '../helpers/process.js'
import { createClientBody, logNote } from '../helpers/writes.js'

const TOKEN = 'backup-administrator'
const ADMIN = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' })
const basic = (id: string, secret: string) => ({ authorization: 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64'), 'content-type': 'application/json' })

interface World { id: string, token: string, integrations: Array<{ clientId: string, clientSecret: string }> }

t.setTimeout(300_000)

t.test('pg_dump, pg_restore into a new database, an instance over it answers identically', { skip: withoutPostgres, timeout: 240_000 }, async (t) => {
  const postgres: ScratchPostgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  const instances: Served[] = []
  t.teardown(() => { for (const served of instances) served.child.kill('SIGKILL') })
  const start = async (url: string) => {
    const served = await serveProcess({ SANDBOX_DATABASE_URL: url, SANDBOX_DB: ':memory:', SANDBOX_CONTROL_TOKEN: TOKEN })
    instances.push(served)
    return served.url
  }
  const post = async (url: string, headers: Record<string, string>, body: object = {}) => await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })

  const original = await start(postgres.url)
  const tenant = await (await post(`${original}/_sandbox/tenants`, ADMIN, { name: 'backed up', maxWorlds: 3 })).json() as { id: string, token: string }
  const world = await (await post(`${original}/_sandbox/worlds`, bearer(tenant.token), { name: 'kept', ttlSeconds: 0 })).json() as World
  const partner = basic(world.integrations[0].clientId, world.integrations[0].clientSecret)
  t.equal((await fetch(`${original}/_sandbox/worlds/${world.id}/clock`, { method: 'PUT', headers: bearer(world.token), body: JSON.stringify({ now: '2031-02-03T04:05:06Z', frozen: true }) })).status, 200)
  const created: number[] = []
  for (const [auth, n] of [[partner, 3], [basic('abc', '123'), 2]] as const) {
    for (let i = 0; i < n; i++) {
      const res = await post(`${original}/vendor/agency/1001/client?version=4.0`, auth, createClientBody())
      t.equal(res.status, 200)
      created.push((await res.json() as { clientNumber: number }).clientNumber)
    }
  }
  t.equal((await post(`${original}/vendor/agency/1001/client/1000/log?version=4.0`, partner, logNote())).status, 200, 'a log note')

  const dump = 'dump.pgc'
  const connection = ['-h', '127.0.0.1', '-p', String(postgres.port), '-U', 'sandbox']
  postgres.tool('pg_dump', [...connection, '-d', 'postgres', '-F', 'c', '-f', dump])
  postgres.tool('createdb', [...connection, 'restored'])
  postgres.tool('pg_restore', [...connection, '-d', 'restored', '--no-owner', dump])
  const restored = await start(postgres.url.replace(/\/postgres$/, '/restored'))

  const read = async (base: string, path: string, headers: Record<string, string>) => {
    const res = await fetch(`${base}${path}`, { headers })
    return { status: res.status, body: await res.text() }
  }
  const same = async (path: string, headers: Record<string, string>, what: string) => {
    const [a, b] = await Promise.all([read(original, path, headers), read(restored, path, headers)])
    t.equal(a.status, 200, `${what}: answered`)
    t.same(b, a, `${what}: the same answer from the restored database`)
  }
  await same('/_sandbox/tenants', ADMIN, 'the tenants')
  await same(`/_sandbox/worlds/${world.id}/state`, bearer(world.token), "the created world's whole state")
  await same('/_sandbox/state', ADMIN, "the default world's whole state")
  await same(`/_sandbox/worlds/${world.id}/clock`, bearer(world.token), "the created world's clock")
  await same('/vendor/agencies?version=4.0', partner, "the world's agencies, to its partner credentials")
  for (const n of created.slice(0, 3)) await same(`/vendor/agency/1001/client/${n}?version=4.0`, partner, `client ${n} of the created world`)
  for (const n of created.slice(3)) await same(`/vendor/agency/1001/client/${n}?version=4.0`, basic('abc', '123'), `client ${n} of the default world`)
  const listed = await (await fetch(`${restored}/_sandbox/worlds`, { headers: bearer(tenant.token) })).json() as { worlds: Array<{ id: string, name: string }> }
  t.same(listed.worlds.map((w) => [w.id, w.name]), [[world.id, 'kept']], "the tenant's token lists its world on the restored database")
})
