/**
 * A world's requests, in turn with every other world's. The sandbox's work is synchronous on one
 * event loop, so what one world's traffic costs the others is how much of that world's work each
 * turn of the loop holds: a request whose body has arrived runs from its arrival to its answer in
 * one callback, and a world hammered over 32 connections had 32 requests answered one after the
 * other in every turn, another world's request waiting behind all of them (its p99 went from 8 to
 * 136 ms). So a world starts at most `limit` requests per turn of the loop (before their bodies
 * are read), the others waiting in arrival order for the next turns, after the I/O of every other
 * world is read; and at most `limit` of its requests are in progress at once (those waiting for a
 * body, a worker, the shared database). A world alone keeps its pace: `limit` a turn is more than
 * one connection's requests can ask.
 *
 * The bound a turn is for the others' sake, and it costs the world it holds back: each turn is one
 * more pass of the loop, and one world over 32 connections answered a quarter fewer reads than with
 * four times the bound. So a world alone, when no other world has started a request for
 * SHARED_MS, starts up to ALONE_FACTOR times its bound a turn of requests without a body (each
 * is one callback from its arrival to its answer); from the moment another world starts one, the
 * bound holds for every world again. Requests with a body keep the bound: starting more of
 * them a turn answered fewer log notes, not more.
 */

/** Requests of one world in progress at once (SANDBOX_WORLD_REQUESTS); more wait their turn. */
export const REQUESTS_IN_PROGRESS = 4
/** The most SANDBOX_WORLD_REQUESTS may allow. */
export const MAX_REQUESTS_IN_PROGRESS = 10_000
/** Requests of one world waiting at most (a request waiting holds its connection and headers only); one more is a 429. */
export const REQUESTS_WAITING = 1024

/** How long after a request of another world each world keeps its bound a turn. */
export const SHARED_MS = 1000
/** A world alone starts up to this many times its bound a turn of requests without a body. */
export const ALONE_FACTOR = 4
/** The clock of SHARED_MS (a test sets its own). */
export const turnClock = { nowMs: (): number => performance.now() }
/** The world that started the last request, and until when the worlds are not alone. */
let lastStarter: RequestTurns | undefined
let sharedUntilMs = 0

/**
 * The turn of the event loop, a number one tick changes (in the check phase, setImmediate) once a
 * turn has seen a request; the same tick starts the next waiting request of each world that has
 * one, in turn, so they count for the turn the loop begins next.
 */
let turn = 0
let ticking = false
const waitingWorlds = new Set<RequestTurns>()

function tick (): void {
  ticking = false
  turn++
  const worlds = [...waitingWorlds]
  waitingWorlds.clear()
  for (const world of worlds) world.startNext()
}

/** True when no two worlds have started requests one after the other for SHARED_MS. */
function alone (): boolean {
  return turnClock.nowMs() >= sharedUntilMs
}

function tickSoon (): void {
  if (ticking) return
  ticking = true
  setImmediate(tick)
}

function currentTurn (): number {
  tickSoon()
  return turn
}

export class RequestTurns {
  private inProgress = 0
  private readonly queue: Array<() => void> = []
  /** For each request waiting, in the same places: true when it has no body. */
  private readonly bodiless: boolean[] = []
  private head = 0
  /** The turn in which the world last started a request, and how many it started in it. */
  private startedIn = -1
  private startedInTurn = 0

  /** `limit` Infinity: unbounded, each request goes on at once (SANDBOX_WORLD_REQUESTS=0). */
  constructor (private readonly limit = REQUESTS_IN_PROGRESS, private readonly maxWaiting = REQUESTS_WAITING) {}

  /** Requests waiting now. */
  get waiting (): number {
    return this.queue.length - this.head
  }

  /** Requests in progress now. */
  get running (): number {
    return this.inProgress
  }

  /**
   * Runs `go` at once when the world has started fewer than its bound in this turn of the event
   * loop and has fewer than its bound in progress, else in a later turn; false (and `go` never runs) when as
   * many wait as may. Every `go` run is one request in progress until its leave().
   */
  enter (go: () => void, bodiless = false): boolean {
    if (this.startNow(bodiless)) {
      go()
      return true
    }
    if (this.waiting >= this.maxWaiting) return false
    this.queue.push(go)
    this.bodiless.push(bodiless)
    if (this.inProgress < this.limit) this.wait()
    return true
  }

  /**
   * True when a request may start at once, as enter() would start it, and then it is one in
   * progress until its leave(); false and nothing taken when it must wait (enter() queues it):
   * a caller that starts most requests at once needs no callback for them. `bodiless`: the
   * request has no body to read, and a world alone may start more of those a turn.
   */
  startNow (bodiless = false): boolean {
    if (this.limit === Infinity) return true
    if (this.waiting > 0 || this.inProgress >= this.limit) return false
    if (!this.mayStartIn(currentTurn(), bodiless)) return false
    this.count()
    return true
  }

  /** A request in progress ended (its answer is ready, or it ended otherwise). */
  leave (): void {
    if (this.limit === Infinity) return
    this.inProgress--
    if (this.waiting > 0) this.wait()
  }

  /** The tick: the next waiting requests start, up to the bound; the others wait for the next ticks. */
  startNext (): void {
    while (this.waiting > 0 && this.inProgress < this.limit && this.mayStartIn(turn, this.bodiless[this.head])) {
      const go = this.queue[this.head]
      this.queue[this.head++] = undefined as unknown as () => void
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head)
        this.bodiless.splice(0, this.head)
        this.head = 0
      }
      this.count()
      go()
    }
    if (this.waiting > 0 && this.inProgress < this.limit) this.wait()
  }

  /** Whether one more request may start in turn `now`: within the bound, or, without a body, within ALONE_FACTOR times it while the world is alone. */
  private mayStartIn (now: number, bodiless: boolean): boolean {
    if (this.startedIn !== now || this.startedInTurn < this.limit) return true
    return bodiless && this.startedInTurn < this.limit * ALONE_FACTOR && alone()
  }

  private count (): void {
    if (lastStarter !== this) {
      if (lastStarter !== undefined) sharedUntilMs = turnClock.nowMs() + SHARED_MS
      lastStarter = this
    }
    if (this.startedIn !== turn) {
      this.startedIn = turn
      this.startedInTurn = 0
    }
    this.startedInTurn++
    this.inProgress++
  }

  private wait (): void {
    waitingWorlds.add(this)
    tickSoon()
  }
}
