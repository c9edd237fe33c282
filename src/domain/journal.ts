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

export class Journal {
  private entries: (JournalEntry | undefined)[]
  private next = 0
  private nextId = 1

  constructor(readonly capacity: number) {
    this.entries = new Array<JournalEntry | undefined>(Math.max(0, capacity))
  }

  record(entry: Omit<JournalEntry, 'id'>): void {
    if (this.capacity === 0) return
    this.entries[this.next] = { id: this.nextId++, ...entry }
    this.next = (this.next + 1) % this.capacity
  }

  get size(): number {
    return Math.min(this.nextId - 1, this.capacity)
  }

  /** Oldest first; `limit` keeps the newest. */
  list(f: JournalFilter = {}): JournalEntry[] {
    const ordered: JournalEntry[] = []
    for (let i = 0; i < this.capacity; i++) {
      const e = this.entries[(this.next + i) % this.capacity]
      if (e !== undefined) ordered.push(e)
    }
    const sinceId = f.since !== undefined && /^\d+$/.test(f.since) ? Number(f.since) : undefined
    const sinceTime = f.since !== undefined && sinceId === undefined ? Date.parse(f.since) : undefined
    const pathMatch = f.path === undefined ? undefined : globToRegExp(f.path)
    const out = ordered.filter((e) =>
      (f.method === undefined || e.method === f.method.toUpperCase()) &&
      (pathMatch === undefined || pathMatch.test(e.path)) &&
      (f.agencyId === undefined || e.agencyId === f.agencyId) &&
      (f.status === undefined || e.status === f.status) &&
      (sinceId === undefined || e.id > sinceId) &&
      (sinceTime === undefined || Number.isNaN(sinceTime) || Date.parse(e.time) > sinceTime)
    )
    return f.limit === undefined ? out : out.slice(Math.max(0, out.length - f.limit))
  }

  clear(): void {
    this.entries = new Array<JournalEntry | undefined>(this.capacity)
    this.next = 0
  }
}

/**
 * A path glob: `*` matches within one segment, `**` across segments; a glob without any
 * wildcard matches as a substring-free exact path.
 */
export function globToRegExp(glob: string): RegExp {
  let re = ''
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]
    if (ch === '*' && glob[i + 1] === '*') {
      re += '.*'
      i++
    } else if (ch === '*') re += '[^/]*'
    else if (ch === '?') re += '[^/]'
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${re}$`)
}
