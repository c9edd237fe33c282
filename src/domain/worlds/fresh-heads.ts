import { performance } from 'node:perf_hooks'
import type { Heads } from '../../db/postgres/catalogue.js'

/**
 * How a request learns what was committed elsewhere. `strict`: no read misses a write acknowledged
 * before it. Writers acknowledge a commit once every instance has heard it announced, or has run
 * out of its lease (commit-delivery.ts); so an instance trusts what it heard while it listens
 * within its lease, and otherwise asks the database for the heads (shared by the requests of one
 * turn). `notified`: writers do not wait, and an instance trusts what it heard while it listens (a
 * read that arrives at one instance before the announcement of a write acknowledged by another
 * can miss it). Every instance over one database must read alike.
 */
export type ReplicaReads = 'strict' | 'notified'

/**
 * The heads (the catalogue's version, each world's last log entry) a request must be caught up
 * to before it is answered, read for every request that may depend on them, and shared: the
 * requests taken from the sockets in one turn of the event loop all arrived before the first of
 * them sent its question (the turn began once they were there), so one answer covers them all.
 * A later turn asks again, without waiting for the question still on its way.
 */
export class FreshHeads {
  private asked: Promise<Heads> | undefined
  /** What the listening connection announced, and whether it is up. */
  private readonly announced: Heads = { catalogue: 0, worlds: new Map() }
  private listening = false
  /** Until when (performance.now()) what was heard may be trusted under strict reads: the reader's lease. */
  private trustedUntil = 0

  constructor (private readonly read: () => Promise<Heads>, private readonly reads: ReplicaReads = 'strict') {}

  get (): Promise<Heads> {
    return Promise.resolve(this.now() ?? this.ask())
  }

  /** The heads when no question is needed: what was heard, while it may be trusted. */
  now (): Heads | undefined {
    return this.listening && (this.reads === 'notified' || performance.now() < this.trustedUntil) ? this.announced : undefined
  }

  private ask (): Promise<Heads> {
    if (this.asked === undefined) {
      const asked = this.read()
      this.asked = asked
      asked.catch(() => undefined)
      setImmediate(() => { if (this.asked === asked) this.asked = undefined })
    }
    return this.asked
  }

  /** A commit announced on the listening connection (a world's, or the catalogue's change). */
  announce (worldId: string | undefined, seq: number): void {
    if (worldId === undefined) this.announced.catalogue = Math.max(this.announced.catalogue, seq)
    else this.announced.worlds.set(worldId, Math.max(this.announced.worlds.get(worldId) ?? 0, seq))
  }

  /** The listening connection is up, from the heads read once it listens (nothing committed while it was down is missed). */
  listenerUp (heads: Heads): void {
    this.announce(undefined, heads.catalogue)
    for (const [id, seq] of heads.worlds) this.announce(id, seq)
    this.listening = true
  }

  /** The lease renewed (or, at 0, lost): under strict reads, what was heard is trusted until then. */
  trust (untilMs: number): void {
    this.trustedUntil = untilMs
  }

  /** It is down: requests ask for the heads themselves. */
  listenerDown (): void {
    this.listening = false
  }
}
