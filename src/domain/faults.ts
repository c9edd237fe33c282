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

/** The rules as every instance holds them (hosted mode): each change is sent to the others whole (worlds/replica.ts). */
export interface FaultRules {
  nextId: number
  rules: Array<FaultInput & { id: string }>
}

/**
 * Where the counts of rules shared by several instances are kept and decided (hosted mode), so
 * `times`, `every` and `probability` hold across instances exactly: each step counts one, if the
 * rule is not exhausted meanwhile (undefined when it is).
 */
export interface SharedFaultCounts {
  /** Counts one match; the rule's matches so far. */
  match(ruleId: string): Promise<number | undefined>
  /** Counts one hit, exhausting the rule at its `times`; its hits so far. */
  hit(ruleId: string, times: number | undefined): Promise<number | undefined>
  /** Every rule's counts now. */
  all(): Promise<Map<string, Pick<FaultRule, 'matched' | 'hits' | 'exhausted'>>>
}

export class Faults {
  private rules: Compiled[] = []
  private nextId = 1
  private shared: SharedFaultCounts | undefined

  /** Told of each change of the rules, with the rules after it (a replica sends them to the others). */
  observer: ((rules: FaultRules) => void) | undefined

  /** From now on the rules' counts are kept and decided there (hosted mode): decide with decideShared. */
  share (counts: SharedFaultCounts): void {
    this.shared = counts
  }

  /** The rules and what is needed to go on numbering them. */
  state (): FaultRules {
    return { nextId: this.nextId, rules: this.rules.map(({ rule }) => inputOf(rule)) }
  }

  /** Takes the rules another replica holds; a rule held here already keeps its counts. */
  adopt (state: FaultRules): void {
    const held = new Map(this.rules.map((c) => [c.rule.id, c]))
    this.nextId = state.nextId
    this.rules = state.rules.map((input) => held.get(input.id) ?? compile({ ...input, match: input.match ?? {}, matched: 0, hits: 0, exhausted: false }))
  }

  private changed (): void {
    this.observer?.(this.state())
  }

  add (input: FaultInput): FaultRule {
    if (this.rules.length >= MAX_FAULT_RULES) {
      throw conflict(`There are already ${MAX_FAULT_RULES} fault rules, the most kept at once; remove some (DELETE /_sandbox/faults/{id}) or all (DELETE /_sandbox/faults) first`)
    }
    const rule: FaultRule = { ...input, match: input.match ?? {}, id: `fault-${this.nextId++}`, matched: 0, hits: 0, exhausted: false }
    this.rules.push(compile(rule))
    this.changed()
    return rule
  }

  list (): FaultRule[] {
    return this.rules.map((c) => c.rule)
  }

  remove (id: string): boolean {
    const before = this.rules.length
    this.rules = this.rules.filter((c) => c.rule.id !== id)
    if (this.rules.length === before) return false
    this.changed()
    return true
  }

  clear (): void {
    if (this.rules.length === 0) return
    this.rules = []
    this.changed()
  }

  /** The rules with their counts now (kept where they are shared, in hosted mode). */
  async current (): Promise<FaultRule[]> {
    if (this.shared !== undefined) {
      const counts = await this.shared.all()
      for (const { rule } of this.rules) Object.assign(rule, counts.get(rule.id) ?? {})
    }
    return this.list()
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

  /**
   * decide() for rules whose counts are shared (hosted mode): each step is counted where the counts
   * are kept, and the probability's draw is the one of that match's turn (seededDraw), so the
   * requests of every instance take the rules' turns as one instance's would.
   */
  async decideShared (req: FaultRequest): Promise<FaultRule | undefined> {
    const counts = this.shared
    if (counts === undefined) return this.decide(req)
    for (const c of [...this.rules]) {
      const { rule } = c
      if (rule.exhausted || !matches(c, req)) continue
      const matched = await counts.match(rule.id)
      if (matched === undefined) {
        rule.exhausted = true
        continue
      }
      rule.matched = Math.max(rule.matched, matched)
      if (rule.every !== undefined && matched % rule.every !== 0) continue
      if (rule.probability !== undefined && seededDraw(rule.seed ?? 1, drawOf(rule, matched)) >= rule.probability) continue
      const hits = await counts.hit(rule.id, rule.times)
      if (hits === undefined) {
        rule.exhausted = true
        continue
      }
      rule.hits = Math.max(rule.hits, hits)
      if (rule.times !== undefined && hits >= rule.times) rule.exhausted = true
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

function inputOf (rule: FaultRule): FaultInput & { id: string } {
  const { matched: _matched, hits: _hits, exhausted: _exhausted, ...input } = rule
  return input
}

function matches (c: Compiled, req: FaultRequest): boolean {
  const m = c.rule.match
  // the glob last: it is the only test that reads the whole path
  return (m.method === undefined || m.method.toUpperCase() === req.method) &&
    (m.version === undefined || m.version === req.version) &&
    (m.clientId === undefined || m.clientId === req.clientId) &&
    (m.agencyId === undefined || m.agencyId === req.agencyId) &&
    (c.path === undefined || c.path(req.path))
}
