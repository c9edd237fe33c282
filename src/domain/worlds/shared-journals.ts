import type { ExaminerStore, ShippedRecord } from '../../db/postgres/examiner-store.js'
import type { JournalStore, ShippedEntry } from '../../db/postgres/journal-store.js'
import { journalIncomplete, storageUnreachable } from '../../errors.js'
import { FLUSH_INTERVAL_MS } from '../examiner/sessions.js'
import type { SharedSessions, SharedSessionsOptions } from '../examiner/shared-sessions.js'
import { matchingPaths, type Journal, type JournalFilter } from '../journal.js'

/**
 * Hosted mode: the request journals of every instance read as one (db/postgres/journal-store.ts).
 * Each instance journals what it answers in its worlds' journals, in memory, as on its own, and
 * ships the entries to PostgreSQL when a reader anywhere announces a read (or every second while
 * its listening connection is down, when it cannot hear one). A read announces itself, ships this
 * instance's entries, waits until every instance alive has shipped for it, moves what was shipped
 * into the journal in the order the requests arrived, then reads: every request answered anywhere
 * before the read began is in its answer, in order.
 *
 * The requests examiner sessions record travel the same way (examiner/shared-sessions.ts): shipped
 * with the entries, and on their own every FLUSH_INTERVAL_MS while some wait, and moved with them.
 */

/** How often an instance says it is alive (and ships, while it cannot hear announcements). */
const BEAT_MS = 1000
/** How long a read waits for the instances alive to ship before it answers 503. */
const WAIT_MS = 2500
/** Between two looks at which instances have shipped. */
const POLL_MS = 5
/** Records kept to ship again at most while PostgreSQL cannot take them (a session's cap). */
const MAX_UNSENT = 200_000

/** How a world shares its examiner sessions (World.shareSessions). */
type ShareSessions = (options: Pick<SharedSessionsOptions, 'store' | 'synced' | 'shipSoon'>) => SharedSessions

export class SharedJournals {
  /** The journal of each world held here, by world id, and the last local id shipped from it. */
  private readonly journals = new Map<string, { journal: Journal, shipped: number, sessions?: SharedSessions }>()
  private shipping: Promise<void> = Promise.resolve()
  private listening = false
  private readonly timer: NodeJS.Timeout
  /** The ship of recorded requests waiting (shipSoon). */
  private soon: NodeJS.Timeout | undefined
  /** Records a ship failed to write: shipped with the next. */
  private unsent: ShippedRecord[] = []

  constructor (
    private readonly store: JournalStore,
    private readonly report: (message: string) => void,
    private readonly examinerStore?: ExaminerStore
  ) {
    this.timer = setInterval(() => { void this.beat() }, BEAT_MS)
    this.timer.unref()
  }

  async start (): Promise<void> {
    await this.store.register()
  }

  /**
   * A world held here from now on: its journal is read and cleared through the shared one, and
   * its examiner sessions (given how to share them) are those every instance shares.
   */
  add (worldId: string, journal: Journal, shareSessions?: ShareSessions): void {
    const sessions = shareSessions === undefined || this.examinerStore === undefined
      ? undefined
      : shareSessions({ store: this.examinerStore, synced: async () => await this.synced(), shipSoon: () => this.shipSoon() })
    this.journals.set(worldId, { journal, shipped: 0, sessions })
    journal.share({
      listJson: async (f) => await this.listJson(worldId, f),
      clear: async () => await this.clear(worldId)
    })
  }

  remove (worldId: string): void {
    this.journals.delete(worldId)
  }

  /** A reader announced a read (the listening connection heard it). */
  heard (): void {
    void this.ship().catch((e: Error) => this.report(`shipping the request journal: ${e.message}`))
  }

  listenerUp (): void {
    this.listening = true
  }

  listenerDown (): void {
    this.listening = false
  }

  async close (): Promise<void> {
    clearInterval(this.timer)
    clearTimeout(this.soon)
    // what sessions recorded here is not lost with the instance
    await this.ship().catch(() => undefined)
    await this.store.unregister().catch(() => undefined)
  }

  private async beat (): Promise<void> {
    try {
      if (this.listening) await this.store.beat()
      else await this.ship()
    } catch (e) {
      this.report(`the request journal's heartbeat: ${(e as Error).message}`)
    }
  }

  /**
   * Ships what this instance answered since its last ship, one ship at a time; `entries` false:
   * only the examiner's records (the journal's entries wait for a read, which costs less).
   */
  async ship (entries = true): Promise<void> {
    const next = this.shipping.catch(() => undefined).then(async () => await this.shipOnce(entries))
    this.shipping = next
    await next
  }

  /** Recorded requests wait: shipped within FLUSH_INTERVAL_MS (one ship for all that arrive meanwhile). */
  private shipSoon (): void {
    if (this.soon !== undefined) return
    this.soon = setTimeout(() => {
      this.soon = undefined
      void this.ship(false).catch((e: Error) => this.report(`shipping the examiner's records: ${e.message}`))
    }, FLUSH_INTERVAL_MS)
    this.soon.unref()
  }

  private async shipOnce (withEntries: boolean): Promise<void> {
    // asked before the entries are collected: every read announced by then began before they were
    const read = withEntries ? await this.store.lastRead() : undefined
    const entries: ShippedEntry[] = []
    const reached = new Map<string, number>()
    for (const [worldId, held] of withEntries ? this.journals : []) {
      const texts = await held.journal.textsAfter(held.shipped)
      if (texts.length === 0) continue
      reached.set(worldId, texts[texts.length - 1].id)
      for (const e of texts) {
        entries.push({ localId: e.id, realMs: e.realMs, worldId, atMs: e.atMs, method: e.method, path: e.path, agencyId: e.agencyId, status: e.status, entry: e.text })
      }
    }
    const records = this.unsent
    this.unsent = []
    for (const held of this.journals.values()) {
      // the timer's ship (records alone) waits for listings being answered; a read's takes everything
      for (const record of held.sessions?.takeShipment(!withEntries) ?? []) records.push(record)
    }
    try {
      await this.store.ship(read, entries, (worldId) => this.journals.get(worldId)?.journal.capacity ?? 0, records)
    } catch (e) {
      this.unsent = records.slice(-MAX_UNSENT)
      throw e
    }
    for (const [worldId, id] of reached) {
      const held = this.journals.get(worldId)
      if (held !== undefined) held.shipped = Math.max(held.shipped, id)
    }
  }

  /** Announces a read and waits until every instance alive has shipped for it, and what they shipped is moved. */
  private async synced (): Promise<void> {
    try {
      const read = await this.store.announceRead()
      await this.ship()
      const deadline = Date.now() + WAIT_MS
      for (;;) {
        const behind = await this.store.behind(read)
        if (behind.length === 0) break
        if (Date.now() > deadline) throw journalIncomplete(behind)
        await new Promise((resolve) => setTimeout(resolve, POLL_MS))
      }
      await this.store.publish((worldId) => {
        const journal = this.journals.get(worldId)?.journal
        return { capacity: journal?.capacity ?? 0, budgetBytes: journal?.budgetBytes ?? 0 }
      })
    } catch (e) {
      throw storageUnreachable(e)
    }
  }

  private async listJson (worldId: string, f: JournalFilter): Promise<string> {
    await this.synced()
    const sinceId = f.since !== undefined && /^\d+$/.test(f.since) ? Number(f.since) : undefined
    const sinceMs = f.since !== undefined && sinceId === undefined ? Date.parse(f.since) : undefined
    let rows = await this.store.entries(worldId, {
      method: f.method?.toUpperCase(),
      agencyId: f.agencyId,
      status: f.status,
      sinceId,
      sinceMs: sinceMs === undefined || Number.isNaN(sinceMs) ? undefined : sinceMs
    }).catch((e: unknown) => { throw storageUnreachable(e) })
    if (f.path !== undefined) rows = await matchingPaths(rows, f.path)
    if (f.limit !== undefined) rows = rows.slice(Math.max(0, rows.length - f.limit))
    return `[${rows.map((row) => `{"id":${row.id},${row.entry.slice(1)}`).join(',')}]`
  }

  /** Forgets the world's entries every instance answered before now. */
  private async clear (worldId: string): Promise<void> {
    await this.synced()
    await this.store.clear(worldId).catch((e: unknown) => { throw storageUnreachable(e) })
  }
}
