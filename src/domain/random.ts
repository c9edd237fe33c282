const STEP = 0x6d2b79f5

/** mulberry32's output for its state `a`. */
function mix (a: number): number {
  let t = a
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** mulberry32: a small seeded generator of numbers in [0, 1), so seeded draws replay exactly. */
export function seededRandom (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + STEP) >>> 0
    return mix(a)
  }
}

/** The `k`-th draw (from 1) of `seededRandom(seed)`, without the k - 1 before it (its state moves by a constant step). */
export function seededDraw (seed: number, k: number): number {
  return mix(((seed >>> 0) + Math.imul(k >>> 0, STEP)) >>> 0)
}
