import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli, serveProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

/**
 * The signed-report flow of the README, end to end in a world, with real processes: a programme's
 * sandbox (control token, signing key, signer's name), a tenant and its world, a small sync by the
 * world's integration, the session ended, `report --world` with the tenant's token and with the
 * world's, the public keys fetched, and `verify`.
 */

const ADMIN = 'flow-admin-token'
const dir = tempDir(t, 'signed-flow-')
const keyFile = join(dir, 'signing-key.pem')
writeFileSync(keyFile, String(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' })))

t.test('a tenant\'s world: a sync, its session ended, report --world, verify', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:', SANDBOX_CONTROL_TOKEN: ADMIN, SANDBOX_SIGNING_KEY: keyFile, SANDBOX_SIGNER_NAME: 'Northwind partner programme' })
  t.teardown(() => { served.child.kill() })
  const { url } = served
  const call = async <T>(token: string, method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${url}/_sandbox${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`)
    return await res.json() as T
  }
  const tenant = await call<{ id: string, token: string }>(ADMIN, 'POST', '/tenants', { name: 'Acme CRM' })
  const world = await call<{ id: string, token: string, integrations: Array<{ clientId: string, clientSecret: string }> }>(tenant.token, 'POST', '/worlds', { name: 'nightly' })
  const session = await call<{ id: number, clientId: string }>(tenant.token, 'POST', `/worlds/${world.id}/sessions`, { name: 'nightly sync', clientId: 'abc' })
  t.equal(session.clientId, `abc@${world.id}`, 'the fixture\'s Client Id, taken as the world\'s')

  // the integration's sync, as the world's integration (with the secret the world was created with)
  const abc = world.integrations.find((i) => i.clientId === `abc@${world.id}`)!
  const headers = { authorization: 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64'), 'content-type': 'application/json' }
  const vendor = async (path: string, body?: unknown) => {
    const res = await fetch(`${url}/vendor${path}`, { method: body === undefined ? 'GET' : 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) })
    t.equal(res.status, 200, path)
    return await res.json() as unknown
  }
  await vendor('/agencies?version=4.0')
  const ids = await vendor('/agency/1001/clients?version=4.0') as number[]
  for (let i = 0; i < ids.length; i += 200) await vendor('/agency/1001/clients?version=4.0', { clientNumbers: ids.slice(i, i + 200) })
  await vendor('/agency/1001/clients?version=4.0&deleted=true&asOf=2000-01-01T00:00:00Z')
  await call(tenant.token, 'POST', `/worlds/${world.id}/sessions/${session.id}/end`)

  const byDefault = await runCli(['report', '--url', url, '--session', String(session.id), '--token', tenant.token])
  t.equal(byDefault.code, 1, 'without --world, a tenant reaches no session')
  t.match(byDefault.stderr, 'pass --world ID')
  const worldTokenByDefault = await runCli(['report', '--url', url, '--session', String(session.id), '--token', world.token])
  t.equal(worldTokenByDefault.code, 1)
  t.match(worldTokenByDefault.stderr, 'refused the control token given with --token (a world\'s token opens its own world\'s sessions alone: pass --world ID)')

  const reportFile = join(dir, 'report.json')
  const byWorld = await runCli(['report', '--url', url, '--world', world.id, '--session', String(session.id), '--token', world.token])
  t.equal(byWorld.code, 0, byWorld.stderr)
  t.match(byWorld.stdout, 'Verdict: PASS', 'with the world\'s token')
  const saved = await runCli(['report', '--url', url, '--world', world.id, '--session', String(session.id), '--format', 'json', '--out', reportFile, '--token', tenant.token])
  t.equal(saved.code, 0, saved.stderr)
  t.equal(saved.stdout, '', 'written to the file')
  t.match(saved.stderr, `session ${session.id}: verdict pass; no finding at --fail-on error`)
  const keys = join(dir, 'keys.pem')
  const published = await fetch(`${url}/_sandbox/signing-keys?format=pem`)
  t.equal(published.status, 200, 'the public keys need no token')
  writeFileSync(keys, await published.text())

  const verified = await runCli(['verify', reportFile, '--key', keys])
  t.equal(verified.code, 0, verified.stderr)
  t.match(verified.stdout, new RegExp(`^${reportFile.replace(/[.]/g, '\\.')}: valid: verdict pass, session ${session.id} "nightly sync" \\(clientId abc@${world.id}\\), ` +
    `world ${world.id} "nightly" \\(tenant ${tenant.id} "Acme CRM", start [0-9a-f]{12}…\\), .* signed .* by "Northwind partner programme" with key [0-9a-f]{64} \\(agency-sandbox `))
})
