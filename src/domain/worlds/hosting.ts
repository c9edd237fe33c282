import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import pg from 'pg'
import { openEmptySchema, type Db } from '../../db/database.js'
import { Catalogue, CATALOGUE_CHANNEL } from '../../db/postgres/catalogue.js'
import { migratePostgres } from '../../db/postgres/migrate.js'
import { Owners } from '../../db/postgres/owners.js'
import { StorageProbe } from '../../db/postgres/probe.js'
import { openPool, WorldLog, type StorageBounds } from '../../db/postgres/world-log.js'
import { agreeOnSettings, type AgreedSetting } from '../../db/postgres/agreed-settings.js'
import type { CommitStats } from '../../metrics/histogram.js'
import { disagreementMessage } from './agreed-settings.js'
import { HostedWorlds } from './hosted-worlds.js'
import { Ownership } from './ownership.js'
import type { WorldRegistry } from './registry.js'

/**
 * Hosted mode: every world kept in PostgreSQL, each owned by one instance at a time, which runs it
 * in memory (ownership.ts, owned-world.ts); the catalogue of worlds and tenants shared
 * (hosted-worlds.ts), each change announced on one channel this listens to. An instance starts
 * holding no world: the default world's databases are empty until a request claims it.
 */

export interface HostingSettings {
  url: string
  /** SQLite's migrations (a snapshot written by an older instance is brought up to date). */
  migrationsDir: string
  /** PostgreSQL's own migrations. */
  postgresMigrationsDir: string
  leaseMs: number
  idleReleaseMs: number
  onError?: (message: string) => void
  /** Settings every instance must share (agreed-settings.ts): this instance's values. */
  agreed?: readonly AgreedSetting[]
  /** What a start refused for a disagreement throws (a ConfigError, for a one-line message). */
  refuse?: (message: string) => Error
  /** How long PostgreSQL may take (world-log.ts). */
  bounds?: StorageBounds
}

/** What an operator is told of the instance's PostgreSQL (/_sandbox/health, /_sandbox/metrics). */
export interface StorageFacts {
  readonly pool: pg.Pool
  readonly probe: StorageProbe
  /** Appends to the worlds' logs, and changes of the catalogue. */
  readonly appends: CommitStats
  readonly catalogueChanges: CommitStats
}

export interface Hosting {
  /** This instance's name among those over the same database. */
  readonly instance: string
  /** The default world's databases to open the world over (empty: loaded when this instance claims it). */
  readonly db: Db
  readonly records: Db
  readonly storage: StorageFacts
  /** Shares the registry's worlds and tenants through the catalogue. */
  attach(worlds: WorldRegistry): Promise<{ hosted: HostedWorlds, ownership: Ownership }>
  /** Gives back every world held (their last records written): the first step of a graceful stop. */
  releaseAll(): Promise<void>
  close(): Promise<void>
}

export async function openHosting (settings: HostingSettings): Promise<Hosting> {
  const report = settings.onError ?? (() => undefined)
  const pool = openPool({ url: settings.url, bounds: settings.bounds, onError: (e) => report(`PostgreSQL connection: ${e.message}`) })
  const instance = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
  try {
    await migratePostgres(pool, settings.postgresMigrationsDir)
    const disagreements = await agreeOnSettings(pool, settings.agreed ?? [], instance)
    if (disagreements.length > 0) throw (settings.refuse ?? ((message: string) => new Error(message)))(disagreementMessage(disagreements))
  } catch (e) {
    await pool.end().catch(() => undefined)
    throw e
  }
  const log = new WorldLog(pool, instance)
  const owners = new Owners(pool, instance, settings.leaseMs)
  const catalogue = new Catalogue(pool)
  let hosted: HostedWorlds | undefined
  let ownership: Ownership | undefined
  let listener: Listener | undefined
  return {
    instance,
    db: openEmptySchema(settings.migrationsDir),
    records: openEmptySchema(settings.migrationsDir),
    storage: { pool, probe: new StorageProbe(settings.url), appends: log.stats, catalogueChanges: catalogue.stats },
    async attach (worlds) {
      hosted = new HostedWorlds(worlds, catalogue, owners, { report })
      const shared = hosted
      ownership = new Ownership({
        registry: worlds,
        log,
        owners,
        migrationsDir: settings.migrationsDir,
        idleReleaseMs: settings.idleReleaseMs,
        rowOf: (id) => shared.find(id),
        catalogueFresh: async () => await shared.fresh(),
        startOf: (id) => shared.startOf(id),
        report
      })
      hosted.ownership = ownership
      worlds.share(hosted)
      await hosted.fresh()
      listener = new Listener(settings.url, (version) => shared.announced(version), () => { void shared.fresh().catch(() => undefined) }, report)
      return { hosted, ownership }
    },
    async releaseAll () {
      await ownership?.releaseAll()
    },
    async close () {
      hosted?.close()
      ownership?.close()
      await listener?.close()
      await pool.end()
    }
  }
}

/**
 * Listens for changes of the catalogue on a connection of its own, reconnecting when it drops: a
 * change missed meanwhile is read once it listens again (`onUp`), and a token is never trusted
 * without asking the catalogue's version first (hosted-worlds.ts).
 */
class Listener {
  private client: pg.Client | undefined
  private closed = false
  private retry: NodeJS.Timeout | undefined

  constructor (private readonly url: string, private readonly onChange: (version: number) => void, private readonly onUp: () => void, private readonly report: (message: string) => void) {
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
      if (e !== undefined) this.report(`PostgreSQL notifications: ${e.message}; listening again in 1 s`)
      client.end().catch(() => undefined)
      this.retry = setTimeout(() => { void this.connect() }, 1000)
    }
    client.on('error', again)
    client.on('end', () => again())
    client.on('notification', (message) => this.onChange(Number(message.payload ?? '0')))
    try {
      await client.connect()
      await client.query(`LISTEN ${CATALOGUE_CHANNEL}`)
      this.onUp()
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
