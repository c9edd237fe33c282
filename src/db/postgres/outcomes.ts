import { randomUUID } from 'node:crypto'
import pg from 'pg'

/**
 * What a writer answers when the answer to its COMMIT never came (the connection failed, or the
 * server did not answer in time): the transaction may have been applied or not. Each transaction
 * that writes a world's log or the catalogue carries an id of its own (markAppend), written in it
 * to sandbox_appends (migrations/postgres/008-append-ids.sql) under a transaction-scoped advisory
 * lock keyed by that id. The writer then opens a new connection and takes that lock: once it has
 * it, the transaction has ended, committed or rolled back, and the row says which. Only then may it
 * say that nothing was applied; when it cannot learn within its bound (the server frozen or
 * unreachable), it says that the outcome is unknown.
 */

/** How long a writer whose COMMIT went unanswered tries to learn its outcome. */
export const OUTCOME_WAIT_MS = 2000

/** Rows of sandbox_appends older than this are deleted: far longer than any writer looks for one. */
const KEEP_APPEND_IDS = '10 minutes'
/** Every this many appends of an instance, the old rows are deleted (in that append's transaction). */
const PRUNE_EVERY = 1000
let appendsSincePrune = 0

/** The COMMIT's answer was lost and the writer could not learn, within its bound, whether it was applied. */
export class OutcomeUnknown extends Error {
  constructor (cause: unknown) {
    super(`PostgreSQL did not confirm the commit (${messageOf(cause)}) and could not be asked in time whether it was applied`)
    this.name = 'OutcomeUnknown'
  }
}

/** The COMMIT's answer was lost, and the writer learnt afterwards that nothing was applied. */
export class NotApplied extends Error {
  constructor (cause: unknown) {
    super(`PostgreSQL did not confirm the commit (${messageOf(cause)}); asked again, it holds nothing of it`)
    this.name = 'NotApplied'
  }
}

const messageOf = (e: unknown) => e instanceof Error ? e.message : String(e)

/** A new id for one writing transaction. */
export const newAppendId = (): string => randomUUID()

/**
 * Marks the transaction on `client` with `id` (see the module): its row, and its lock, held until
 * the transaction ends. Now and then the rows past their age go in the same transaction.
 */
export async function markAppend (client: Pick<pg.ClientBase, 'query'>, id: string, subject: string): Promise<void> {
  await client.query({
    name: 'sandbox-mark-append',
    text: `WITH held AS (SELECT pg_advisory_xact_lock(hashtextextended($1, 0)))
           INSERT INTO sandbox_appends (append_id, subject) SELECT $1, $2 FROM held`,
    values: [id, subject]
  })
  if (++appendsSincePrune >= PRUNE_EVERY) {
    appendsSincePrune = 0
    await client.query(PRUNE)
  }
}

const PRUNE = `DELETE FROM sandbox_appends WHERE written_at < now() - interval '${KEEP_APPEND_IDS}'`

/** Counts an append that wrote its id in a statement of its own (world-log.ts); now and then, the old ids are deleted in the background. */
export function pruneAppendIds (pool: Pick<pg.Pool, 'query'>): void {
  if (++appendsSincePrune < PRUNE_EVERY) return
  appendsSincePrune = 0
  pool.query(PRUNE).catch(() => undefined)
}

/**
 * True when the server itself answered the COMMIT with an error (its severity ERROR): then the
 * transaction was rolled back. Anything else (no answer, a broken connection, a FATAL error that
 * ends the session) leaves the outcome to be learnt.
 */
function refusedByServer (e: unknown): boolean {
  return e instanceof pg.DatabaseError && e.severity === 'ERROR'
}

/**
 * Commits the transaction marked with `id` on `client` and gives the connection back (a failed
 * one is closed). When the COMMIT is refused, it throws that (nothing was applied); when its
 * answer is lost, it learns the outcome from a new connection (`settings`: the pool's): it
 * resolves when the transaction was applied ('found' when learnt so), throws NotApplied when it was not, OutcomeUnknown
 * when it could not learn in time.
 */
export async function commitMarked (client: pg.PoolClient, id: string, settings: pg.ClientConfig, waitMs = OUTCOME_WAIT_MS): Promise<'committed' | 'found'> {
  try {
    await client.query('COMMIT')
  } catch (e) {
    // closed first: a server still waiting on this connection sees it end, and ends the transaction
    client.release(e as Error)
    if (refusedByServer(e)) throw e
    const applied = await lookUp(id, settings, waitMs)
    if (applied === true) return 'found'
    throw applied === false ? new NotApplied(e) : new OutcomeUnknown(e)
  }
  client.release()
  return 'committed'
}

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Whether the transaction marked `id` was applied: true or false once it has ended (its lock
 * taken from a new connection), undefined when that could not be learnt within `waitMs` (each
 * attempt bounded by what remains; a server restarting is asked again).
 */
export async function lookUp (id: string, settings: pg.ClientConfig, waitMs: number): Promise<boolean | undefined> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const remaining = deadline - Date.now()
    if (remaining <= 50) return undefined
    const client = new pg.Client({
      ...settings,
      connectionTimeoutMillis: remaining,
      // eslint-disable-next-line camelcase -- pg's own option names
      statement_timeout: remaining,
      // eslint-disable-next-line camelcase -- pg's own option names
      lock_timeout: remaining,
      // eslint-disable-next-line camelcase -- pg's own option names
      query_timeout: remaining,
      // eslint-disable-next-line camelcase -- pg's own option names
      application_name: 'agency-sandbox outcome'
    })
    client.on('error', () => undefined)
    try {
      await client.connect()
      // taken once the transaction that holds it has ended, committed or rolled back
      await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [id])
      const { rows } = await client.query<{ found: boolean }>('SELECT EXISTS (SELECT 1 FROM sandbox_appends WHERE append_id = $1) AS found', [id])
      return rows[0].found
    } catch {
      await sleep(Math.min(200, Math.max(0, deadline - Date.now())))
    } finally {
      // ending the session gives the lock back
      void client.end().catch(() => undefined)
    }
  }
}
