const STEP = 0x6d2b79f5

/**
 * The `k`-th draw (from 1) of mulberry32 seeded with `seed`: a number in [0, 1), so seeded draws
 * replay exactly. Its state moves by a constant step, so any draw is computed without those before
 * it, and instances that take turns in one sequence draw what one instance would (faults.ts).
 */
export function seededDraw (seed: number, k: number): number {
  let t = ((seed >>> 0) + Math.imul(k >>> 0, STEP)) >>> 0
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** The same sequence drawn in order (the benchmarks' seeded workloads). */
export function seededRandom (seed: number): () => number {
  let k = 0
  return () => seededDraw(seed, ++k)
}
