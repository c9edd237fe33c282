/**
 * Places of a shared resource (a worker process's jobs) handed out fairly among keys (worlds): a
 * key holds at most one place at a time; when a place frees, the keys waiting are served in turn
 * (the one served least recently first), each key's own in arrival order. So one world's work never holds more than one place while
 * another world waits, whatever that world asks for. Waiting is bounded: a key may have
 * `maxWaitingPerKey` requests waiting, all keys `maxWaiting`; one more is refused (the caller's 429).
 */

interface Waiter {
  grant: (release: () => void) => void
  fail: (error: Error) => void
}

export interface FairPlacesOptions {
  /** Requests waiting at most, all keys together. */
  maxWaiting: number
  /** Requests of one key waiting at most. */
  maxWaitingPerKey: number
}

export class FairPlaces {
  private free: number
  /** Keys holding a place. */
  private readonly holding = new Set<string>()
  /** Each key's requests waiting. */
  private readonly queues = new Map<string, Waiter[]>()
  private waitingCount = 0
  /** When each key was last given a place (a count of places given), while any key waits or it holds one. */
  private readonly lastServed = new Map<string, number>()
  private given = 0

  constructor (places: number, private readonly options: FairPlacesOptions) {
    this.free = places
  }

  /** Requests waiting for a place now. */
  get waiting (): number {
    return this.waitingCount
  }

  /** Places held now. */
  get held (): number {
    return this.holding.size
  }

  /**
   * A place for `key`: at once when one is free and the key holds none, else once its turn comes.
   * Resolves to the function that gives it back (once, whatever calls it). Undefined when as many
   * requests wait as may (unless `bounded` is false: the sandbox's own work always waits its turn).
   */
  take (key: string, bounded = true): Promise<() => void> | undefined {
    if (this.free > 0 && !this.holding.has(key) && this.waitingCount === 0) return Promise.resolve(this.grant(key))
    const queue = this.queues.get(key) ?? []
    if (bounded && (this.waitingCount >= this.options.maxWaiting || queue.length >= this.options.maxWaitingPerKey)) return undefined
    return new Promise<() => void>((resolve, reject) => {
      queue.push({ grant: resolve, fail: reject })
      this.queues.set(key, queue)
      this.waitingCount++
      this.serve()
    })
  }

  /** Fails every request waiting (the resource is closing); places held are given back by their holders. */
  failWaiting (error: Error): void {
    const queues = [...this.queues.values()]
    this.queues.clear()
    this.waitingCount = 0
    for (const queue of queues) for (const waiter of queue) waiter.fail(error)
  }

  private grant (key: string): () => void {
    this.free--
    this.holding.add(key)
    this.lastServed.set(key, ++this.given)
    let given = false
    return () => {
      if (given) return
      given = true
      this.free++
      this.holding.delete(key)
      this.serve()
    }
  }

  /** Free places to the keys waiting, in turn: of those holding none, the one served least recently (first waiting first among equals). */
  private serve (): void {
    while (this.free > 0) {
      let next: string | undefined
      for (const key of this.queues.keys()) {
        if (this.holding.has(key)) continue
        if (next === undefined || (this.lastServed.get(key) ?? 0) < (this.lastServed.get(next) ?? 0)) next = key
      }
      if (next === undefined) break
      const queue = this.queues.get(next)!
      const waiter = queue.shift()!
      this.waitingCount--
      if (queue.length === 0) this.queues.delete(next)
      waiter.grant(this.grant(next))
    }
    // nobody waits: the order starts afresh (keys come and go with worlds)
    if (this.waitingCount === 0) for (const key of this.lastServed.keys()) if (!this.holding.has(key)) this.lastServed.delete(key)
  }
}
