import type { Readable } from 'node:stream'
import type { Db } from '../../db/database.js'
import type { UnitOfWork } from '../../db/index.js'
import { createSessionRepository } from '../../db/sessions.js'
import { Clock } from '../clock.js'
import { CREATE_CLIENT_RATE } from '../create-client.js'
import { createExaminer, type Examiner } from '../examiner/sessions.js'
import { Faults } from '../faults.js'
import { Journal } from '../journal.js'
import { createSimulator } from '../simulator.js'
import { SlidingWindow } from '../sliding-window.js'
import { worldDeleted } from '../../errors.js'
import { TokenHolders } from './control-tokens.js'
import { RequestTurns } from './request-turns.js'
import { WriteBatch } from './write-batch.js'
import type { FixtureRunner } from './fixture-runner.js'
import { pagesOf, sha256Hex, type WorldContent } from './starts.js'
import { stateDocument } from './state-document.js'
import { bytesOf, openWorldData, type WorldData } from './world-data.js'
import type { ResetPart } from './reset-parts.js'
import { clientIdInWorld, DEFAULT_WORLD_ID, ownSecret, worldIdOfClientId } from './world-ids.js'
import { invalidField } from '../../errors.js'
import type { ReportWorld } from '../../schemas/examiner.js'

/** A world's database up to this size writes its state document on the event loop (a few milliseconds; the worker's round trip costs more). */
export const INLINE_STATE_BYTES = 512 * 1024

export { RESET_PARTS, type ResetPart } from './reset-parts.js'
export type { WorldContent, WorldStart } from './starts.js'

/** The digest of what a reset loaded: the fixture's bytes as posted, else the snapshot swapped in (computed once). */
function digestOf (content: WorldContent): () => Promise<string> {
  const digest = content.digest !== undefined ? Promise.resolve(content.digest) : 'snapshot' in content ? sha256Hex(content.snapshot) : Promise.resolve('unknown')
  digest.catch(() => undefined)
  return () => digest
}

import type { ByteAccount, WorldDataFacts, WorldListing, WorldOptions } from './world-options.js'
export type { ByteAccount, KnownWorld, WorldDataFacts, WorldListing, WorldOptions } from './world-options.js'

/**
 * One world: everything a sandbox holds, isolated from every other world of the process. Its data
 * (integrations, agencies, offices, users, clients, writes) lives in one database with its read
 * model; its instruments (clock, journal, faults, rate windows, simulator, examiner sessions) live
 * beside it and survive a reset of the data. Partner requests reach a world by its integrations'
 * Client Ids (see WorldRegistry); control requests by its id.
 */
export class World {
  readonly id: string
  readonly name: string
  readonly token: string | undefined
  readonly tokenKey: string | undefined
  readonly tenantId: string | undefined
  readonly createdAtMs: number
  readonly ttlMs: number
  lastUsedMs: number
  readonly clock: Clock
  readonly journal: Journal
  readonly faults = new Faults()
  readonly createBudget = new SlidingWindow(CREATE_CLIENT_RATE.max, CREATE_CLIENT_RATE.windowMs)
  /** Its requests in progress, bounded so that one world's traffic does not fill every turn of the event loop. */
  readonly requests: RequestTurns
  readonly simulator: ReturnType<typeof createSimulator>
  /** Its partner writes of a turn, committed together (a world in a file; one in memory commits each at once). */
  readonly writeBatch: WriteBatch = new WriteBatch(this)
  /** The world's examiner sessions (a field, not a getter: every partner request asks whether sessions record). */
  examiner: Examiner
  private data: WorldData
  private dataSource: string
  /** The SHA-256 of what the data was loaded from: the start's, or the fixture or snapshot of the last reset. */
  private dataDigest: () => Promise<string>
  /** True while the data is the world's start as a reset left it (any commit since clears it). */
  private dataAtStart = false
  private sessions: ReturnType<typeof createSessionRepository>
  /**
   * Where this world's examiner sessions are kept: the process's database (worlds created later keep
   * theirs there too), or, in hosted mode, a database of the world's own that its log keeps.
   */
  private recordsSql: UnitOfWork
  private readonly realNow: () => number
  /** Set once the world is deleted (or expired): nothing is applied to it from then on. */
  private gone = false
  /** Bytes its data took at its last commit (or load): the registry sums these. */
  private heldBytes = 0
  /** A commit since heldBytes was asked (worlds no account bounds only). */
  private heldStale = false
  private account: ByteAccount | undefined
  private bound: number | undefined

  constructor (private readonly options: WorldOptions) {
    this.id = options.id
    this.name = options.name
    this.token = options.token
    this.tokenKey = options.tokenKey ?? (options.token === undefined ? undefined : TokenHolders.keyOf(options.token))
    this.tenantId = options.tenantId
    this.ttlMs = options.ttlMs
    this.realNow = options.realNow ?? Date.now
    this.createdAtMs = options.createdAtMs ?? this.realNow()
    this.lastUsedMs = options.lastUsedMs ?? this.createdAtMs
    this.clock = options.clock ?? new Clock()
    this.journal = new Journal(options.journalSize, options.journalBytes)
    this.requests = new RequestTurns(options.requestsInProgress === 0 ? Infinity : options.requestsInProgress)
    this.account = options.account
    this.bound = options.maxBytes
    this.data = this.openData(options.db)
    this.dataSource = options.start.source
    this.dataDigest = () => options.start.digest(this.data)
    this.simulator = createSimulator(() => this.data.repos, this.clock, options.loadFaker)
    this.recordsSql = options.records ?? this.data.sql
    this.sessions = createSessionRepository(this.recordsSql, this.id)
    this.examiner = this.openExaminer()
  }

  private openExaminer (): Examiner {
    return createExaminer({
      repo: this.sessions,
      clock: this.clock,
      clientsOf: (agencyId) => this.data.clientVersions(agencyId),
      agencyExists: (agencyId) => this.data.repos.agencies.getAgency(agencyId) !== undefined,
      reports: this.options.reports.of(this.id),
      worldFacts: () => this.reportFacts()
    })
  }

  /** Where this world's examiner sessions are kept. */
  get records (): UnitOfWork { return this.recordsSql }

  /**
   * Hosted mode: the examiner sessions are those of this database from now on (the world's own,
   * loaded from its log when this instance took the world); the examiner stops writing to the one before.
   */
  adoptRecords (records: UnitOfWork): void {
    this.examiner.close()
    this.recordsSql = records
    this.sessions = createSessionRepository(records, this.id)
    this.examiner = this.openExaminer()
  }

  /** The world as an examiner report names it: its id and name, its tenant, the digest of what its data was loaded from. */
  async reportFacts (): Promise<ReportWorld> {
    const tenant = this.tenantId === undefined ? null : { id: this.tenantId, name: this.options.tenantOf?.(this.tenantId)?.name ?? this.tenantId }
    return { id: this.id, name: this.name, tenant, startDigest: await this.dataDigest() }
  }

  /**
   * The Client Id a session of this world records, for the one asked: one of the world's own, or,
   * in a world created, the fixture's bare Client Id taken as the world's (`abc` for
   * `abc@<world id>`). Any other is a 400 naming the world's Client Ids: a session of a Client Id
   * no request can present would record nothing.
   */
  sessionClientId (asked: string | undefined): string | undefined {
    if (asked === undefined) return undefined
    const ids = this.admin.listIntegrations().map((i) => i.clientId)
    if (ids.includes(asked)) return asked
    const own = this.id === DEFAULT_WORLD_ID || worldIdOfClientId(asked) !== undefined ? undefined : clientIdInWorld(asked, this.id)
    if (own !== undefined && ids.includes(own)) return own
    const listed = ids.length <= 20 ? ids.join(', ') : `${ids.slice(0, 20).join(', ')} and ${ids.length - 20} more`
    throw invalidField('clientId', `'${asked.slice(0, 100)}' is not a Client Id of world ${this.id}; its Client Ids are ${listed || '(none)'} (or leave clientId out to record every integration)`)
  }

  /** The world's data over this database, every integration with its Client Id in this world. */
  private openData (db: Db): WorldData {
    const data = openWorldData(db, {
      clock: this.clock,
      createBudget: this.createBudget,
      readModel: this.options.readModel,
      clientIdOf: this.id === DEFAULT_WORLD_ID ? undefined : (clientId) => clientIdInWorld(clientId, this.id),
      secretOf: this.options.ownSecrets === true && this.tokenKey !== undefined ? ownSecret.bind(undefined, this.tokenKey) : undefined,
      // what a content of this size would take the world to, beyond the free pages it fills first
      room: (bytes) => this.account?.admit(this, this.heldBytes + Math.max(0, bytes - this.data.freeBytes()))
    })
    // the examiner logs which clients each commit changed, among the requests its sessions record
    // (the first data is opened before the examiner exists; nothing records then)
    data.sql.onCommit(({ clients }) => {
      this.dataAtStart = false
      // a world no account bounds (the default world, run locally) asks its size when it is read:
      // asked on every commit, it was a few percent of a log-note write
      if (this.account === undefined) this.heldStale = true
      else this.heldBytes = data.bytes()
      this.examiner?.noteChanges(clients)
    })
    data.adoptIntegrations()
    this.heldBytes = data.bytes()
    this.heldStale = false
    // from now on a commit that would take the world past its bound, or the process past its own, rolls back with a 507
    data.sql.checkBeforeCommit(() => {
      if (this.account === undefined) return
      const bytes = data.bytes()
      if (bytes > this.heldBytes) this.account.admit(this, bytes)
    })
    return data
  }

  /** Bytes the world's data may take (undefined: unbounded). */
  get maxBytes (): number | undefined { return this.bound }

  /** Bytes its data took at its last commit or load (what the registry sums; bytes() asks the database). */
  get held (): number {
    if (this.heldStale) this.bytes()
    return this.heldBytes
  }

  /** From now on the world's growth counts against `maxBytes` and the account's bound (hosted mode's default world). */
  countIn (account: ByteAccount, maxBytes: number): void {
    this.bytes()
    this.account = account
    this.bound = maxBytes
  }

  /** True once the world is deleted (or expired): requests still in flight to it answer 401 or 404. */
  get deleted (): boolean { return this.gone }

  /** Hosted mode: the world, given up here, was deleted meanwhile (by any instance): requests still in flight to it answer as deleted. */
  markDeleted (): void {
    this.gone = true
  }

  /** Throws the 404 of a deleted world (the HTTP layer makes it a partner's 401): a step that would apply something to it stops. */
  private checkLive (): void {
    if (this.gone) throw worldDeleted(this.id)
  }

  /** Loads the world's start, or the fixture given, into its data. */
  async restoreData (next?: WorldContent): Promise<void> {
    this.checkLive()
    const db = await this.options.start.restore(this.data, this.clock, next)
    if (this.gone) {
      // deleted while its start was read: the copy made for it goes, unused
      if (db !== this.data.db && db.open) db.close()
      this.checkLive()
    }
    if (db === this.data.db) {
      this.data.adoptIntegrations()
    } else {
      // a database swapped in whole (a snapshot) counts against the bounds before it replaces the old one
      try {
        this.account?.admit(this, bytesOf(db)())
      } catch (e) {
        db.close()
        throw e
      }
      const old = this.data.db
      this.data = this.openData(db)
      old.close()
      this.dataAtStart = next === undefined
    }
    this.dataSource = next?.source ?? this.options.start.source
    this.dataDigest = next === undefined ? () => this.options.start.digest(this.data) : digestOf(next)
  }

  /**
   * Replaces the world's database with another holding its data (hosted mode: the data its log
   * holds, loaded when this instance took the world); the instruments stay as they are.
   */
  adoptDatabase (db: Db): void {
    if (this.gone) {
      if (db.open) db.close()
      return
    }
    const old = this.data.db
    this.data = this.openData(db)
    this.dataAtStart = false
    if (old !== db && old.open) old.close()
  }

  /** True while the data is the world's start as a reset left it, nothing committed since (hosted mode logs it without its body). */
  get atStart (): boolean { return this.dataAtStart }

  /** The one way the world's data is written (hosted mode captures its commits for the world's log). */
  get sql (): UnitOfWork { return this.data.sql }
  /** True when its integrations get secrets of the world's own (the create answer gives them), false when they keep the fixture's. */
  get ownSecrets (): boolean { return this.options.ownSecrets === true }
  get access () { return this.data.access }
  get clients () { return this.data.clients }
  get writes () { return this.data.writes }
  get admin () { return this.data.admin }
  get creator () { return this.data.creator }
  get patchAgency () { return this.data.patchAgency }
  get offices () { return this.data.offices }
  get integrations () { return this.data.integrations }
  get activeUsers () { return this.data.activeUsers }
  /** The whole data as a fixture document: resetting to it reproduces every answer. */
  state () { return this.data.state() }
  /**
   * The whole data as a fixture document's JSON (GET /_sandbox/state). A small world's is written
   * here, whole; a larger one's on the fixture worker (state-document.ts), so that writing it does
   * not hold the event loop (a world of 100,000 clients held it for seconds), a piece at a time as
   * it is read.
   */
  async stateDocument (fixtures: FixtureRunner): Promise<Buffer[] | Readable> {
    const { db, repos } = this.data
    if (this.bytes() <= INLINE_STATE_BYTES) return stateDocument(repos)
    return await fixtures.state(db.memory ? { snapshot: pagesOf(db) } : { file: db.name }, this.id)
  }

  /** True when a reset to a fixture swaps the world's database for a snapshot of it (WorldStart.swaps). */
  get swapsData (): boolean { return this.options.start.swaps }
  /** Where the data came from: the start, or the fixture of the last reset. */
  get source (): string { return this.dataSource }
  /** Bytes the world's database takes now. */
  bytes (): number {
    this.heldStale = false
    this.heldBytes = this.data.bytes()
    return this.heldBytes
  }

  /** The database (tests and the registry's fork read it whole). */
  get db (): Db { return this.data.db }

  counts () {
    return { ...this.data.counts(), journal: this.journal.size, faults: this.faults.list().length }
  }

  /** What the world's data holds: what its database takes, its integrations' Client Ids, its counts. */
  dataFacts (): WorldDataFacts {
    return { bytes: this.bytes(), integrations: this.admin.listIntegrations().map((i) => i.clientId), counts: this.data.counts() }
  }

  /** The world as GET /_sandbox/worlds lists it. */
  listing (): WorldListing {
    return { world: this, data: this.dataFacts(), journal: this.journal.size, faults: this.faults.list().length }
  }

  /** The world was used now (a partner or control request): its idle time starts again. */
  touch (): void {
    this.lastUsedMs = this.realNow()
  }

  /** When the world expires if nobody uses it (undefined: kept). */
  get expiresAtMs (): number | undefined {
    return this.ttlMs === 0 ? undefined : this.lastUsedMs + this.ttlMs
  }

  /**
   * A clean slate: open examiner sessions end (their reports say so), the simulator stops, the
   * clock runs in real time again, the data returns to the world's start (or the given fixture)
   * with its pending writes, and the journal, fault rules and create-client rate windows are
   * emptied; `keep` names the parts to leave alone.
   */
  async reset (next?: WorldContent, keep: readonly ResetPart[] = []): Promise<void> {
    this.checkLive()
    const keeps = (part: ResetPart) => keep.includes(part)
    // open sessions end first: their reports judge the data they saw, before it is reset
    if (!keeps('sessions')) await this.examiner.endAll('reset')
    if (!keeps('simulator')) this.simulator.stop()
    if (!keeps('clock')) this.clock.reset()
    this.checkLive()
    if (!keeps('data')) await this.restoreData(next)
    this.checkLive()
    if (!keeps('journal')) await this.journal.clear()
    if (!keeps('faults')) this.faults.clear()
    if (!keeps('rateWindows')) this.createBudget.clear()
  }

  /** Stops the world's timers and writes what its examiner holds (at shutdown, before the databases close). */
  close (): void {
    this.simulator.stop()
    this.examiner.close()
  }

  /**
   * Ends the world here: its timers stop, its database is closed, and its sessions are forgotten
   * unless kept (hosted mode: the world's log keeps them for the instance that takes it next).
   * Forgotten, the world is deleted: requests still in flight to it apply nothing.
   */
  destroy (sessions: 'forget' | 'keep' = 'forget'): void {
    if (sessions === 'forget') this.gone = true
    this.close()
    if (sessions === 'forget') this.sessions.deleteAll()
    if (this.data.db.open) this.data.db.close()
  }
}
