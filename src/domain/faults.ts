import { conflict } from '../errors.js'
import { compileGlob, type GlobMatcher } from './glob.js'
import { seededDraw } from './random.js'

/**
 * Fault rules: make chosen vendor requests fail on purpose (a status and body, a delay, a
 * dropped connection, or an answer lost after the request was handled), for the next N matches, every Nth match, or with a probability that is
 * reproducible from the rule's seed.
 */
export interface FaultMatch {
  method?: string
  /** Path glob: `*` within a segment, `**` across segments (compiled once, when the rule is added). */
  path?: string
  version?: string
  clientId?: string
  agencyId?: number
}

export interface FaultEffect {
  status?: number
  body?: unknown
  headers?: Record<string, string>
  delayMs?: number
  /** Close the connection without answering: the request is not handled. */
  drop?: boolean
  /** Handle the request (a write is applied), then close the connection instead of sending its answer. */
  dropAnswer?: boolean
}

export interface FaultInput {
  match?: FaultMatch
  effect: FaultEffect
  /** Apply to at most this many requests. */
  times?: number
  /** Apply to every Nth matching request (3: the 3rd, 6th, …). */
  every?: number
  /** Chance (0-1) that a matching request is affected; reproducible from `seed`. */
  probability?: number
  seed?: number
}

export interface FaultRule extends FaultInput {
  id: string
  match: FaultMatch
  /** Requests that matched the rule. */
  matched: number
  /** Requests the rule affected. */
  hits: number
  exhausted: boolean
}

export interface FaultRequest {
  method: string
  /** Cut at MAX_MATCHED_PATH characters (capPath), so matching stays bounded. */
  path: string
  version: string
  clientId: string | null
  agencyId: number | null
}

/**
 * Rules kept at once. Every vendor request is matched against each rule before
 * authentication; with globs and paths capped, this bounds the work a request can cost.
 */
export const MAX_FAULT_RULES = 100

interface Compiled {
  rule: FaultRule
  path: GlobMatcher | undefined
}

/** The rules with their counts: what a hosted world's log keeps of them (worlds/world-state.ts). */
export interface FaultRules {
  nextId: number
  rules: FaultRule[]
}

export class Faults {
  private rules: Compiled[] = []
  private nextId = 1

  /** The rules, their counts, and what is needed to go on numbering them. */
  state (): FaultRules {
    return { nextId: this.nextId, rules: this.rules.map(({ rule }) => ({ ...rule })) }
  }

  /** Takes the rules a hosted world's log kept (its owner's, before this instance took the world). */
  adopt (state: FaultRules): void {
    this.nextId = state.nextId
    this.rules = state.rules.map((rule) => compile({ ...rule }))
  }

  add (input: FaultInput): FaultRule {
    if (this.rules.length >= MAX_FAULT_RULES) {
      throw conflict(`There are already ${MAX_FAULT_RULES} fault rules, the most kept at once; remove some (DELETE /_sandbox/faults/{id}) or all (DELETE /_sandbox/faults) first`)
    }
    const rule: FaultRule = { ...input, match: input.match ?? {}, id: `fault-${this.nextId++}`, matched: 0, hits: 0, exhausted: false }
    this.rules.push(compile(rule))
    return rule
  }

  list (): FaultRule[] {
    return this.rules.map((c) => c.rule)
  }

  remove (id: string): boolean {
    const before = this.rules.length
    this.rules = this.rules.filter((c) => c.rule.id !== id)
    return this.rules.length !== before
  }

  clear (): void {
    this.rules = []
  }

  get active (): boolean {
    return this.rules.length > 0
  }

  /** The first rule that affects this request (counting its match and hit), if any. */
  decide (req: FaultRequest): FaultRule | undefined {
    for (const c of this.rules) {
      const { rule } = c
      if (rule.exhausted || !matches(c, req)) continue
      rule.matched++
      if (rule.every !== undefined && rule.matched % rule.every !== 0) continue
      if (rule.probability !== undefined && seededDraw(rule.seed ?? 1, drawOf(rule, rule.matched)) >= rule.probability) continue
      rule.hits++
      if (rule.times !== undefined && rule.hits >= rule.times) rule.exhausted = true
      return rule
    }
    return undefined
  }
}

function compile (rule: FaultRule): Compiled {
  return { rule, path: rule.match.path === undefined ? undefined : compileGlob(rule.match.path) }
}

/** Which draw of the rule's seeded sequence its `matched`-th match takes: one per match that passes `every`. */
const drawOf = (rule: FaultRule, matched: number) => (rule.every === undefined ? matched : matched / rule.every)

function matches (c: Compiled, req: FaultRequest): boolean {
  const m = c.rule.match
  // the glob last: it is the only test that reads the whole path
  return (m.method === undefined || m.method.toUpperCase() === req.method) &&
    (m.version === undefined || m.version === req.version) &&
    (m.clientId === undefined || m.clientId === req.clientId) &&
    (m.agencyId === undefined || m.agencyId === req.agencyId) &&
    (c.path === undefined || c.path(req.path))
}
