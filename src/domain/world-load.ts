import { performance } from 'node:perf_hooks'
import type { Repositories } from '../db/index.js'
import type { Fixture } from '../fixture/schema.js'
import type { FixtureStamp } from '../fixture/stamp.js'
import { insertPreparedAgency, insertRest, prepareClient, prepareWorld, type PreparedAgency, type PreparedClient, type PreparedWorld } from './world.js'

/**
 * Replacing a world's data with a fixture's without holding the event loop: its clients are made
 * into rows and staged in turns of at most TURN_MS (src/db/staging.ts), then one transaction
 * replaces the data, moving the staged clients in with one statement per table. Readers see the
 * old data until that commit and the new data after it, as with loadWorld.
 */

/** Milliseconds of staging in one turn of the event loop. */
const TURN_MS = 20
/** Clients staged per transaction of the temporary tables. */
const CHUNK = 64
/**
 * Characters of clients' stored text staged per transaction at most: 64 clients of an 8 MiB
 * fixture (3.4 KB each) took 20 to 36 ms, past the turn's end.
 */
const CHUNK_CHARS = 64 * 1024

const charsOf = ({ row }: PreparedClient) => row.details.length + row.people.length + row.contacts.length + row.claims.length + row.policies.length + row.invoices.length

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Loads under way per connection's staging: one at a time, as they share its tables. */
const loading = new WeakMap<Repositories['staging'], Promise<void>>()

function * clientsOf (content: Fixture | PreparedWorld): Generator<PreparedClient> {
  if ('prepared' in content) {
    for (const a of content.agencies) yield * a.clients
  } else {
    for (const a of content.agencies) for (const c of a.clients) yield prepareClient(a.agencyId, c)
  }
}

/**
 * Stages clients in turns of at most TURN_MS, and ends with a turn of its own, so that the
 * transaction that follows does not run in the same turn as the last of the staging.
 */
async function stageInTurns (staging: Repositories['staging'], clients: Iterable<PreparedClient>): Promise<void> {
  let turnStarted = performance.now()
  let chunk: PreparedClient[] = []
  let chars = 0
  for (const client of clients) {
    chunk.push(client)
    chars += charsOf(client)
    if (chunk.length < CHUNK && chars < CHUNK_CHARS) continue
    staging.add(chunk)
    chunk = []
    chars = 0
    if (performance.now() - turnStarted >= TURN_MS) {
      await nextTurn()
      turnStarted = performance.now()
    }
  }
  staging.add(chunk)
  await nextTurn()
}

/** Runs `work` with the connection's staging tables to itself, cleared before and after. */
function withStaging (staging: Repositories['staging'], work: () => Promise<void>): Promise<void> {
  const before = loading.get(staging) ?? Promise.resolve()
  const load = before.then(async () => {
    staging.clear()
    try {
      await work()
    } finally {
      staging.clear()
    }
  })
  // the next load waits for this one, whether it succeeds or not
  loading.set(staging, load.catch(() => {}))
  return load
}

/** Adds one agency with its clients (staged in turns) in one transaction; the caller checked it does not exist. */
export function addAgencyInTurns (repositories: Pick<Repositories, 'agencies' | 'clients' | 'transaction' | 'staging'>, agency: PreparedAgency): Promise<void> {
  return withStaging(repositories.staging, async () => {
    await stageInTurns(repositories.staging, agency.clients)
    repositories.transaction(() => {
      insertPreparedAgency(repositories, { ...agency, clients: [] })
      repositories.staging.moveIn()
    })
  })
}

/**
 * How the transaction that replaces a world's data runs on its connection (see starts.ts):
 * `around` runs it, `check` is called in it before it commits.
 */
export interface ReplaceHooks {
  around(replace: () => void): void
  check(): void
}

export async function loadWorldInTurns (repositories: Repositories, content: Fixture | PreparedWorld, source: string, nowIso: string, stamp?: FixtureStamp, hooks?: ReplaceHooks): Promise<void> {
  return withStaging(repositories.staging, async () => {
    await stageInTurns(repositories.staging, clientsOf(content))
    const shell = 'prepared' in content ? { ...content, agencies: content.agencies.map((a) => ({ ...a, clients: [] })) } : prepareWorld(content, { clients: false })
    const replace = () => repositories.transaction(() => {
      repositories.clearWorld()
      for (const a of shell.agencies) insertPreparedAgency(repositories, a)
      repositories.staging.moveIn()
      insertRest(repositories, shell, source, nowIso, stamp)
      hooks?.check()
    })
    if (hooks === undefined) replace()
    else hooks.around(replace)
  })
}
