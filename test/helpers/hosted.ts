import type { Test } from 'tap'
import { join } from 'node:path'
import type pg from 'pg'
import { ROOT } from '../../src/config.js'
import { migratePostgres } from '../../src/db/postgres/migrate.js'
import { openPool } from '../../src/db/postgres/world-log.js'
import { postgresBinaries, startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { serveProcess, type Served } from './process.js'

/** Why a test of two instances over PostgreSQL is skipped: the server is not installed here. */
export const withoutPostgres = postgresBinaries() === undefined ? 'PostgreSQL is not installed (.ci/run installs Debian\'s postgresql)' : false

/** A throw-away PostgreSQL cluster with the project's migrations applied, and a pool over it, both gone at the test's end. */
export async function migratedPostgres (t: Test): Promise<{ postgres: ScratchPostgres, pool: pg.Pool }> {
  const postgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  const pool = openPool({ url: postgres.url })
  t.teardown(async () => await pool.end())
  await migratePostgres(pool, join(ROOT, 'migrations', 'postgres'))
  return { postgres, pool }
}

/**
 * A throw-away PostgreSQL cluster for the test file, and `serve` processes over it in hosted
 * mode, all killed and removed at its end.
 */
export function hostedInstances (t: Test) {
  let postgres: ScratchPostgres | undefined
  // one cluster however the file asks for it (its before hook and `ready` may run at once)
  let starting: Promise<ScratchPostgres> | undefined
  const cluster = async () => { postgres = await (starting ??= startScratchPostgres()) }
  const instances: Served[] = []
  t.before(async () => { if (withoutPostgres === false) await cluster() })
  t.teardown(() => {
    for (const served of instances) served.child.kill('SIGKILL')
    postgres?.destroy()
  })
  return {
    /** The cluster's URL (once the file's tests run). */
    url: () => postgres!.url,
    /** The cluster (once the file's tests run). */
    postgres: () => postgres!,
    /** Starts the cluster now (inside a test, where `t.before` has already run). */
    async ready (): Promise<void> {
      await cluster()
    },
    /** The instances started and not exited. */
    running: () => instances.filter((served) => served.child.exitCode === null && served.child.signalCode === null),
    async start (env: Record<string, string> = {}): Promise<Served> {
      const served = await serveProcess({ SANDBOX_DATABASE_URL: postgres!.url, SANDBOX_DB: ':memory:', ...env })
      instances.push(served)
      return served
    }
  }
}

export const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

/** A control call to an instance: its status, and its JSON body (undefined when empty). */
export async function controlCall<T> (url: string, method: string, path: string, body?: unknown): Promise<{ status: number, json: T }> {
  const answer = await fetch(`${url}/_sandbox${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await answer.text()
  return { status: answer.status, json: (text === '' ? undefined : JSON.parse(text)) as T }
}
