import { performance } from 'node:perf_hooks'
import { migrate, openEmptySchema, type Db } from '../../db/database.js'
import { UnitOfWork, type CapturedStep } from '../../db/index.js'
import type { LogEntry } from '../../db/postgres/world-log.js'
import type { ClockSetting } from '../clock.js'
import type { FaultRules } from '../faults.js'
import type { SimulatorState } from '../simulator.js'
import type { WindowEvents } from '../sliding-window.js'
import { openSnapshot } from './starts.js'
import type { World } from './world.js'

/**
 * What a hosted world's log keeps beside its databases (owned-world.ts): the whole state of its
 * instruments, small JSON written whenever it changed, so the instance that takes the world over
 * goes on with the clock, the fault rules and their counts, the create-client window and the
 * simulator as they stood. The request journal is not among them: it starts empty after a takeover.
 */
export interface WorldState {
  clock: ClockSetting
  faults: FaultRules
  createBudget: WindowEvents
  simulator: SimulatorState
}

export const stateOf = (world: World): WorldState => ({
  clock: world.clock.setting(),
  faults: world.faults.state(),
  createBudget: world.createBudget.snapshot(),
  simulator: world.simulator.state()
})

/** What listings show of a world's data and instruments, as JSON (its owner writes it: ownership.ts). */
export const factsOf = (world: World): string => JSON.stringify(world.listing(), (key, value: unknown) => key === 'world' ? undefined : value)

/** Takes the state a world's log kept (the simulator runs here from now on, when it ran). */
export function adoptState (world: World, state: WorldState): void {
  world.clock.adopt(state.clock)
  world.faults.adopt(state.faults)
  world.createBudget.adopt(state.createBudget)
  world.simulator.adopt(state.simulator)
}

/** Captured steps as JSON, bytes as {"$bytes": base64}. */
export function encodeSteps (steps: readonly CapturedStep[]): Buffer {
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

/** A snapshot of the log as a database in memory, brought up to this build's migrations (an older instance may have written it). */
export function openLogSnapshot (body: Buffer, migrationsDir: string): Db {
  const db = openSnapshot(body)
  migrate(db, migrationsDir)
  return db
}

/** A world's databases and state as its log holds them (the log starts with its latest snapshot). */
export interface LoggedWorld {
  db: Db
  records: Db
  state: WorldState | undefined
  seq: number
}

const nextTurn = async () => await new Promise<void>((resolve) => setImmediate(resolve))
/** Replaying lets other requests run every this many milliseconds. */
const REPLAY_TURN_MS = 20

/** Opens the log's snapshot and replays the commits after it, in turns of the event loop. */
export async function replayLog (entries: readonly LogEntry[], migrationsDir: string): Promise<LoggedWorld> {
  const [snapshot, ...commits] = entries
  if (snapshot?.kind !== 'snapshot' || snapshot.body === null) throw new Error('the world\'s log does not start with a snapshot of its data')
  const db = openLogSnapshot(snapshot.body, migrationsDir)
  const records = snapshot.records === null ? openEmptySchema(migrationsDir) : openLogSnapshot(snapshot.records, migrationsDir)
  const data = new UnitOfWork(db)
  const recorded = new UnitOfWork(records)
  const stateOfEntry = (entry: LogEntry) => entry.state === null ? undefined : JSON.parse(entry.state.toString('utf8')) as WorldState
  let state = stateOfEntry(snapshot)
  let began = performance.now()
  for (const entry of commits) {
    if (entry.body !== null) data.replay(decodeSteps(entry.body))
    if (entry.records !== null) recorded.replay(decodeSteps(entry.records))
    state = stateOfEntry(entry) ?? state
    if (performance.now() - began > REPLAY_TURN_MS) {
      await nextTurn()
      began = performance.now()
    }
  }
  return { db, records, state, seq: entries.at(-1)!.seq }
}
