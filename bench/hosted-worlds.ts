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
 * - the first request for it through the other instance (which takes it: a world is owned from its first request);
 * - reset and delete it, over each store;
 * - worlds given back: a third instance that gives up a world idle for a few seconds
 *   (SANDBOX_HOSTED_IDLE_RELEASE_SECONDS), its memory while it owns the worlds and once it gave
 *   them back; a fourth instance taking each over on its first request (the world loaded from its
 *   start and its log), then the third reaching each through it.
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

interface OwnerFigures { rssKb: number[], takeover: number[], forwarded: number[] }

/** A world idle this long is given back by the instance of `owners`: short, so the run waits little. */
const IDLE_RELEASE_SECONDS = 3
const SETTLE_MS = 500

/**
 * WORLDS worlds created and read once on `owner` (which gives up a world idle IDLE_RELEASE_SECONDS):
 * its RSS with the default world, once it owns them, once it gave them back; each taken over by `taker` on its
 * first request there, then reached through `owner` (forwarded to `taker`).
 */
async function ownership (owner: ServerProcess, taker: ServerProcess): Promise<OwnerFigures> {
  const figures: OwnerFigures = { rssKb: [], takeover: [], forwarded: [] }
  const sample = async () => {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
    figures.rssKb.push(statusKb(owner.pid, 'VmRSS') ?? 0)
  }
  const readEach = async (origin: string, into: number[]) => {
    for (const world of created) {
      const abc = world.integrations[0]
      const authorization = 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64')
      into.push((await timedCall(origin, 'GET', '/vendor/agencies?version=4.0', { authorization }))[1])
    }
  }
  await sample()
  const created: Created[] = []
  for (let i = 0; i < WORLDS; i++) created.push((await timedCall(owner.origin, 'POST', '/_sandbox/worlds'))[0] as Created)
  // the first request for each takes it
  await readEach(owner.origin, [])
  await sample()
  await new Promise((resolve) => setTimeout(resolve, IDLE_RELEASE_SECONDS * 1000 + 2000))
  await sample()
  await readEach(taker.origin, figures.takeover)
  await readEach(owner.origin, figures.forwarded)
  for (const world of created) await timedCall(taker.origin, 'DELETE', `/_sandbox/worlds/${world.id}`)
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
    const c = await serve({ SANDBOX_DATABASE_URL: postgres.url, SANDBOX_HOSTED_IDLE_RELEASE_SECONDS: String(IDLE_RELEASE_SECONDS) })
    servers.push(c)
    const owned = await ownership(c, b)
    const mb = (kb: number) => (kb / 1024).toFixed(0)
    const row = (name: string, pg: number[], sqlite: number[] | undefined) => `| ${name} | ${summary(pg)} | ${sqlite === undefined ? '(one instance)' : summary(sqlite)} |`
    const held = median(overPg.create) < 100 ? 'yes' : '**no**'
    const text = `# Created worlds in hosted mode

Generated by \`node dist/bench/hosted-worlds.js\` (bench/hosted-worlds.ts) on ${new Date().toISOString().slice(0, 10)}: ${((Date.now() - began) / 1000).toFixed(0)} s, Node ${process.version}, ${cpus().length} cores (load average ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end). A throw-away PostgreSQL cluster (scripts/scratch-postgres.ts: fsync off, as a test cluster), two instances of \`agency-sandbox serve\` over it (A and B) and one over SQLite in memory, all on 127.0.0.1 of this machine, with the demo fixture. ${WORLDS} worlds are created one after another on A (and on the SQLite instance), each read once through B right after it is created (a world is taken by the first request for it: B owns it from then on), then each reset and deleted (on A: forwarded to B). The first world of each store (which makes the start-up fixture's snapshot) is left out.

| Target | Measured | Held |
|---|---|---|
| create a demo-sized world over PostgreSQL, median < 100 ms | ${ms(median(overPg.create))} ms | ${held} |

| Figure (median / p95, ms) | PostgreSQL | SQLite |
|---|---|---|
${row('create a world (POST /_sandbox/worlds), to its answer', overPg.create, overSqlite.create)}
${row('its first request, through the other instance (B takes the world: its lease, its start, its log)', overPg.firstElsewhere, undefined)}
${row('reset it (POST /_sandbox/worlds/{id}/reset)', overPg.reset, overSqlite.reset)}
${row('delete it (DELETE /_sandbox/worlds/{id})', overPg.remove, overSqlite.remove)}

**Worlds given back.** A third instance (C, \`SANDBOX_HOSTED_IDLE_RELEASE_SECONDS=${IDLE_RELEASE_SECONDS}\`) creates ${WORLDS} more worlds and reads each once, which makes it their owner; idle, it gives them back; B takes each over on its first request there, then C reaches each through B:

| C | RSS |
|---|---|
| with the default world alone | ${mb(owned.rssKb[0])} MB |
| owning the ${WORLDS} worlds it created and read | ${mb(owned.rssKb[1])} MB |
| once it gave them back, idle | ${mb(owned.rssKb[2])} MB |

| Figure | median / p95, ms |
|---|---|
| a world's first request on B once C gave it back (B takes it over: its lease, its start, its log) | ${summary(owned.takeover)} |
| then the same request through C (forwarded to B) | ${summary(owned.forwarded)} |

A world given back frees its memory to the process's allocator, not always to the system: the next worlds take it again, so an instance's RSS follows the most worlds it owned at once, not every world it knows.

Over PostgreSQL, a world's creation writes, under the catalogue's lock and before it answers, its row and the first entry of its log, which names its start rather than holding a copy; the start itself (the snapshot a reset returns to, 1.7 MB for the demo fixture) is written once for every world made from the same fixture, by its digest. A reset to the start logs an entry without a body the same way; an instance that takes the world over loads it from its start and the commits since.
`
    writeFileSync(values.out, text)
    console.log(text)
  } finally {
    for (const server of servers) await server.stop().catch(() => undefined)
    postgres.destroy()
  }
}

await main()
