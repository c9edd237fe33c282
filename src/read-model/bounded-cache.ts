/**
 * A map holding at most `budget` (counted by `weigh`: entries by default) that starts over when
 * an entry would pass it. The read model empties them on each committed change, or forgets what a
 * change to one client makes old, so what they hold is never older than the last commit.
 */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, V>()
  private used = 0

  constructor (
    private readonly budget: number,
    private readonly weigh: (value: V) => number = () => 1
  ) {}

  /** The kept value, or `load()`'s, kept (undefined is kept too: unknown keys are asked again). */
  getOrLoad (key: K, load: () => V): V {
    if (this.map.has(key)) return this.map.get(key) as V
    return this.set(key, load())
  }

  get (key: K): V | undefined {
    return this.map.get(key)
  }

  set (key: K, value: V): V {
    const weight = this.weigh(value)
    if (this.used + weight > this.budget) this.clear()
    this.map.set(key, value)
    this.used += weight
    return value
  }

  /** Forgets one entry (its weight stays counted until the cache starts over). */
  delete (key: K): void {
    this.map.delete(key)
  }

  clear (): void {
    this.map.clear()
    this.used = 0
  }
}
