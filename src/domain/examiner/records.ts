import { sha256Hex as sha256 } from '../../sha256.js'
import type { AnswerLost } from '../journal.js'
import { EXAMPLES_PER_FINDING, type Example } from '../../schemas/examiner.js'

/**
 * One vendor request as an examiner session records it: what the rules need, nothing more.
 * Stored as JSON (absent fields left out), so names stay short but whole.
 */
export interface RecordedRequest {
  /** Order within the session, from 1 (the world's changes the session saw are numbered among its requests). */
  seq: number
  /** Its position in the world's log (absent: recorded by the session itself, before the log). */
  logSeq?: number
  /** Sandbox clock at arrival (ms): compared with client modification times. */
  atMs: number
  /** Real time at arrival (ms): Retry-After and rates are real time whatever the sandbox clock says. */
  realMs: number
  /** Real milliseconds until the answer was sent. */
  elapsedMs: number
  method: string
  path: string
  /** '4.0', '3.0', '1' or 'unsupported'. */
  version: string
  /** Operation id of the route that answered (src/versions/operations.ts); absent for unknown routes. */
  operation?: string
  /** Query parameters as sent (each value cut at 200 characters). */
  query?: Record<string, string>
  agencyId?: number
  /** The Client Id the request presented (Basic user name), checked or not. */
  clientId?: string
  /** Client numbers the request touched: the path's client, or a batch's numbers (the first 1,000). */
  clients?: number[]
  /** How many client numbers a batch read asked for. */
  batchSize?: number
  /** Agencies the agencies call answered (their ids). */
  listedAgencies?: number[]
  /** Each write item: [RefId, SHA-256 of its content without the RefId]. */
  writes?: Array<[string, string]>
  status: number
  /** The Retry-After header answered, in seconds. */
  retryAfterS?: number
  journalId: number
  faultId?: string
  /** What the sandbox ignored, such as unknown body keys. */
  warnings?: string[]
  /** The answer (of `status`) never reached the client: dropped by a fault rule, or abandoned by the client. */
  answerLost?: AnswerLost
  /** A listing's place in the world's log when it arrived: records from it on came after (absent: not kept). */
  arrivedAt?: number
  /** How many of the session's records came before it arrived (from `arrivedAt`; absent: not known). */
  arrivedAfter?: number
}

/** The operation of a change of the world's data in a session's log (a pseudo-request: method CHANGE, the client's path). */
export const CLIENT_CHANGED = 'clientChanged'

/** A request as a finding's example. */
export const exampleOf = (r: RecordedRequest, detail?: string): Example =>
  detail === undefined
    ? { journalId: r.journalId, method: r.method, path: r.path, status: r.status }
    : { journalId: r.journalId, method: r.method, path: r.path, status: r.status, detail }

/** The query parameter's value, its name in any case (the service binds names so). */
export function queryValue (r: RecordedRequest, name: string): string | undefined {
  if (r.query === undefined) return undefined
  const exact = r.query[name]
  if (exact !== undefined) return exact
  const lower = name.toLowerCase()
  for (const key in r.query) if (key.toLowerCase() === lower) return r.query[key]
  return undefined
}

/** A boolean query parameter, in any case, is true. */
export const queryIsTrue = (r: RecordedRequest, name: string) => queryValue(r, name)?.trim().toLowerCase() === 'true'

export const succeeded = (r: RecordedRequest) => r.status >= 200 && r.status < 300

/** What one rule found: occurrences, a message, and the first examples. */
export class Tally {
  count = 0
  readonly examples: Example[] = []
  /** Names or numbers the message lists (distinct, in the order seen). */
  readonly named = new Set<string>()

  constructor (readonly limit = EXAMPLES_PER_FINDING) {}

  /** `occurrences` (one by default); `request` becomes an example while there is room. */
  add (request?: RecordedRequest, detail?: string, occurrences = 1): void {
    this.count += occurrences
    if (request !== undefined && this.examples.length < this.limit) this.examples.push(exampleOf(request, detail))
  }

  name (...names: Array<string | number>): void {
    for (const n of names) this.named.add(String(n))
  }

  /** The named things, the first `max` of them, for a message. */
  list (max = 10): string {
    const all = [...this.named]
    return all.length <= max ? all.join(', ') : `${all.slice(0, max).join(', ')} and ${all.length - max} more`
  }
}

/** Each rule's tally, by rule id; a rule with a count of 0 gives no finding. */
export interface RuleOutcome {
  tally: Tally
  message: string
}
export type RuleOutcomes = Map<string, RuleOutcome>

/** Plural-aware count: `count(3, 'request')` is '3 requests'. */
export const count = (n: number, noun: string, plural = `${noun}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`

/** JSON with keys lower-cased and sorted: the service binds keys without regard to case or order. */
function canonical (value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']'
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k.toLowerCase(), v] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return '{' + entries.map(([k, v]) => JSON.stringify(k) + ':' + canonical(v)).join(',') + '}'
  }
  return JSON.stringify(value) ?? 'null'
}

/** One JSON write item: its RefId (any key casing) and the fingerprint of the rest; undefined without a RefId. */
function jsonItem (item: unknown): [string, string] | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined
  let refId: string | undefined
  const rest: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(item as Record<string, unknown>)) {
    if (key.toLowerCase() === 'refid') {
      if (typeof value === 'string') refId = value
    } else {
      rest[key] = value
    }
  }
  return refId === undefined ? undefined : [refId, sha256(canonical(rest))]
}

/**
 * The write items of a request as [RefId, content fingerprint]: the fingerprint leaves the RefId
 * out, so the same content sent under two RefIds has one fingerprint. `headers` are the
 * attachment's metadata headers (lower-case names), whose body is the file.
 */
export function writeItems (operation: string, body: unknown, headers?: Record<string, string>): Array<[string, string]> | undefined {
  if (operation === 'attachment') {
    if (headers === undefined || headers.refid === undefined) return undefined
    const { refid, ...metadata } = headers
    const content = Buffer.isBuffer(body) ? sha256(body) : null
    return [[refid, sha256(canonical({ metadata, content }))]]
  }
  if (operation === 'receipts' && Array.isArray(body)) {
    const items = body.map(jsonItem).filter((i): i is [string, string] => i !== undefined)
    return items.length === 0 ? undefined : items
  }
  const item = jsonItem(body)
  return item === undefined ? undefined : [item]
}
