/**
 * The request journal: what each partner request looked like and how it was answered.
 * A ring buffer of a fixed number of entries (oldest dropped), so memory stays flat.
 * Credentials never enter it: only the Client Id of the integration.
 */
export interface JournalEntry {
  id: number
  /** Sandbox clock time the request arrived. */
  time: string
  method: string
  path: string
  version: string
  query: Record<string, string>
  integration: string | null
  agencyId: number | null
  status: number
  durationMs: number
  warnings: string[]
  /** Writes only: the JSON body as sent, or a summary of a binary body. */
  body?: unknown
  /** Id of the fault rule that answered, if any. */
  fault?: string
}

export interface JournalFilter {
  method?: string
  path?: string
  agencyId?: number
  status?: number
  /** Entries after this id, or after this ISO time. */
  since?: string
  limit?: number
}

/** What record() takes: the entry, or a function making it when the journal is first read. */
export type JournalInput = Omit<JournalEntry, 'id'> | (() => Omit<JournalEntry, 'id'>)

interface Slot {
  id: number
  input: JournalInput
  entry?: JournalEntry
}

export class Journal {
  private entries: (Slot | undefined)[]
  private next = 0
  private nextId = 1

  constructor(readonly capacity: number) {
    this.entries = new Array<Slot | undefined>(Math.max(0, capacity))
  }

  /**
   * Keeps an entry. Recording is on every partner request's path and reading is rare, so the
   * caller may pass a function: it runs (once) when the entry is first listed.
   */
  record(input: JournalInput): void {
    if (this.capacity === 0) return
    this.entries[this.next] = { id: this.nextId++, input }
    this.next = (this.next + 1) % this.capacity
  }

  private entryOf(slot: Slot): JournalEntry {
    if (slot.entry === undefined) {
      slot.entry = { id: slot.id, ...(typeof slot.input === 'function' ? slot.input() : slot.input) }
      slot.input = slot.entry
    }
    return slot.entry
  }

  get size(): number {
    return Math.min(this.nextId - 1, this.capacity)
  }

  /** Oldest first; `limit` keeps the newest. */
  list(f: JournalFilter = {}): JournalEntry[] {
    const ordered: JournalEntry[] = []
    for (let i = 0; i < this.capacity; i++) {
      const slot = this.entries[(this.next + i) % this.capacity]
      if (slot !== undefined) ordered.push(this.entryOf(slot))
    }
    const sinceId = f.since !== undefined && /^\d+$/.test(f.since) ? Number(f.since) : undefined
    const sinceTime = f.since !== undefined && sinceId === undefined ? Date.parse(f.since) : undefined
    const pathMatch = f.path === undefined ? undefined : compileGlob(f.path)
    const out = ordered.filter((e) =>
      (f.method === undefined || e.method === f.method.toUpperCase()) &&
      (pathMatch === undefined || pathMatch(e.path)) &&
      (f.agencyId === undefined || e.agencyId === f.agencyId) &&
      (f.status === undefined || e.status === f.status) &&
      (sinceId === undefined || e.id > sinceId) &&
      (sinceTime === undefined || Number.isNaN(sinceTime) || Date.parse(e.time) > sinceTime)
    )
    return f.limit === undefined ? out : out.slice(Math.max(0, out.length - f.limit))
  }

  clear(): void {
    this.entries = new Array<Slot | undefined>(this.capacity)
    this.next = 0
  }
}

type GlobToken = '**' | '*' | '?' | { char: string }

/**
 * A path glob matcher: `*` matches within one segment, `**` across segments, `?` one
 * character of a segment. Matching is a linear pass per token (no regular expression, so no
 * pattern can make it backtrack).
 */
export function compileGlob(glob: string): (text: string) => boolean {
  const tokens: GlobToken[] = []
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] === '*') {
      let run = 1
      while (glob[i + 1] === '*') {
        run++
        i++
      }
      const token = run >= 2 ? '**' : '*'
      const last = tokens.at(-1)
      if (last === '**') continue // `**` already covers what follows
      if (last === '*' && token === '**') tokens[tokens.length - 1] = '**'
      else if (last !== '*') tokens.push(token)
    } else if (glob[i] === '?') tokens.push('?')
    else tokens.push({ char: glob[i] })
  }
  return (text) => {
    const n = text.length
    let prev = new Uint8Array(n + 1)
    prev[0] = 1
    for (const token of tokens) {
      const cur = new Uint8Array(n + 1)
      if (token === '**') {
        let seen = 0
        for (let k = 0; k <= n; k++) cur[k] = seen |= prev[k]
      } else if (token === '*') {
        for (let k = 0; k <= n; k++) cur[k] = prev[k] | (k > 0 && cur[k - 1] === 1 && text[k - 1] !== '/' ? 1 : 0)
      } else if (token === '?') {
        for (let k = 1; k <= n; k++) cur[k] = prev[k - 1] === 1 && text[k - 1] !== '/' ? 1 : 0
      } else {
        for (let k = 1; k <= n; k++) cur[k] = prev[k - 1] === 1 && text[k - 1] === token.char ? 1 : 0
      }
      prev = cur
    }
    return prev[n] === 1
  }
}
