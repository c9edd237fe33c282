import { insufficientStorage, worldBoundReached, worldsBoundReached, type ApiError } from '../../errors.js'

/**
 * The memory bounds of worlds: each world's (maxBytes) and the one on all of them
 * (SANDBOX_WORLDS_MAX_BYTES). The registry counts what each world holds (its database's pages, and
 * the snapshots kept beside them); these decide whether a world may hold more, and say how to make
 * room when it may not.
 */

/** A world about to hold `bytes` where it held `held` (and `beside` more outside its data: its own start). */
export interface Growth {
  worldId: string
  /** The world's bound (undefined: unbounded). */
  bound: number | undefined
  held: number
  bytes: number
  beside: number
  /** What every world of the process holds now, as the registry counts it. */
  total: number
  /** The bound on all of them. */
  maxBytes: number
  /** A world being created; the default world (which is reset, never deleted); or another. */
  kind: 'new' | 'default' | 'created'
}

/** The 507 that refuses a growth past a bound, or undefined when it fits (or does not grow). */
export function growthRefused ({ worldId, bound, held, bytes, beside, total, maxBytes, kind }: Growth): ApiError | undefined {
  if (bytes <= held && beside === 0) return undefined
  if (bound !== undefined && bytes > bound) {
    const fix = kind === 'new'
      ? `Create it with a larger maxBytes (at most ${maxBytes}, SANDBOX_WORLDS_MAX_BYTES)`
      : kind === 'default'
        ? 'Reset it (POST /_sandbox/reset), or start the sandbox with a larger SANDBOX_WORLD_MAX_BYTES'
        : `Delete or reset the world (DELETE /_sandbox/worlds/${worldId}, POST /_sandbox/worlds/${worldId}/reset), or create it with a larger maxBytes (at most ${maxBytes})`
    return worldBoundReached(worldId, held, bytes, bound, fix)
  }
  const wanted = total - held + bytes + beside
  if (wanted <= maxBytes) return undefined
  return worldsBoundReached(total, wanted, maxBytes,
    `DELETE /_sandbox/worlds/{id} the worlds no longer needed (GET /_sandbox/worlds lists them)${kind === 'created' ? `, or reset world ${worldId}` : ''}`)
}

/** Before a new world's data is made: a 507 when the worlds already hold what it would pass the bound with (an estimate). */
export function noRoomFor (used: number, expected: number, maxBytes: number): ApiError | undefined {
  if (used + expected <= maxBytes) return undefined
  const mib = (n: number) => `${Math.ceil(n / 1048576)} MiB`
  return insufficientStorage(
    `The worlds hold ${mib(used)} of the ${mib(maxBytes)} they may take (SANDBOX_WORLDS_MAX_BYTES), and this one needs about ${mib(expected)}; ` +
    'DELETE /_sandbox/worlds/{id} the worlds you no longer need'
  )
}
