import { migrate, type Db } from '../../db/database.js'
import type { CapturedStep, UnitOfWork } from '../../db/index.js'
import type { Leases } from '../../db/postgres/leases.js'
import type { LogEntry, LogTurn, WorldLog } from '../../db/postgres/world-log.js'
import { storageUnreachable } from '../../errors.js'
import type { Clock, ClockSetting } from '../clock.js'
import type { FaultRules, Faults } from '../faults.js'
import type { OpenSessions, SharedSessions } from '../examiner/shared-sessions.js'
import type { Simulator, SimulatorState } from '../simulator.js'
import type { SlidingWindow, WindowChange } from '../sliding-window.js'
import { openSnapshot, pagesOf } from './starts.js'

/**
 * One instance's replica of a world whose data is kept in PostgreSQL (hosted mode). The world
 * runs on its SQLite database in memory as it always does; this keeps that database equal to the
 * world's log (db/postgres/world-log.ts), which every instance appends to and replays:
 * - a request that may write takes the world's turn: the log locked, the commits it lacks
 *   replayed, then its own commands captured as it runs and appended, committed before it is
 *   answered (an acknowledged write is in PostgreSQL);
 * - any request first waits until the replica holds every commit acknowledged before it arrived:
 *   the heads it was given (fresh-heads.ts: asked of PostgreSQL, one question shared by the
 *   requests of one turn) and replays what it lacks. So correctness never rests on a
 *   notification; notifications (hosting.ts) only replay commits before anyone asks for them.
 * The create-client rate window travels with the commits, so its limit holds across instances,
 * and so do the clock, the fault rules, the simulator's state and the examiner sessions open; one instance at a time (a lease)
 * runs a real-time simulator, each of its turns a write turn.
 */

/**
 * What a commit changed beside the data, in order: the create-client window's events, the clock's
 * setting, the fault rules, the simulator's state, the examiner sessions open.
 */
export type Effect = WindowChange | readonly ['clock', ClockSetting] | readonly ['faults', FaultRules] | readonly ['simulator', SimulatorState] |
  readonly ['sessions', OpenSessions]

/** What a replica needs of its world. */
export interface ReplicatedWorld {
  readonly id: string
  readonly sql: UnitOfWork
  readonly db: Db
  readonly createBudget: SlidingWindow
  readonly clock: Clock
  readonly faults: Faults
  readonly simulator: Pick<Simulator, 'observer' | 'state' | 'adopt' | 'share' | 'lead'>
  /** The examiner sessions every instance shares (once the world is held by the shared journals). */
  readonly sharedSessions: Pick<SharedSessions, 'observer' | 'state' | 'adopt'> | undefined
  /** True while the data is the world's start, as a reset left it (nothing committed since). */
  readonly atStart: boolean
  adoptDatabase(db: Db): void
}

/** A write request's turn: committed (or given up when it wrote nothing) before its answer is sent. */
export interface WriteTurn {
  commit(): Promise<void>
}

export interface ReplicaOptions {
  migrationsDir: string
  /**
   * Reads the world's start from the catalogue (a created world's): a reset to it is logged without
   * its body, and a replay takes the body from here (the worlds made from one fixture share it:
   * shared-starts.ts), not from PostgreSQL again.
   */
  readStart?: () => Promise<Buffer>
  /** A commit of more steps than this is sent as a snapshot (a reset, a large fixture): replaying it would cost more. */
  maxCommitSteps?: number
  /** Commits after which a writer adds a snapshot, so a starting instance replays few. */
  snapshotEvery?: number
  /** Where the instances agree which of them runs the world's real-time simulator. */
  leases?: Leases
}

/** Bytes as JSON: {"$bytes": base64}. */
function encodeSteps (steps: CapturedStep[]): Buffer {
  return Buffer.from(JSON.stringify(steps, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key]
    return raw instanceof Uint8Array ? { $bytes: Buffer.from(raw).toString('base64') } : value
  }))
}

export function decodeSteps (body: Buffer): CapturedStep[] {
  return JSON.parse(body.toString('utf8'), (_key, value: unknown) => {
    if (value !== null && typeof value === 'object' && typeof (value as { $bytes?: unknown }).$bytes === 'string') {
      return Buffer.from((value as { $bytes: string }).$bytes, 'base64')
    }
    return value
  }) as CapturedStep[]
}

export class WorldReplica {
  /** The last entry of the log this replica holds. */
  private applied = 0
  /** Commits replayed or written since the last snapshot. */
  private commitsSinceSnapshot = 0
  /** The replica may differ from the log (a commit failed after its local write): it is rebuilt from the snapshot. */
  private stale = false
  /**
   * False while this instance holds no copy of the world's data (never loaded here, or dropped when
   * idle: an empty database stands in): the next request that needs the world loads it from the
   * log's latest snapshot, as a stale replica is rebuilt.
   */
  private copied = true
  /** Requests of this instance between their catch-up and their answer: a copy in use is never dropped. */
  private users = 0
  /** The turn of this instance's request now writing or replaying (one at a time), and how many hold or wait for it. */
  private busy: Promise<void> = Promise.resolve()
  private turns = 0
  private readonly maxCommitSteps: number
  private readonly snapshotEvery: number

  /** `applied` 0: the replica holds no copy yet (the world's database is an empty stand-in), loaded on first use. */
  constructor (readonly world: ReplicatedWorld, private readonly log: WorldLog, private readonly options: ReplicaOptions, applied: number) {
    this.applied = applied
    if (applied === 0) this.forgetCopy()
    this.maxCommitSteps = options.maxCommitSteps ?? 2000
    this.snapshotEvery = options.snapshotEvery ?? 500
    world.sql.requireCapture()
    const leases = options.leases
    if (leases !== undefined) {
      const key = `simulator:${world.id}`
      world.simulator.share({
        inWriteTurn: async (work) => {
          const turn = await this.beginWrite()
          try {
            work()
          } finally {
            await turn.commit()
          }
        },
        seekLead: (wanted) => leases.seek(key, wanted, (held) => world.simulator.lead(held))
      })
    }
  }

  /** The sequence number of the last entry replayed or written here. */
  get seq (): number { return this.applied }

  /** True when `caughtUp(head)` would have nothing to wait for. */
  caughtUpNow (head: number): boolean {
    return head <= this.applied && !this.stale && this.turns === 0
  }

  /** Waits until the replica holds the log up to `head` (what was acknowledged, by any instance, before a request: fresh-heads.ts). */
  async caughtUp (head: number): Promise<void> {
    if (head <= this.applied && !this.stale) {
      await this.busy
      return
    }
    await this.exclusive(async () => {
      if (head <= this.applied && !this.stale) return
      try {
        this.replay(await this.entriesAfter(this.stale ? 0 : this.applied))
      } catch (e) {
        throw storageUnreachable(e)
      }
    })
  }

  /** Replays a commit another instance announced (a notification), if it is still ahead of the replica (and held here). */
  async announced (seq: number): Promise<void> {
    if (seq <= this.applied || !this.copied) return
    await this.caughtUp(seq).catch(() => undefined)
  }

  /** True while this instance holds a copy of the world's data. */
  get holdsCopy (): boolean { return this.copied }

  /** True while no request of this instance uses the copy (between its catch-up and its answer). */
  get unused (): boolean { return this.users === 0 }

  /** Marks the copy in use by a request until `release` (a copy in use is never dropped). */
  use (): () => void {
    this.users++
    let released = false
    return () => {
      if (released) return
      released = true
      this.users--
    }
  }

  /**
   * Drops this instance's copy of the world's data for an empty stand-in (the world was idle here):
   * the next request loads it again from the log. Answers whether it did: not while a request uses it.
   */
  async dropCopy (standIn: () => Db): Promise<boolean> {
    let dropped = false
    await this.exclusive(async () => {
      if (!this.copied || this.users > 0) return
      this.world.adoptDatabase(standIn())
      this.forgetCopy()
      dropped = true
    })
    return dropped
  }

  /** From now on the replica holds nothing of the log: its next catch-up replays it from the latest snapshot. */
  private forgetCopy (): void {
    this.world.sql.requireCapture()
    // the create-client window's events since the snapshot come back with the entries replayed
    this.world.createBudget.apply(['clear'])
    this.copied = false
    this.stale = true
    this.applied = 0
    this.commitsSinceSnapshot = 0
  }

  /** Takes the world's turn for a request that may write (see the class). */
  async beginWrite (): Promise<WriteTurn> {
    const release = await this.takeTurn()
    let turn: LogTurn | undefined
    try {
      turn = await this.log.turn(this.world.id)
      if (turn.head !== this.applied || this.stale) this.replay(await this.entriesAfter(this.stale ? 0 : this.applied, turn))
    } catch (e) {
      await turn?.rollback().catch(() => undefined)
      release()
      throw storageUnreachable(e)
    }
    const sql = this.world.sql
    const changes: Effect[] = []
    sql.capture()
    this.world.createBudget.observer = (change) => changes.push(change)
    this.world.clock.observer = (setting) => changes.push(['clock', setting])
    this.world.faults.observer = (rules) => changes.push(['faults', rules])
    this.world.simulator.observer = (state) => changes.push(['simulator', state])
    const sessions = this.world.sharedSessions
    if (sessions !== undefined) sessions.observer = (open) => changes.push(['sessions', open])
    let done = false
    return {
      commit: async () => {
        if (done) return
        done = true
        const steps = sql.takeCaptured()
        this.world.createBudget.observer = undefined
        this.world.clock.observer = undefined
        this.world.faults.observer = undefined
        this.world.simulator.observer = undefined
        if (sessions !== undefined) sessions.observer = undefined
        let appended: boolean
        try {
          appended = await this.append(turn, sql, steps, changes)
        } finally {
          release()
        }
        // outside the world's turn: the next writer need not wait for the other instances to hear this one
        if (appended) await this.log.heardEverywhere()
      }
    }
  }

  /** Appends the turn's commit to the log; false when it wrote nothing (nothing appended). */
  private async append (turn: LogTurn, sql: UnitOfWork, steps: CapturedStep[], changes: Effect[]): Promise<boolean> {
    // the data was replaced by another database during the turn (a reset): what it holds is the commit
    const replaced = sql !== this.world.sql
    if (steps.length === 0 && changes.length === 0 && !replaced) {
      await turn.rollback().catch(() => undefined)
      return false
    }
    try {
      // a commit that read the connection's scratch tables (a fixture loaded through staging) is sent as its result
      const asSnapshot = replaced || steps.length > this.maxCommitSteps || this.commitsSinceSnapshot >= this.snapshotEvery ||
        steps.some((step) => 'unreplayable' in step)
      // a created world reset to its start: every instance has the start (catalogue.ts), and opens it alike
      const startAgain = replaced && this.options.readStart !== undefined && this.world.atStart
      // a snapshot ends the log before it, effects included: it carries the instruments' whole state
      const sessions = this.world.sharedSessions
      const state: Effect[] = asSnapshot
        ? [['clock', this.world.clock.setting()], ['faults', this.world.faults.state()], ['simulator', this.world.simulator.state()],
            ...(sessions === undefined ? [] : [['sessions', sessions.state()] as const])]
        : []
      const effects = changes.length === 0 && state.length === 0 ? undefined : [...changes, ...state]
      const seq = asSnapshot
        ? await turn.append('snapshot', startAgain ? undefined : pagesOf(this.world.db), effects)
        : await turn.append('commit', encodeSteps(steps), effects)
      await turn.commit()
      this.applied = seq
      this.commitsSinceSnapshot = asSnapshot ? 0 : this.commitsSinceSnapshot + 1
      return true
    } catch (e) {
      // written here, not in the log: the replica is rebuilt from the log before it answers again
      this.stale = true
      await turn.rollback().catch(() => undefined)
      throw storageUnreachable(e)
    } finally {
      this.world.sql.requireCapture()
    }
  }

  /** The log's entries after `seq` (in the writer's turn when given), a created world's start taken from `readStart`. */
  private async entriesAfter (seq: number, turn?: LogTurn): Promise<LogEntry[]> {
    const { readStart } = this.options
    const start = readStart === undefined ? 'with' : 'without'
    const entries = turn === undefined ? await this.log.entriesAfter(this.world.id, seq, start) : await turn.entriesAfter(seq, start)
    if (readStart === undefined) return entries
    for (const entry of entries) if (entry.kind === 'snapshot' && entry.body === null) entry.body = await readStart()
    return entries
  }

  /** Brings the replica to the log's entries (the latest snapshot first, when they start with one). */
  private replay (entries: LogEntry[]): void {
    for (const entry of entries) {
      if (entry.kind === 'snapshot') {
        this.world.adoptDatabase(openLogSnapshot(entry.body ?? Buffer.alloc(0), this.options.migrationsDir))
        this.world.sql.requireCapture()
        this.commitsSinceSnapshot = 0
      } else {
        this.world.sql.replay(decodeSteps(entry.body ?? Buffer.alloc(0)))
        this.commitsSinceSnapshot++
      }
      applyEffects(this.world, (entry.effects ?? []) as Effect[])
      this.applied = entry.seq
    }
    if (entries.length > 0 && entries[0].kind === 'snapshot') {
      this.stale = false
      this.copied = true
    }
  }

  /** Waits for this instance's request now writing or replaying, then holds the turn until released. */
  private async takeTurn (): Promise<() => void> {
    let release!: () => void
    const previous = this.busy
    this.turns++
    this.busy = new Promise<void>((resolve) => {
      let released = false
      release = () => {
        if (released) return
        released = true
        this.turns--
        resolve()
      }
    })
    await previous
    return release
  }

  private async exclusive (fn: () => Promise<void>): Promise<void> {
    const release = await this.takeTurn()
    try {
      await fn()
    } finally {
      release()
    }
  }
}

/** A snapshot of the log as a database in memory, brought up to this build's migrations (an older instance may have written it). */
export function openLogSnapshot (body: Buffer, migrationsDir: string): Db {
  const db = openSnapshot(body)
  migrate(db, migrationsDir)
  return db
}

/** Applies what another instance's commit changed beside the data. */
export function applyEffects (world: Pick<ReplicatedWorld, 'clock' | 'createBudget' | 'faults' | 'simulator' | 'sharedSessions'>, effects: readonly Effect[]): void {
  for (const effect of effects) {
    if (effect[0] === 'clock') world.clock.adopt(effect[1])
    else if (effect[0] === 'faults') world.faults.adopt(effect[1])
    else if (effect[0] === 'simulator') world.simulator.adopt(effect[1])
    else if (effect[0] === 'sessions') world.sharedSessions?.adopt(effect[1])
    else world.createBudget.apply(effect)
  }
}
