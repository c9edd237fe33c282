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

/**
 * A cache bounded as BoundedCache is (by entries), keyed by a number and a second key (an agency,
 * and one of its clients or a policy number), as maps of maps: a read makes no key text to make and hash, as one key text
 * joining both did for every read; an agency's entries are dropped at once.
 */
export class PairCache<K, V> {
  private readonly maps = new Map<number, Map<K, V>>()
  private used = 0

  constructor (private readonly budget: number) {}

  get (first: number, second: K): V | undefined {
    return this.maps.get(first)?.get(second)
  }

  set (first: number, second: K, value: V): V {
    if (this.used + 1 > this.budget) this.clear()
    let inner = this.maps.get(first)
    if (inner === undefined) this.maps.set(first, (inner = new Map()))
    inner.set(second, value)
    this.used++
    return value
  }

  /** Forgets one entry (it stays counted until the cache starts over). */
  delete (first: number, second: K): void {
    this.maps.get(first)?.delete(second)
  }

  /** Forgets every entry under `first` (they stay counted until the cache starts over). */
  deleteAll (first: number): void {
    this.maps.delete(first)
  }

  clear (): void {
    this.maps.clear()
    this.used = 0
  }
}
