import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import pg from 'pg'
import { openDatabase, type Db } from '../../db/database.js'
import { UnitOfWork } from '../../db/index.js'
import { migratePostgres } from '../../db/postgres/migrate.js'
import { agreeOnSettings, type AgreedSetting } from '../../db/postgres/agreed-settings.js'
import { disagreementMessage } from './agreed-settings.js'
import { Catalogue, CATALOGUE_NOTICE } from '../../db/postgres/catalogue.js'
import { CommitDelivery, PING_CHANNEL, PONG_CHANNEL, ReaderLease } from '../../db/postgres/commit-delivery.js'
import { ExaminerStore } from '../../db/postgres/examiner-store.js'
import { JOURNAL_CHANNEL, JournalStore } from '../../db/postgres/journal-store.js'
import { Leases } from '../../db/postgres/leases.js'
import { LOG_CHANNEL, openPool, WorldLog, type LogTurn } from '../../db/postgres/world-log.js'
import { FreshHeads, type ReplicaReads } from './fresh-heads.js'
import { HostedWorlds } from './hosted-worlds.js'
import { SharedJournals } from './shared-journals.js'
import type { WorldRegistry } from './registry.js'
import { applyEffects, decodeSteps, openLogSnapshot, WorldReplica, type Effect } from './replica.js'
import { pagesOf } from './starts.js'
import { DEFAULT_WORLD_ID } from './world-ids.js'

/**
 * Hosted mode: the worlds' data and the catalogue of worlds and tenants kept in PostgreSQL, so any
 * number of instances over one database answer alike (replica.ts, hosted-worlds.ts). An instance
 * starts from the default world's log (its latest snapshot and the commits since) or, when the
 * log is empty, seeds it: under the world's lock, so two instances starting at once seed it once.
 * Then it learns every world created (each loaded by its first request: hosted-worlds.ts), and
 * listens for what the others commit.
 */

export interface HostingSettings {
  url: string
  /** SQLite's migrations (a snapshot written by an older instance is brought up to date). */
  migrationsDir: string
  /** PostgreSQL's own migrations. */
  postgresMigrationsDir: string
  onError?: (message: string) => void
  reads?: ReplicaReads
  /** Idle time after which an instance drops its copy of a created world's data (0: kept). */
  copyIdleMs?: number
  /** Settings every instance must share (agreed-settings.ts): this instance's values. */
  agreed?: readonly AgreedSetting[]
  /** What a start refused for a disagreement throws (a ConfigError, for a one-line message). */
  refuse?: (message: string) => Error
}

export interface Hosting {
  /** The default world's database to open the world over: the log's data, or an empty one the world seeds. */
  readonly db: Db
  /**
   * Replicates the default world opened over `db` (and, when the log was empty, writes its data as
   * the first snapshot), then shares the registry's worlds and tenants.
   */
  attach(worlds: WorldRegistry): Promise<HostedWorlds>
  /** Gives up the start (the world could not be opened). */
  abandon(): Promise<void>
  close(): Promise<void>
}

export async function openHosting (settings: HostingSettings): Promise<Hosting> {
  const report = settings.onError ?? (() => undefined)
  const pool = openPool({ url: settings.url, onError: (e) => report(`PostgreSQL connection: ${e.message}`) })
  let turn: LogTurn | undefined
  try {
    await migratePostgres(pool, settings.postgresMigrationsDir)
    const instance = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
    const disagreements = await agreeOnSettings(pool, settings.agreed ?? [], instance)
    if (disagreements.length > 0) throw (settings.refuse ?? ((message: string) => new Error(message)))(disagreementMessage(disagreements))
    // strict reads: a commit is acknowledged once every instance reading has heard it
    const delivery = settings.reads === 'notified' ? undefined : new CommitDelivery(pool, instance)
    const log = new WorldLog(pool, instance, delivery)
    turn = await log.turn(DEFAULT_WORLD_ID)
    const entries = await turn.entriesAfter(0)
    let db: Db
    const changes: Effect[] = []
    if (entries.length === 0) {
      db = openDatabase({ file: ':memory:', migrationsDir: settings.migrationsDir })
    } else {
      db = openLogSnapshot(entries[0].body ?? Buffer.alloc(0), settings.migrationsDir)
      const sql = new UnitOfWork(db)
      for (const entry of entries.slice(1)) sql.replay(decodeSteps(entry.body ?? Buffer.alloc(0)))
      for (const entry of entries) changes.push(...((entry.effects ?? []) as Effect[]))
    }
    const seq = entries.at(-1)?.seq ?? 0
    const starting = turn
    const leases = new Leases({ url: settings.url, onError: report })
    const journals = new SharedJournals(new JournalStore(pool, instance), report, new ExaminerStore(pool))
    let listener: Listener | undefined
    let lease: ReaderLease | undefined
    let hosted: HostedWorlds | undefined
    return {
      db,
      async attach (worlds) {
        const world = worlds.default
        const applied = seq === 0 ? await starting.append('snapshot', pagesOf(world.db)) : seq
        await starting.commit()
        const catalogue = new Catalogue(pool, delivery)
        const heads = new FreshHeads(async () => await catalogue.heads(), settings.reads)
        const reader = new ReaderLease(instance, (until) => heads.trust(until), report)
        lease = reader
        const replica = new WorldReplica(world, log, { migrationsDir: settings.migrationsDir, leases }, applied)
        await journals.start()
        hosted = new HostedWorlds(worlds, catalogue, log, heads, replica, { migrationsDir: settings.migrationsDir, leases, journals, copyIdleMs: settings.copyIdleMs })
        // after the replica (a simulator the effects start runs under its lease, never on its own) and
        // after the shared journals (which share the world's examiner sessions the effects open)
        applyEffects(world, changes)
        worlds.share(hosted)
        await hosted.fresh()
        const shared = hosted
        listener = new Listener(settings.url, {
          onCommit: (name, announced) => shared.announced(name === CATALOGUE_NOTICE ? undefined : name, announced),
          onJournalRead: (reader) => { if (reader !== instance) journals.heard() },
          onPing: (token) => reader.heard(token),
          onPong: (payload) => delivery?.answered(payload),
          // once listening, registered as a reader, then the heads: whatever was committed while the
          // connection was down is not missed, nor what a writer that did not see the registration
          // committed; and the journal is shipped, in case a read was announced meanwhile
          onUp: async (client) => {
            await reader.register(client)
            heads.listenerUp(await catalogue.heads(client))
            journals.listenerUp()
            journals.heard()
          },
          onDown: () => {
            reader.dropped()
            heads.listenerDown()
            journals.listenerDown()
          }
        }, report)
        return hosted
      },
      async abandon () {
        await leases.close()
        await journals.close()
        await starting.rollback()
      },
      async close () {
        hosted?.close()
        lease?.dropped()
        await listener?.close()
        await leases.close()
        await journals.close()
        await pool.end()
      }
    }
  } catch (e) {
    await turn?.rollback().catch(() => undefined)
    await pool.end().catch(() => undefined)
    throw e
  }
}

interface ListenerEvents {
  /** A commit to a world's log, or a change of the catalogue (CATALOGUE_NOTICE). */
  onCommit: (name: string, seq: number) => void
  /** A reader announced a read of the request journal (journal-store.ts): the instance it runs on. */
  onJournalRead: (reader: string) => void
  /** A writer's ping after a commit (commit-delivery.ts), and a reader's answers to pings. */
  onPing: (token: string) => void
  onPong: (payload: string) => void
  onUp: (client: pg.Client) => Promise<void>
  onDown: () => void
}

/**
 * Listens to the log's notifications on a connection of its own, reconnecting when it drops: a
 * notification lost meanwhile costs a request the replay it would have saved, never a stale answer.
 */
class Listener {
  private client: pg.Client | undefined
  private closed = false
  private retry: NodeJS.Timeout | undefined

  constructor (private readonly url: string, private readonly events: ListenerEvents, private readonly report: (message: string) => void) {
    void this.connect()
  }

  private async connect (): Promise<void> {
    if (this.closed) return
    // eslint-disable-next-line camelcase -- pg's own option names
    const client = new pg.Client({ connectionString: this.url, application_name: 'agency-sandbox listener', keepAlive: true })
    this.client = client
    const again = (e?: Error) => {
      if (this.closed || this.client !== client) return
      this.client = undefined
      this.events.onDown()
      if (e !== undefined) this.report(`PostgreSQL notifications: ${e.message}; listening again in 1 s`)
      client.end().catch(() => undefined)
      this.retry = setTimeout(() => { void this.connect() }, 1000)
    }
    client.on('error', again)
    client.on('end', () => again())
    client.on('notification', (message) => {
      if (message.channel === JOURNAL_CHANNEL) {
        this.events.onJournalRead(message.payload ?? '')
        return
      }
      if (message.channel === PING_CHANNEL) {
        this.events.onPing(message.payload ?? '')
        return
      }
      if (message.channel === PONG_CHANNEL) {
        this.events.onPong(message.payload ?? '')
        return
      }
      const [name, seq] = (message.payload ?? '').split(' ')
      if (name !== undefined && seq !== undefined) this.events.onCommit(name, Number(seq))
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${LOG_CHANNEL}`)
      await client.query(`LISTEN ${JOURNAL_CHANNEL}`)
      await client.query(`LISTEN ${PING_CHANNEL}`)
      await client.query(`LISTEN ${PONG_CHANNEL}`)
      await this.events.onUp(client)
    } catch (e) {
      again(e as Error)
    }
  }

  async close (): Promise<void> {
    this.closed = true
    clearTimeout(this.retry)
    await this.client?.end().catch(() => undefined)
  }
}
