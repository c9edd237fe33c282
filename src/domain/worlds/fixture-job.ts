import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ApiError, badRequest, invalidField, validationFailed, type FieldError } from '../../errors.js'
import { FixtureAgencySchema, type FixtureAgency } from '../../fixture/schema.js'
import { pointerToPath } from '../../fixture/problems.js'
import { fixtureFormValidator, fixtureFormWarnings, invalidFixture, readFixtureFile, validateFixture, type LoadedFixture } from '../../fixture/validate.js'
import { parseJsonBody } from '../../http/json-body.js'
import { readMirrorBody, type ReadMirror } from '../examiner/mirror-body.js'
import { WorldCreateBody } from '../../schemas/worlds.js'
import { checkedAgency } from '../admin.js'
import { prepareWorld, type PreparedAgency, type PreparedWorld } from '../world.js'
import { RESET_PARTS, type ResetPart } from './reset-parts.js'
import { checkpointFile, snapshotOfFixture } from './starts.js'
import { stateOfSource, type StateSource } from './state-document.js'

/**
 * Reading the large bodies of the control plane: fixture documents (POST /_sandbox/reset, POST
 * /_sandbox/worlds: the JSON, the request's own fields, the fixture's validation, and the rows or
 * the database it becomes), agencies in fixture form (POST /_sandbox/agencies) and examiner
 * mirrors (mirror-body.ts). All of it grows with the body
 * (an 8 MiB fixture took seconds, a mirror of 250,000 clients over a second), so a large body is read in a
 * worker process (fixture-runner.ts) and a small one where it arrives: the same functions either
 * way, so both answer alike. The worker also writes large worlds' state documents (state-document.ts).
 */

/**
 * What a reset body asks for: the parts to keep, and the fixture prepared for loading, or (for a
 * world in memory) the snapshot of a database holding it (both absent: the world's own start).
 */
export interface ResetBody {
  keep: ResetPart[]
  prepared?: PreparedWorld
  snapshot?: Buffer
  /** What the fixture held in an earlier format and was converted, one line per field. */
  warnings: string[]
}

/** What a world-creation body asks for; a fixture comes as the snapshot of a database holding it. */
export interface WorldBody {
  name?: string
  from?: string
  ttlSeconds?: number
  maxBytes?: number
  secrets?: 'fixture'
  snapshot?: Buffer
  /** What the fixture held in an earlier format and was converted, one line per field. */
  warnings: string[]
}

/** Where a snapshot's database is made: the migrations to apply, and the time its seed is stamped with. */
export interface SnapshotSettings {
  migrationsDir: string
  nowIso: string
}

/**
 * What a reset body asks for: nothing (a clean slate), `{keep: [...]}`, a fixture document, or a
 * fixture document with `keep` beside its keys.
 */
export function resetRequest (body: unknown): { keep: ResetPart[], fixture?: unknown } {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    if (body === undefined || body === null) return { keep: [] }
    throw invalidField('(body)', 'must be a fixture document, {"keep": [parts]}, or empty')
  }
  const { keep, ...rest } = body as Record<string, unknown>
  if (keep !== undefined && (!Array.isArray(keep) || keep.some((part) => !(RESET_PARTS as readonly unknown[]).includes(part)))) {
    throw invalidField('keep', `must be a list of parts to keep: ${RESET_PARTS.join(', ')}`)
  }
  return { keep: (keep ?? []) as ResetPart[], ...(Object.keys(rest).length === 0 ? {} : { fixture: rest }) }
}

/** Where a reset's fixture came from, as the world's data records it. */
export const POSTED_RESET_SOURCE = '(posted to /_sandbox/reset)'

/**
 * A reset body read whole: the parts to keep, the fixture validated and prepared; with `snapshot`
 * settings, made into the snapshot of a database holding it instead (a world in memory swaps its
 * database for a copy of it, so that its event loop only swaps).
 */
export function readResetBody (body: unknown, snapshot?: SnapshotSettings): ResetBody {
  const { keep, fixture } = resetRequest(body)
  if (fixture === undefined) return { keep, warnings: [] }
  const result = validateFixture(fixture, { owned: true })
  if (!result.ok) throw invalidFixture(result.report)
  if (snapshot !== undefined && !keep.includes('data')) {
    return { keep, snapshot: snapshotOfFixture(result.fixture, POSTED_RESET_SOURCE, snapshot.migrationsDir, snapshot.nowIso), warnings: result.warnings }
  }
  return { keep, prepared: prepareWorld(result.fixture), warnings: result.warnings }
}

let worldBodyCheck: TypeCheck<typeof WorldCreateBody> | undefined
const MAX_BODY_ERRORS = 20

/** A world-creation body read whole: its fields checked, the fixture validated and made into a snapshot. */
export function readWorldBody (body: unknown, settings: SnapshotSettings): WorldBody {
  const value = body ?? {}
  worldBodyCheck ??= TypeCompiler.Compile(WorldCreateBody)
  if (!worldBodyCheck.Check(value)) {
    const errors: FieldError[] = []
    for (const e of worldBodyCheck.Errors(value)) {
      errors.push({ field: pointerToPath(e.path).replace('(document)', '(body)'), message: e.message })
      if (errors.length >= MAX_BODY_ERRORS) break
    }
    throw validationFailed(errors)
  }
  const { name, from, fixture, ttlSeconds, maxBytes, secrets } = value
  if (from !== undefined && fixture !== undefined) {
    throw badRequest('give either from (a world to copy) or fixture (a fixture document), not both', [{ field: 'from', message: 'cannot be combined with fixture' }])
  }
  if (fixture === undefined) return { name, from, ttlSeconds, maxBytes, secrets, warnings: [] }
  const result = validateFixture(fixture, { owned: true })
  if (!result.ok) {
    throw invalidFixture({ ...result.report, listed: result.report.listed.map((e) => ({ ...e, field: `fixture.${e.field}` })) }, 'The world\'s fixture')
  }
  const snapshot = snapshotOfFixture(result.fixture, '(posted to /_sandbox/worlds)', settings.migrationsDir, settings.nowIso)
  return { name, ttlSeconds, maxBytes, secrets, snapshot, warnings: result.warnings }
}

let agencyForm: ReturnType<typeof fixtureFormValidator> | undefined

/**
 * An agency in fixture form (POST /_sandbox/agencies) read whole: validated as a fixture's agency,
 * checked, made into rows; with what it held in an earlier format, one line per field converted.
 */
export function readAgencyBody (body: unknown): { agency: PreparedAgency, warnings: string[] } {
  agencyForm ??= fixtureFormValidator({ schema: FixtureAgencySchema })
  const result = agencyForm(body)
  if ('error' in result) throw result.error
  return { agency: checkedAgency(result.value as FixtureAgency), warnings: fixtureFormWarnings(result.value) }
}

/**
 * A body to read on the worker: its bytes (parsed there, within the route's value budget); or, for
 * `state`, a world's data to write as a fixture document: its database file, or the snapshot
 * (SQLite's serialized form) of a database in memory as the bytes; for `checkpoint`, the database
 * file whose write-ahead log to fold into it; for `file`, the start-up fixture file to read and validate.
 */
export interface FixtureJob {
  kind: 'reset' | 'world' | 'mirror' | 'agency' | 'state' | 'checkpoint' | 'file'
  bytes: Uint8Array
  file?: string
  /** A reset of a world in memory: the fixture comes back as a snapshot, not as rows. */
  snapshot?: boolean
  maxValues: number
  settings: SnapshotSettings
}

/** An ApiError as it crosses between processes. */
export interface ErrorShape {
  status: number
  code: string
  title: string
  detail: string
  errors?: FieldError[]
  headers: Record<string, string>
}

export type FixtureOutcome =
  | { ok: true, reset?: ResetBody, world?: WorldBody, mirror?: ReadMirror, agency?: { agency: PreparedAgency, warnings: string[] }, state?: Uint8Array[], file?: LoadedFixture }
  | { ok: false, error: ErrorShape }

/** Reads a body as the worker does: a refusal is an outcome, anything else thrown is a failure of the sandbox. */
export function runFixtureJob (job: FixtureJob): FixtureOutcome {
  try {
    if (job.kind === 'checkpoint') {
      checkpointFile(job.file!)
      return { ok: true }
    }
    // a fixture file that cannot be read or is invalid throws FixtureError: a failure, which the
    // runner answers by reading the file where it was asked (fixture-runner.ts fixtureFile)
    if (job.kind === 'file') return { ok: true, file: readFixtureFile(job.file!) }
    if (job.kind === 'state') return { ok: true, state: [...stateOfSource(stateSourceOf(job))] }
    const body = parseJsonBody(Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength), job.maxValues)
    if (job.kind === 'reset') return { ok: true, reset: readResetBody(body, job.snapshot === true ? job.settings : undefined) }
    if (job.kind === 'mirror') return { ok: true, mirror: readMirrorBody(body) }
    if (job.kind === 'agency') return { ok: true, agency: readAgencyBody(body) }
    return { ok: true, world: readWorldBody(body, job.settings) }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { ok: false, error: { status: e.status, code: e.code, title: e.title, detail: e.detail, errors: e.errors, headers: e.headers } }
  }
}

/** Where a state job reads the world's data: its database file, or the snapshot sent as its bytes. */
export const stateSourceOf = (job: FixtureJob): StateSource => job.file === undefined ? { snapshot: job.bytes } : { file: job.file }

/** The ApiError a refusal stands for. */
export const errorOf = (shape: ErrorShape) => new ApiError(shape.status, shape.code, shape.title, shape.detail, shape.errors, false, shape.headers)
