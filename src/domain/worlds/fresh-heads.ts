import type { Heads } from '../../db/postgres/catalogue.js'

/**
 * How a request learns what was committed elsewhere: `strict` asks the database for the heads
 * (shared by the requests of one turn; no read can miss a write acknowledged before it); `notified`
 * trusts the commits announced on the listening connection while it is up (no question per request;
 * a read that arrives at one instance before the announcement of a write acknowledged by another
 * can miss it), and asks as `strict` does while the connection is down.
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

  constructor (private readonly read: () => Promise<Heads>, private readonly reads: ReplicaReads = 'strict') {}

  get (): Promise<Heads> {
    if (this.listening && this.reads === 'notified') return Promise.resolve(this.announced)
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

  /** It is down: requests ask for the heads themselves. */
  listenerDown (): void {
    this.listening = false
  }
}
