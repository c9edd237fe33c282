import { writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT } from '../src/config.js'
import { startScratchPostgres } from '../scripts/scratch-postgres.js'
import { freePort, spawnServer, statusKb, type ServerProcess } from './processes.js'
import { median } from './stats.js'

/**
 * Created worlds in hosted mode (`npm run build && node dist/bench/hosted-worlds.js`): two
 * instances over a throw-away PostgreSQL cluster, and one over SQLite in memory beside them.
 * - create a demo-sized world (POST /_sandbox/worlds from the start-up fixture), one after
 *   another, over PostgreSQL and over SQLite;
 * - the first request for it on the other instance (which loads it from the catalogue and its log);
 * - reset and delete it, over each store;
 * - copies on demand: a third instance started over the same worlds, its memory while it knows
 *   them without copies, once each was read, and once its idle copies were dropped; a listing of
 *   them, and a read of each again.
 * Writes bench/HOSTED-WORLDS.md. Everything on 127.0.0.1, every loop bounded in count.
 */

const { values } = parseArgs({ options: { worlds: { type: 'string', default: '40' }, out: { type: 'string', default: join(ROOT, 'bench', 'HOSTED-WORLDS.md') } } })
const WORLDS = Math.min(90, Number(values.worlds))
const CLI = join(ROOT, 'dist', 'src', 'cli.js')

async function serve (env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort()
  return await spawnServer({
    args: [CLI, 'serve'],
    env: { PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB: ':memory:', LOG_LEVEL: 'warn', LOG_PRETTY: 'false', SANDBOX_MAX_WORLDS: '100', ...env },
    port,
    healthPath: '/_sandbox/health',
    pollMs: 50,
    timeoutMs: 120_000
  })
}

interface Created { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }

async function timedCall (origin: string, method: string, path: string, headers: Record<string, string> = {}): Promise<[unknown, number]> {
  const began = performance.now()
  const res = await fetch(origin + path, { method, headers: method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers, ...(method === 'POST' ? { body: '{}' } : {}) })
  const text = await res.text()
  const took = performance.now() - began
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return [text === '' ? undefined : JSON.parse(text), took]
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]
const ms = (x: number) => x.toFixed(1)
const summary = (xs: number[]) => `${ms(median(xs))} / ${ms(percentile(xs, 0.95))}`

interface StoreFigures { create: number[], reset: number[], remove: number[], firstElsewhere: number[] }

/** Creates, uses elsewhere, resets and deletes WORLDS worlds one after another on `origin` (`other`: another instance over the same store). */
async function cycle (origin: string, other: string | undefined): Promise<StoreFigures> {
  const figures: StoreFigures = { create: [], reset: [], remove: [], firstElsewhere: [] }
  // the first world makes the start-up fixture's snapshot: left out, as a warm-up
  const [warm] = await timedCall(origin, 'POST', '/_sandbox/worlds')
  await timedCall(origin, 'DELETE', `/_sandbox/worlds/${(warm as Created).id}`)
  const created: Created[] = []
  for (let i = 0; i < WORLDS; i++) {
    const [world, took] = await timedCall(origin, 'POST', '/_sandbox/worlds')
    created.push(world as Created)
    figures.create.push(took)
    if (other !== undefined) {
      const abc = (world as Created).integrations[0]
      const authorization = 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64')
      figures.firstElsewhere.push((await timedCall(other, 'GET', '/vendor/agencies?version=4.0', { authorization }))[1])
    }
  }
  for (const world of created) figures.reset.push((await timedCall(origin, 'POST', `/_sandbox/worlds/${world.id}/reset`))[1])
  for (const world of created) figures.remove.push((await timedCall(origin, 'DELETE', `/_sandbox/worlds/${world.id}`))[1])
  return figures
}

interface CopyFigures { rssKb: number[], bytes: number[], first: number[], again: number[], listed: number, listedMoved: number }

/** Long enough for the reads of every world to end within it, their copies all held when sampled. */
const COPY_IDLE_SECONDS = 6
const SETTLE_MS = 500

/** What an instance holds of WORLDS worlds created elsewhere: none, each read once, each dropped when idle. */
async function copies (origin: string, serveAnother: () => Promise<ServerProcess>): Promise<CopyFigures> {
  const c = await serveAnother()
  const figures: CopyFigures = { rssKb: [], bytes: [], first: [], again: [], listed: 0, listedMoved: 0 }
  const sample = async () => {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
    // a control call learns the catalogue; the RSS is read before the listing, which loads (and drops again) the worlds never held here
    await timedCall(c.origin, 'GET', '/_sandbox/clock')
    figures.rssKb.push(statusKb(c.pid, 'VmRSS') ?? 0)
    const [list] = await timedCall(c.origin, 'GET', '/_sandbox/worlds')
    figures.bytes.push((list as { limits: { bytes: number } }).limits.bytes)
  }
  const readEach = async (into: number[]) => {
    for (const world of created) {
      const abc = world.integrations[0]
      const authorization = 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64')
      into.push((await timedCall(c.origin, 'GET', '/vendor/agencies?version=4.0', { authorization }))[1])
    }
  }
  await sample()
  const created: Created[] = []
  for (let i = 0; i < WORLDS; i++) created.push((await timedCall(origin, 'POST', '/_sandbox/worlds'))[0] as Created)
  await sample()
  await readEach(figures.first)
  await sample()
  await new Promise((resolve) => setTimeout(resolve, COPY_IDLE_SECONDS * 1000 + 1000))
  await sample()
  figures.listed = (await timedCall(c.origin, 'GET', '/_sandbox/worlds'))[1]
  // every world's log moved on the other instance: the listing loads each to count it
  for (const world of created) await timedCall(origin, 'POST', `/_sandbox/worlds/${world.id}/reset`)
  figures.listedMoved = (await timedCall(c.origin, 'GET', '/_sandbox/worlds'))[1]
  await readEach(figures.again)
  // a copy's memory goes back to the allocator when dropped, and the next copies take it again
  await sample()
  for (const world of created) await timedCall(origin, 'DELETE', `/_sandbox/worlds/${world.id}`)
  await c.stop()
  return figures
}

async function main (): Promise<void> {
  const began = Date.now()
  const postgres = await startScratchPostgres()
  const servers: ServerProcess[] = []
  try {
    const a = await serve({ SANDBOX_DATABASE_URL: postgres.url })
    servers.push(a)
    const b = await serve({ SANDBOX_DATABASE_URL: postgres.url })
    servers.push(b)
    const local = await serve({})
    servers.push(local)
    const loadAtStart = loadavg()[0]
    // in turn, so that both stores see the same machine
    const overPg = await cycle(a.origin, b.origin)
    const overSqlite = await cycle(local.origin, undefined)
    const copied = await copies(a.origin, async () => {
      const c = await serve({ SANDBOX_DATABASE_URL: postgres.url, SANDBOX_HOSTED_COPY_IDLE_SECONDS: String(COPY_IDLE_SECONDS) })
      servers.push(c)
      return c
    })
    const mb = (kb: number) => (kb / 1024).toFixed(0)
    const mib = (bytes: number) => (bytes / 1048576).toFixed(1)
    const row = (name: string, pg: number[], sqlite: number[] | undefined) => `| ${name} | ${summary(pg)} | ${sqlite === undefined ? '(one instance)' : summary(sqlite)} |`
    const held = median(overPg.create) < 100 ? 'yes' : '**no**'
    const text = `# Created worlds in hosted mode

Generated by \`node dist/bench/hosted-worlds.js\` (bench/hosted-worlds.ts) on ${new Date().toISOString().slice(0, 10)}: ${((Date.now() - began) / 1000).toFixed(0)} s, Node ${process.version}, ${cpus().length} cores (load average ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end). A throw-away PostgreSQL cluster (scripts/scratch-postgres.ts: fsync off, as a test cluster), two instances of \`agency-sandbox serve\` over it (A and B) and one over SQLite in memory, all on 127.0.0.1 of this machine, with the demo fixture. ${WORLDS} worlds are created one after another on A (and on the SQLite instance), each read once on B right after it is created, then each reset and deleted. The first world of each store (which makes the start-up fixture's snapshot) is left out.

| Target | Measured | Held |
|---|---|---|
| create a demo-sized world over PostgreSQL, median < 100 ms | ${ms(median(overPg.create))} ms | ${held} |

| Figure (median / p95, ms) | PostgreSQL | SQLite |
|---|---|---|
${row('create a world (POST /_sandbox/worlds), to its answer', overPg.create, overSqlite.create)}
${row('its first request on the other instance (B loads it: the catalogue, its start, its log)', overPg.firstElsewhere, undefined)}
${row('reset it (POST /_sandbox/worlds/{id}/reset)', overPg.reset, overSqlite.reset)}
${row('delete it (DELETE /_sandbox/worlds/{id})', overPg.remove, overSqlite.remove)}

**Copies on demand.** A third instance (C, \`SANDBOX_HOSTED_COPY_IDLE_SECONDS=${COPY_IDLE_SECONDS}\`), then ${WORLDS} more worlds created on A, each read once on C, then left idle:

| C holds | RSS | the worlds' databases (\`limits.bytes\`) |
|---|---|---|
| the default world alone | ${mb(copied.rssKb[0])} MB | ${mib(copied.bytes[0])} MiB |
| no copy of the ${WORLDS} worlds (known from the catalogue) | ${mb(copied.rssKb[1])} MB | ${mib(copied.bytes[1])} MiB |
| a copy of each, after one read of each | ${mb(copied.rssKb[2])} MB | ${mib(copied.bytes[2])} MiB |
| none again, each dropped when idle | ${mb(copied.rssKb[3])} MB | ${mib(copied.bytes[3])} MiB |
| a copy of each again, once each was reset on A and read on C | ${mb(copied.rssKb[4])} MB | ${mib(copied.bytes[4])} MiB |

| Figure | ms |
|---|---|
| a world's first request on C (loads it from its start and its log), median / p95 | ${summary(copied.first)} |
| the same after its copy was dropped | ${summary(copied.again)} |
| C lists the ${WORLDS + 1} worlds, none held and none changed since their copies were dropped | ${ms(copied.listed)} |
| the same once each was reset on A (the listing loads each, one at a time, and drops it again) | ${ms(copied.listedMoved)} |

A copy dropped gives its memory back to the process's allocator, not to the system: the next copies take it again, so an instance's RSS follows the most copies it held at once, not every world it knows.

Over PostgreSQL, a world's creation writes, under the catalogue's lock and before it answers, its row and the first entry of its log, which names its start rather than holding a copy; the start itself (the snapshot a reset returns to, 1.7 MB for the demo fixture) is written once for every world made from the same fixture, by its digest. A reset to the start logs an entry without a body the same way; the other instance loads the world from its start and the commits since.
`
    writeFileSync(values.out, text)
    console.log(text)
  } finally {
    for (const server of servers) await server.stop().catch(() => undefined)
    postgres.destroy()
  }
}

await main()
