import type Database from 'better-sqlite3'
import type { Db } from './database.js'

type Args<Params> = Params extends unknown[] ? Params : [Params]

/** A statement that only reads, prepared on its first use. */
export interface Query<Params extends unknown[] | object = unknown[], Row = unknown> {
  get(...params: Args<Params>): Row | undefined
  all(...params: Args<Params>): Row[]
  /** Rows as the value of their first column (call before the first use). */
  pluck(): this
  /** Rows as arrays of values (call before the first use). */
  raw(): this
}

/**
 * Whether each SQL text only reads, as SQLite said when it was first prepared in this process:
 * every world prepares the same statements, so only the first checks them at once and the
 * others prepare theirs on first use (a world uses few of its repositories' statements, and
 * each prepared one holds memory).
 */
const READ_ONLY = new Map<string, boolean>()
/** Command texts prepared once in this process (see READ_ONLY). */
const PREPARED_COMMANDS = new Set<string>()

class LazyQuery<Params extends unknown[] | object, Row> implements Query<Params, Row> {
  private mode: 'rows' | 'pluck' | 'raw' = 'rows'

  constructor (private readonly db: Db, private readonly sql: string, private statement?: Database.Statement) {}

  pluck (): this {
    this.mode = 'pluck'
    this.statement?.pluck()
    return this
  }

  raw (): this {
    this.mode = 'raw'
    this.statement?.raw()
    return this
  }

  get (...params: Args<Params>): Row | undefined {
    return this.prepared().get(...params) as Row | undefined
  }

  all (...params: Args<Params>): Row[] {
    return this.prepared().all(...params) as Row[]
  }

  private prepared (): Database.Statement {
    if (this.statement === undefined) {
      this.statement = this.db.prepare(this.sql)
      if (this.mode === 'pluck') this.statement.pluck()
      if (this.mode === 'raw') this.statement.raw()
    }
    return this.statement
  }
}

/** A prepared statement that changes the database: every run is part of a transaction. */
export interface Command<Params extends unknown[] | object = unknown[]> {
  run(...params: Params extends unknown[] ? Params : [Params]): Database.RunResult
}

/** What a committed transaction changed, as far as its commands noted it: the clients it wrote. */
export interface Committed {
  /** [agencyId, clientNumber] of each client row written, in order (repeats possible). */
  clients: ReadonlyArray<readonly [number, number]>
  /** Tables its commands wrote, by name; `*` when a command's table could not be told from its SQL. */
  tables: ReadonlySet<string>
  /**
   * The tables of `tables` written by commands not scoped to one client (see clientCommand): a
   * table only client commands wrote changed in the rows of the clients listed, nowhere else.
   */
  unscoped: ReadonlySet<string>
}

/** Any table: a command whose SQL does not name the one table it writes. */
export const ANY_TABLE = '*'

/** The table a command writes, from its SQL (`INSERT INTO writes ...` is `writes`), else ANY_TABLE. */
export function writtenTable (sql: string): string {
  const m = /^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+(?:main\.)?([A-Za-z_]\w*)\b(?![.\w])/i.exec(sql)
  return m === null || sql.includes(';') ? ANY_TABLE : m[1].toLowerCase()
}

/** One command run in a committed transaction, as a copy of the database replays it (hosted mode's log): its SQL and parameters, or a client it noted. */
export type CapturedStep = { sql: string, params: unknown[] } | { client: readonly [number, number] } | { unreplayable: string }

/** What readers of the data need to know about writes to it. */
export interface ChangeSignal {
  /** Calls `listener` once after each committed transaction (never after a rollback). */
  onCommit(listener: (committed: Committed) => void): void
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
  private readonly listeners: Array<(committed: Committed) => void> = []
  /** Clients written in the open transaction (see noteClient). */
  private clients: Array<readonly [number, number]> = []
  /** Tables written in the open transaction (a rolled-back savepoint's stay: telling too many is safe). */
  private tables = new Set<string>()
  /** Of those, the tables written by commands not scoped to one client. */
  private unscoped = new Set<string>()
  /**
   * While set, every command run (log commands too) and client noted in a transaction that commits
   * is kept here, in order, for a copy of this database elsewhere to replay (hosted mode: a world's
   * log, src/domain/worlds/owned-world.ts).
   */
  private captured: CapturedStep[] | undefined
  /** True while replay runs its transaction (what it commits was acknowledged already: no check refuses it). */
  private replaying = false
  /** Commands prepared for replay, by SQL text. */
  private readonly replayCommands = new Map<string, Command<unknown[]>>()
  /** Runs inside a transaction that ran a command, just before its COMMIT (see checkBeforeCommit). */
  private commitCheck: (() => void) | undefined

  /**
   * better-sqlite3's transaction wrappers, made once (building one is not free): the outermost
   * runs the commit check before its COMMIT; a call inside an open transaction is a savepoint.
   */
  private readonly outermost: Database.Transaction<(fn: () => unknown) => unknown>
  private readonly savepoint: (fn: () => unknown) => unknown

  constructor (private readonly db: Db) {
    this.outermost = db.transaction((fn: () => unknown) => {
      const value = fn()
      if (this.changed && !this.replaying) this.commitCheck?.()
      return value
    })
    this.savepoint = db.transaction((fn: () => unknown) => fn())
  }

  get inTransaction (): boolean {
    return this.depth > 0
  }

  onCommit (listener: (committed: Committed) => void): void {
    this.listeners.push(listener)
  }

  /**
   * A command of the open transaction wrote this client (the client repository notes each row it
   * writes): the commit tells its listeners which clients changed, a rollback forgets it.
   */
  noteClient (agencyId: number, clientNumber: number): void {
    if (this.depth === 0) return
    // a client's row and then its policies: noted once
    const last = this.clients[this.clients.length - 1]
    if (last !== undefined && last[0] === agencyId && last[1] === clientNumber) return
    this.clients.push([agencyId, clientNumber])
    this.captured?.push({ client: [agencyId, clientNumber] })
  }

  /** From now on the commands of every transaction that commits are kept, until taken (takeCaptured). */
  capture (): void {
    this.captured ??= []
  }

  /** The steps kept since the last take (capturing goes on). */
  takeCaptured (): CapturedStep[] {
    const steps = this.captured ?? []
    if (this.captured !== undefined) this.captured = []
    return steps
  }

  /** Steps kept and not yet taken. */
  get capturedSteps (): number {
    return this.captured?.length ?? 0
  }

  /**
   * Runs `check` inside every outermost transaction that ran a command, just before its COMMIT, so
   * that it sees what the transaction wrote (a world's bytes: worlds/world.ts): when it throws, the
   * transaction rolls back and nothing of it is applied. A replay (a commit of the world's log,
   * acknowledged already) is not checked.
   */
  checkBeforeCommit (check: () => void): void {
    this.commitCheck = check
  }

  /** Runs captured steps (a commit of the world's log) in one transaction, which signals its change as any commit does. */
  replay (steps: readonly CapturedStep[]): void {
    this.replaying = true
    try {
      this.replayTransaction(steps)
    } finally {
      this.replaying = false
    }
  }

  private replayTransaction (steps: readonly CapturedStep[]): void {
    this.transaction(() => {
      for (const step of steps) {
        if ('client' in step) {
          this.noteClient(step.client[0], step.client[1])
          continue
        }
        if ('unreplayable' in step) throw new Error(`a captured step cannot be replayed: ${step.unreplayable}`)
        let command = this.replayCommands.get(step.sql)
        if (command === undefined) {
          command = this.command<unknown[]>(step.sql)
          this.replayCommands.set(step.sql, command)
        }
        command.run(...step.params)
      }
    })
  }

  /** A read-only statement; SQL that would change the database is refused here, when it is first seen. */
  query<Params extends unknown[] | object = unknown[], Row = unknown>(sql: string): Query<Params, Row> {
    let statement: Database.Statement | undefined
    if (!READ_ONLY.has(sql)) {
      statement = this.db.prepare(sql)
      READ_ONLY.set(sql, statement.readonly)
    }
    if (READ_ONLY.get(sql) !== true) throw new Error(`a query must not change the database; prepare it as a command: ${sql}`)
    return new LazyQuery<Params, Row>(this.db, sql, statement)
  }

  /** A statement that changes the database; each run joins the open transaction or opens one. */
  command<Params extends unknown[] | object = unknown[]>(sql: string): Command<Params> {
    return this.prepareCommand(sql, true)
  }

  /**
   * A command that writes the rows of one client only, the one `clientOf` names from its
   * parameters (a row of clients or of its policies): each run notes that client (noteClient), so
   * the commit tells exactly which clients changed and readers keep what they hold of the others.
   * SQL that may touch any other row must be a plain command.
   */
  clientCommand<Params extends unknown[] | object = unknown[]>(
    sql: string, clientOf: (...params: Args<Params>) => readonly [number, number]
  ): Command<Params> {
    return this.prepareCommand(sql, true, clientOf as (...params: unknown[]) => readonly [number, number])
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

  private prepareCommand<Params extends unknown[] | object>(
    sql: string, changesData: boolean, clientOf?: (...params: unknown[]) => readonly [number, number]
  ): Command<Params> {
    // prepared on first use, as queries are (see READ_ONLY); the first world's statements are prepared at once, so a mistake shows at start
    let statement = PREPARED_COMMANDS.has(sql) ? undefined : this.db.prepare(sql)
    PREPARED_COMMANDS.add(sql)
    // one that reads the connection's temporary tables (staging.ts) means nothing on another connection
    const replayable = !/\btemp\./i.test(sql)
    const table = writtenTable(sql)
    const run = (params: unknown[]): Database.RunResult => {
      if (this.depth === 0) return this.transaction(() => run(params))
      if (changesData) {
        this.changed = true
        this.tables.add(table)
        if (clientOf === undefined) this.unscoped.add(table)
      }
      this.captured?.push(replayable ? { sql, params } : { unreplayable: sql })
      statement ??= this.db.prepare(sql)
      const result = statement.run(...params)
      if (clientOf !== undefined) {
        const [agencyId, clientNumber] = clientOf(...params)
        this.noteClient(agencyId, clientNumber)
      }
      return result
    }
    return { run: (...params) => run(params) }
  }

  /**
   * Runs `fn` in a transaction and returns its result. A call inside another joins it (as a
   * savepoint: if it throws, only its own writes are undone) and commits with it. After the
   * outermost COMMIT the change is signalled once, if a command ran; a rollback signals nothing,
   * as nothing changed.
   */
  transaction<T>(fn: () => T, immediate = false): T {
    if (this.depth > 0) return this.nested(fn)
    this.depth = 1
    this.changed = false
    this.clients = []
    this.tables = new Set()
    this.unscoped = new Set()
    const kept = this.captured?.length ?? 0
    let result: T
    try {
      result = (immediate ? this.outermost.immediate(fn) : this.outermost(fn)) as T
    } catch (e) {
      this.clients = []
      if (this.captured !== undefined) this.captured.length = kept
      throw e
    } finally {
      this.depth = 0
    }
    if (this.changed) {
      this.changed = false
      const committed = { clients: this.clients, tables: this.tables, unscoped: this.unscoped }
      this.clients = []
      this.tables = new Set()
      this.unscoped = new Set()
      for (const listener of this.listeners) listener(committed)
    }
    return result
  }

  /**
   * Runs each of `works` as a savepoint of one transaction and commits them together: one commit,
   * its pages and system calls, for all of them. Answers each work's outcome in order: a work that
   * throws has undone only its own writes. The transaction takes the write lock as it begins
   * (BEGIN IMMEDIATE): its works read before they write, and a read transaction could not wait
   * for another writer of the file to become one. When SQLite ends the transaction itself (an
   * I/O error, a full disk), or the commit fails, nothing of any work is applied and this throws.
   */
  together (works: ReadonlyArray<() => unknown>): Array<{ value: unknown } | { error: unknown }> {
    return this.transaction(() => works.map((work) => {
      try {
        return { value: this.nested(work) }
      } catch (error) {
        // SQLite rolled the whole transaction back: the works before this one are undone too
        if (!this.db.inTransaction) throw error
        return { error }
      }
    }), true)
  }

  private nested<T>(fn: () => T): T {
    this.depth++
    const noted = this.clients.length
    const kept = this.captured?.length ?? 0
    try {
      return this.savepoint(fn) as T
    } catch (e) {
      // the savepoint's writes are undone: so are its notes
      this.clients.length = noted
      if (this.captured !== undefined) this.captured.length = kept
      throw e
    } finally {
      this.depth--
    }
  }
}
