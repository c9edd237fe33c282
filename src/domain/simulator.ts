import { performance } from 'node:perf_hooks'
import { badRequest } from '../errors.js'
import type { Clock } from './clock.js'
import { changeOnce, type ChangeKind, type ChangeTools, type SimulatorData } from './simulator-changes.js'

export type { ChangeKind, SimulatorData } from './simulator-changes.js'

/**
 * The agency activity simulator: keeps changing clients the way an agency does (people and
 * contact edits, new policies, status changes, new clients, deletions), each change moving
 * `modified`, deterministically from its seed. It runs in real time (a timer) or in clock
 * time (each clock advance makes the changes that period would have seen). Either way the
 * changes are made in turns of at most TURN_MS, one transaction each, so the event loop answers
 * other requests between them. In hosted mode it runs at the world's owner, each real-time turn
 * a write turn of the world (inWriteTurns), its state kept in the world's log (state, adopt).
 */

export interface SimulatorSettings {
  ratePerMinute: number
  seed: number
  /** Agencies to change (default: every active agency). */
  agencies?: number[]
  /** true: changes happen only when the sandbox clock is advanced. */
  clockTime?: boolean
}

export interface SimulatorStatus {
  running: boolean
  settings: SimulatorSettings | null
  changes: number
  byKind: Record<string, number>
}

/** The simulator's whole state: what a hosted world's log keeps (worlds/world-state.ts), so the instance that takes the world over continues the same simulator. */
export interface SimulatorState {
  settings: SimulatorSettings | null
  changes: number
  byKind: Record<string, number>
  /** The fraction of a change the clock-time periods so far owe. */
  carry: number
}

/** Hosted mode: runs `work` (a real-time turn's changes) in the world's write turn, its commit appended to the log before it resolves. */
export type WriteTurnRunner = (work: () => void) => Promise<void>

/** What one clock advance made: the changes of its period, and those past the cap it left out. */
export interface CatchUp {
  changes: number
  skipped: number
}

/**
 * Changes one clock advance makes at most. A longer period at a higher rate (a day at 30 a
 * minute is 43,200) still moves the clock; the changes made are spread over the whole period and
 * the answer says how many were skipped. 10,000 changes take a few seconds, made in turns.
 */
export const MAX_CHANGES_PER_ADVANCE = 10_000
/** Milliseconds of changes made in one turn of the event loop, well under the 50 ms a request may wait. */
export const TURN_MS = 20

interface Batch {
  count: number
  fromMs: number
  toMs: number
  made: number
  done: (made: number) => void
  fail: (error: Error) => void
}

const ignore = () => {}

export function createSimulator (data: SimulatorData, clock: Clock, loadFaker: (seed: number) => Promise<ChangeTools>) {
  let settings: SimulatorSettings | null = null
  let timer: NodeJS.Timeout | null = null
  let tools: ChangeTools | null = null
  let changes = 0
  let carry = 0
  const byKind: Record<string, number> = {}
  /** Changes waiting to be made, oldest first: clock advances (each answered when its changes are made) and real-time ticks. */
  let queue: Batch[] = []
  let turnScheduled = false
  /** A real-time turn waiting for or holding the world's write turn (hosted mode). */
  let heldTurn: Promise<void> | undefined
  let inWriteTurn: WriteTurnRunner | undefined

  const state = (): SimulatorState => ({ settings, changes, byKind: { ...byKind }, carry })
  const realTime = () => settings !== null && settings.clockTime !== true

  function schedule (): void {
    if (turnScheduled || heldTurn !== undefined) return
    turnScheduled = true
    setImmediate(turn)
  }

  /** Makes waiting changes for at most TURN_MS, in one transaction, then lets the event loop run. */
  function turn (): void {
    turnScheduled = false
    if (inWriteTurn !== undefined && realTime()) {
      heldTurn = inWriteTurn(makeChanges).catch(failWaiting).finally(() => {
        heldTurn = undefined
        if (queue.length > 0) schedule()
      })
      return
    }
    try {
      makeChanges()
    } catch (e) {
      failWaiting(e)
    }
    if (queue.length > 0) schedule()
  }

  function failWaiting (e: unknown): void {
    const failed = queue
    queue = []
    for (const batch of failed) batch.fail(e instanceof Error ? e : new Error(String(e)))
  }

  function makeChanges (): void {
    const started = performance.now()
    data().transaction(() => {
      while (queue.length > 0) {
        const batch = queue[0]
        if (batch.made >= batch.count) {
          queue.shift()
          batch.done(batch.made)
          continue
        }
        if (performance.now() - started >= TURN_MS) break
        const at = new Date(Math.round(batch.fromMs + ((batch.made + 1) * (batch.toMs - batch.fromMs)) / batch.count)).toISOString()
        const kind: ChangeKind | null = tools === null ? null : changeOnce(data, tools, at, settings?.agencies)
        if (kind === null) {
          // nothing to change (no active agency): the batch ends with what it made
          queue.shift()
          batch.done(batch.made)
          continue
        }
        batch.made++
        changes++
        byKind[kind] = (byKind[kind] ?? 0) + 1
      }
    })
  }

  /** Runs the real-time timer while real-time settings run. */
  function keepTimer (): void {
    const wanted = realTime()
    if (!wanted && timer !== null) {
      clearInterval(timer)
      timer = null
    }
    if (!wanted || timer !== null || settings === null) return
    const interval = Math.max(10, Math.round(60_000 / settings.ratePerMinute))
    const perTick = Math.max(1, Math.round((settings.ratePerMinute * interval) / 60_000))
    timer = setInterval(() => {
      // a tick whose changes are still being made is not piled up behind: its successor is skipped
      if (queue.length > 0) return
      if (tools === null) {
        void ensureTools()
        return
      }
      const now = clock.nowMs()
      queue.push({ count: perTick, fromMs: now, toMs: now, made: 0, done: ignore, fail: ignore })
      schedule()
    }, interval)
    timer.unref()
  }

  /**
   * Loads the generator of adopted settings (a hosted world taken over): from the seed and the
   * changes made so far, so an instance that continues a simulator does not repeat the changes made before.
   */
  async function ensureTools (): Promise<void> {
    const adopted = settings
    if (tools !== null || adopted === null) return
    const loaded = await loadFaker(adopted.seed + changes)
    if (settings === adopted) tools ??= loaded
  }

  function stop (): void {
    settings = null
    keepTimer()
    // an advance waiting for its changes is answered with those made so far
    const waiting = queue
    queue = []
    for (const batch of waiting) batch.done(batch.made)
  }

  return {
    async start (next: SimulatorSettings): Promise<SimulatorStatus> {
      if (!(next.ratePerMinute > 0 && next.ratePerMinute <= 60_000)) {
        throw badRequest('ratePerMinute must be above 0 and at most 60000', [{ field: 'ratePerMinute', message: 'must be in (0, 60000]' }])
      }
      stop()
      tools = await loadFaker(next.seed)
      settings = next
      changes = 0
      carry = 0
      for (const k of Object.keys(byKind)) delete byKind[k]
      keepTimer()
      return this.status()
    },
    stop (): SimulatorStatus {
      stop()
      return this.status()
    },
    state,
    /** Takes the state a hosted world's log kept, and runs it here (the owner's timer, for a real-time simulator). */
    adopt (next: SimulatorState): void {
      stop()
      tools = null
      settings = next.settings
      changes = next.changes
      carry = next.carry
      for (const k of Object.keys(byKind)) delete byKind[k]
      Object.assign(byKind, next.byKind)
      keepTimer()
    },
    /** Hosted mode: from now on each real-time turn runs in the world's write turn. */
    inWriteTurns (runner: WriteTurnRunner): void {
      inWriteTurn = runner
    },
    /**
     * Clock-time mode: the changes of the period [from, to], spread over it, at most
     * MAX_CHANGES_PER_ADVANCE; resolved once they are made (undefined when no clock-time
     * simulator runs).
     */
    async onAdvance (fromMs: number, toMs: number): Promise<CatchUp | undefined> {
      if (settings === null || settings.clockTime !== true) return undefined
      if (toMs <= fromMs) return { changes: 0, skipped: 0 }
      await ensureTools()
      const exact = (settings.ratePerMinute * (toMs - fromMs)) / 60_000 + carry
      let count = Math.floor(exact)
      carry = exact - count
      let skipped = 0
      if (count > MAX_CHANGES_PER_ADVANCE) {
        skipped = count - MAX_CHANGES_PER_ADVANCE
        count = MAX_CHANGES_PER_ADVANCE
        carry = 0
      }
      if (count === 0) return { changes: 0, skipped }
      return new Promise<CatchUp>((resolve, reject) => {
        queue.push({ count, fromMs, toMs, made: 0, done: (made) => resolve({ changes: made, skipped: skipped + count - made }), fail: reject })
        schedule()
      })
    },
    status (): SimulatorStatus {
      return { running: settings !== null, settings, changes, byKind: { ...byKind } }
    }
  }
}

export type Simulator = ReturnType<typeof createSimulator>
