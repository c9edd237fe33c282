import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { invalidField, validationFailed, type FieldError } from '../../errors.js'
import { MirrorBody, type Mirror } from '../../schemas/examiner.js'
import { parseTimestamp } from '../../time.js'

/**
 * A declared mirror as it is kept: its client numbers and modification times as the JSON text of
 * [number, epoch ms] pairs. Up to 100,000 clients (8 MiB of JSON) are read on the fixture worker
 * (fixture-runner.ts), a small mirror where it arrives; both give the same text and the same errors.
 */
export interface ReadMirror {
  agencyId: number
  upTo: number | null
  /** JSON text of [clientNumber, modifiedMs] pairs, in the order posted. */
  pairs: string
  count: number
}

/** Errors listed for a mirror body at most (a long list reports its first ones). */
export const MAX_MIRROR_ERRORS = 20

let check: TypeCheck<typeof MirrorBody> | undefined

/** The first errors of a value against a schema check, each with its field path (`clients[3].modified`). */
export function firstErrors (checker: { Errors(value: unknown): Iterable<{ path: string, message: string }> }, value: unknown, max = MAX_MIRROR_ERRORS): FieldError[] {
  const errors: FieldError[] = []
  for (const e of checker.Errors(value)) {
    const field = e.path.split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '')
    errors.push({ field: field === '' ? '(body)' : field, message: e.message })
    if (errors.length >= max) break
  }
  return errors
}

/** A mirror's modified time, or the 400 naming the entry. */
export function mirrorTime (modified: string, index: number): number {
  const ms = parseTimestamp(modified)
  if (ms === null) throw invalidField(`clients[${index}].modified`, `'${modified.slice(0, 40)}' is not an ISO 8601 date-time such as 2026-11-22T09:00:00Z`)
  return ms
}

/** A mirror body read whole: checked against MirrorBody, each time parsed (on the fixture worker for a large one). */
export function readMirrorBody (body: unknown): ReadMirror {
  check ??= TypeCompiler.Compile(MirrorBody)
  if (!check.Check(body)) throw validationFailed(firstErrors(check, body))
  const mirror: Mirror = body
  const pairs = mirror.clients.map((c, i): [number, number] => [c.clientNumber, mirrorTime(c.modified, i)])
  return { agencyId: mirror.agencyId, upTo: mirror.upTo ?? null, pairs: JSON.stringify(pairs), count: pairs.length }
}

/** Mirror entries checked per turn of the event loop (a small mirror's: a large one is read on the fixture worker). */
const MIRROR_ENTRIES_PER_TURN = 5_000

/** A posted mirror's entries read in turns of MIRROR_ENTRIES_PER_TURN. */
export async function readMirrorInTurns (body: Mirror): Promise<ReadMirror> {
  const pairs: Array<[number, number]> = []
  for (const [i, c] of body.clients.entries()) {
    pairs.push([c.clientNumber, mirrorTime(c.modified, i)])
    if (i % MIRROR_ENTRIES_PER_TURN === MIRROR_ENTRIES_PER_TURN - 1) await new Promise((resolve) => setImmediate(resolve))
  }
  return { agencyId: body.agencyId, upTo: body.upTo ?? null, pairs: JSON.stringify(pairs), count: pairs.length }
}
