import type { Db } from '../../db/database.js'
import type { UnitOfWork } from '../../db/index.js'
import { worldDeleted } from '../../errors.js'

/**
 * The partner writes a world receives in one turn of the event loop, committed together at the
 * turn's end: one commit for them all (UnitOfWork.together), each still its own savepoint, so a
 * write refused undoes only itself. Each request is answered once the commit that holds its write
 * is done, never before: nothing is acknowledged that a crash could lose. A commit in a file is
 * the largest part of a log note's cost (its pages and their system calls): with the four notes a
 * turn starts sharing one, a note's statements cost about a third less, and the sandbox answered
 * 1.6 times as many notes a second. A world in memory commits for nothing: its writes run at once.
 * The works run in the check phase of the same turn, one after the other, with nothing between
 * them and the commit: no other request sees a write before it is committed.
 */

/** What the batch needs of its world, read when it commits: a reset may swap the data. */
export interface BatchWorld {
  readonly id: string
  readonly sql: UnitOfWork
  readonly db: Db
  /** True once the world is deleted: its writes are refused. */
  readonly deleted: boolean
}

interface Waiting {
  work: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

export class WriteBatch {
  private waiting: Waiting[] = []

  constructor (private readonly world: BatchWorld) {}

  /** True when the world's writes wait for the commit of their turn; false when each commits at once (a world in memory). */
  get batched (): boolean {
    return !this.world.db.memory
  }

  /** Runs `work` (a write and its checks, synchronous) in this turn's commit; settles once that commit is done. */
  run<T> (work: () => T): Promise<T> {
    // at once: the executor runs it now, and a throw is the rejection
    if (!this.batched) return new Promise<T>((resolve) => resolve(work()))
    return new Promise<T>((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(this.commit)
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  private readonly commit = (): void => {
    const waiting = this.waiting
    this.waiting = []
    let outcomes: Array<{ value: unknown } | { error: unknown }>
    try {
      if (this.world.deleted) throw worldDeleted(this.world.id)
      outcomes = this.world.sql.together(waiting.map((w) => w.work))
    } catch (error) {
      // nothing of any of them was applied
      for (const w of waiting) w.reject(error)
      return
    }
    outcomes.forEach((outcome, i) => {
      if ('error' in outcome) waiting[i].reject(outcome.error)
      else waiting[i].resolve(outcome.value)
    })
  }
}
