import type Database from 'better-sqlite3'
import type { Db } from './database.js'

/** A prepared statement that only reads. */
export type Query<Params extends unknown[] | object = unknown[], Row = unknown> = Database.Statement<Params, Row>

/** A prepared statement that changes the database: every run is part of a transaction. */
export interface Command<Params extends unknown[] | object = unknown[]> {
  run(...params: Params extends unknown[] ? Params : [Params]): Database.RunResult
}

/** What readers of the data need to know about writes to it. */
export interface ChangeSignal {
  /** Calls `listener` once after each committed transaction (never after a rollback). */
  onCommit(listener: () => void): void
  /** True while a transaction is open: what it wrote is not committed yet. */
  readonly inTransaction: boolean
}

/**
 * The one way to change the database. Repositories get their statements from here and never see
 * the connection: `query` refuses SQL that writes, and a `command` always runs inside
 * `transaction`, joining the open one or opening its own. So every write, however it is added,
 * ends in a commit, and a commit that ran a command signals a change, once, to whoever keeps
 * answers derived from the data (the read model): no write can leave a cached read stale.
 */
export class UnitOfWork implements ChangeSignal {
  private depth = 0
  /** A command ran in the open transaction: its commit signals a change. */
  private changed = false
  private readonly listeners: Array<() => void> = []

  constructor (private readonly db: Db) {}

  get inTransaction (): boolean {
    return this.depth > 0
  }

  onCommit (listener: () => void): void {
    this.listeners.push(listener)
  }

  /** A read-only statement; SQL that would change the database is refused here, at preparation. */
  query<Params extends unknown[] | object = unknown[], Row = unknown>(sql: string): Query<Params, Row> {
    const statement = this.db.prepare<Params, Row>(sql)
    if (!statement.readonly) throw new Error(`a query must not change the database; prepare it as a command: ${sql}`)
    return statement
  }

  /** A statement that changes the database; each run joins the open transaction or opens one. */
  command<Params extends unknown[] | object = unknown[]>(sql: string): Command<Params> {
    return this.prepareCommand(sql, true)
  }

  /**
   * A statement that writes only to a log no answer is derived from (the examiner's recorded
   * requests): it runs in a transaction like any command, but alone it signals no change, as
   * signalling each flush would drop every cached read while a session records reads. A
   * transaction that also runs a command signals as usual.
   */
  logCommand<Params extends unknown[] | object = unknown[]>(sql: string): Command<Params> {
    return this.prepareCommand(sql, false)
  }

  private prepareCommand<Params extends unknown[] | object>(sql: string, changesData: boolean): Command<Params> {
    const statement = this.db.prepare(sql)
    const run = (params: unknown[]): Database.RunResult => {
      if (this.depth === 0) return this.transaction(() => run(params))
      if (changesData) this.changed = true
      return statement.run(...params)
    }
    return { run: (...params) => run(params) }
  }

  /**
   * Runs `fn` in a transaction and returns its result. A call inside another joins it (as a
   * savepoint: if it throws, only its own writes are undone) and commits with it. After the
   * outermost COMMIT the change is signalled once, if a command ran; a rollback signals nothing,
   * as nothing changed.
   */
  transaction<T>(fn: () => T): T {
    if (this.depth > 0) return this.nested(fn)
    this.depth = 1
    this.changed = false
    let result: T
    try {
      result = this.db.transaction(fn)()
    } finally {
      this.depth = 0
    }
    if (this.changed) {
      this.changed = false
      for (const listener of this.listeners) listener()
    }
    return result
  }

  private nested<T>(fn: () => T): T {
    this.depth++
    try {
      return this.db.transaction(fn)()
    } finally {
      this.depth--
    }
  }
}
