import { capPath, compileGlob, pathOf } from './glob.js'

/**
 * The request journal: what each partner request looked like and how it was answered.
 * Bounded twice: at most `capacity` entries and at most `budgetBytes` of accounted memory, the
 * oldest entries dropped first, so a caller sending large bodies cannot grow the process.
 * Credentials never enter it: only the Client Id of the integration.
 */
export interface JournalEntry {
  id: number
  /** Sandbox clock time the answer was sent (it arrived `durationMs` earlier, the clock running). */
  time: string
  /** The request's id: its `x-request-id` as sent (when usable), else the one the sandbox made; the answer echoes it. */
  requestId?: string
  method: string
  /** The path, cut at MAX_MATCHED_PATH characters (then ending with PATH_CUT_MARKER). */
  path: string
  version: string
  query: Record<string, string>
  integration: string | null
  agencyId: number | null
  status: number
  durationMs: number
  warnings: string[]
  /** Writes only: the JSON body as sent, or a description of it (see RecordedBody). */
  body?: unknown
  /** Id of the fault rule that answered, if any. */
  fault?: string
  /** The answer (of `status`) never reached the client: see AnswerLost. */
  answerLost?: AnswerLost
}

/**
 * Why a request's answer never reached its client: `dropped`, a fault rule's dropAnswer closed the
 * connection after the request was handled; `abandoned`, the client closed it before the answer.
 */
export type AnswerLost = 'dropped' | 'abandoned'

export interface JournalFilter {
  method?: string
  path?: string
  agencyId?: number
  status?: number
  /** Entries after this id, or after this ISO time. */
  since?: string
  limit?: number
}

/** Default byte budget: with 1,000 entries of 16 KiB bodies it stays about 16 MiB, well inside the 200 MB target. */
export const DEFAULT_JOURNAL_BYTES = 16 * 1024 * 1024
/** A JSON body is kept whole up to this many characters of text, else its first characters. */
export const MAX_BODY_TEXT = 16 * 1024
/** Warnings kept per entry (the rest are counted), and characters kept per warning. */
export const MAX_WARNINGS = 20
export const MAX_WARNING_TEXT = 200
/** Accounted for every entry besides its strings: its place in the ring, and its description once read (time, query object). */
export const ENTRY_OVERHEAD_BYTES = 640
/**
 * Work (characters read, times the glob automaton's width) a query does before it lets other
 * requests run: a few milliseconds, so even a full journal of the longest paths queried with the
 * widest glob never holds the event loop for long.
 */
export const QUERY_WORK_PER_TURN = 1 << 20

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** What the journal keeps of a request body. */
export type RecordedBody =
  /** The complete JSON text (compact, as received): readers see the parsed value. */
  | { json: string }
  /** A description in place of the body: truncated text, a binary summary, or a size and digest. */
  | { about: Record<string, unknown> }

/** The entry without its id and body, made when the journal is first read (recording stays cheap). */
export type EntryDescription = Omit<JournalEntry, 'id' | 'body'>

/**
 * A request as the journal takes it. Nothing of this object is kept, only its fields, in a slot
 * of the journal's own: at a few thousand requests a second an entry lives long enough to reach
 * V8's old generation, where every object kept per request becomes the garbage of a full
 * collection (a 3-8 ms pause every 0.7 s when each entry kept its own objects).
 */
export interface JournalInput {
  /** The request URL, path and query (counted twice: raw, then as path and query). */
  url: string
  /** The request's id (counted once). */
  requestId: string | undefined
  method: string
  version: string
  integration: string | null
  agencyId: number | null
  status: number
  durationMs: number
  warnings: readonly string[]
  body: RecordedBody | undefined
  fault: string | null
  answerLost: AnswerLost | null
}

/** One place of the ring, reused by the entries that follow (its fields overwritten); `entry` is its description once read. */
type Slot = JournalInput & {
  id: number
  atMs: number
  bytes: number
  entry: EntryDescription | undefined
}

/** An entry a query selected, as it stood when selected (its slot may be reused meanwhile). */
interface Selected {
  id: number
  entry: EntryDescription
  body: RecordedBody | undefined
}

const NO_WARNINGS: readonly string[] = Object.freeze([])

/** What a slot's request looked like, from its fields. */
function describe (slot: Slot): EntryDescription {
  const path = pathOf(slot.url)
  return {
    time: new Date(slot.atMs).toISOString(),
    requestId: slot.requestId,
    method: slot.method,
    path: capPath(path),
    version: slot.version,
    query: Object.fromEntries(new URLSearchParams(slot.url.slice(path.length + 1))),
    integration: slot.integration,
    agencyId: slot.agencyId,
    status: slot.status,
    durationMs: Math.round(slot.durationMs * 100) / 100,
    warnings: [...slot.warnings],
    ...(slot.fault === null ? {} : { fault: slot.fault }),
    ...(slot.answerLost === null ? {} : { answerLost: slot.answerLost })
  }
}

/**
 * Approximate bytes a string takes: one per character when every character fits in Latin-1
 * (V8 then stores one byte each), else two.
 */
export function stringBytes (text: string): number {
  // eslint-disable-next-line no-control-regex
  return /[^\u0000-\u00ff]/.test(text) ? text.length * 2 : text.length
}

/** Approximate bytes of a small JSON-like value (the descriptions of bodies). */
function valueBytes (value: unknown): number {
  if (typeof value === 'string') return 16 + stringBytes(value)
  if (value === null || typeof value !== 'object') return 8
  let total = 32
  for (const [key, item] of Object.entries(value)) total += 8 + key.length + valueBytes(item)
  return total
}

function bodyBytes (body: RecordedBody | undefined): number {
  if (body === undefined) return 0
  return 'json' in body ? 16 + stringBytes(body.json) : valueBytes(body.about)
}

/** The accounted size of an entry: its strings and a fixed overhead. */
export function entryBytes (input: JournalInput): number {
  let total = ENTRY_OVERHEAD_BYTES + 2 * stringBytes(input.url) + bodyBytes(input.body) + (input.requestId === undefined ? 0 : 16 + input.requestId.length)
  for (const warning of input.warnings) total += 16 + stringBytes(warning)
  return total
}

/**
 * A copy of a string cut from a longer one. V8 may keep a slice as a view of the whole string,
 * which would keep (say) a 1 MiB body alive for a 16 KiB excerpt; decoding fresh bytes does not.
 */
export function detachedCopy (text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8')
}

/** Warnings as the journal keeps them: at most MAX_WARNINGS, each at most MAX_WARNING_TEXT characters. */
export function capWarnings (warnings: readonly string[]): string[] {
  const kept = warnings.slice(0, MAX_WARNINGS).map((w) => (w.length <= MAX_WARNING_TEXT ? w : detachedCopy(w.slice(0, MAX_WARNING_TEXT)) + '…'))
  if (warnings.length > MAX_WARNINGS) kept.push(`and ${warnings.length - MAX_WARNINGS} more`)
  return kept
}

export class Journal {
  /** The ring: slots made as it first fills, then reused. */
  private slots: Slot[] = []
  /** Index of the oldest entry. */
  private head = 0
  private count = 0
  private accounted = 0
  private nextId = 1

  constructor (readonly capacity: number, readonly budgetBytes: number = DEFAULT_JOURNAL_BYTES) {}

  /** Entries kept now. */
  get size (): number {
    return this.count
  }

  /** Accounted bytes of the entries kept now (never above budgetBytes). */
  get bytes (): number {
    return this.accounted
  }

  /**
   * Keeps an entry, dropping the oldest while the entry count or the byte budget would be
   * exceeded. An entry larger than the whole budget is not kept. Recording is on every partner
   * request's path and reading is rare, so the entry is described when first listed. Returns
   * the entry's id (examiner sessions refer to requests by it), or 0 when it is not kept.
   */
  record (input: JournalInput, atMs: number): number {
    const bytes = entryBytes(input)
    if (this.capacity === 0 || bytes > this.budgetBytes) return 0
    while (this.count > 0 && (this.count === this.capacity || this.accounted + bytes > this.budgetBytes)) this.dropOldest()
    const id = this.nextId++
    const index = (this.head + this.count) % this.capacity
    let slot = this.slots[index]
    if (slot === undefined) this.slots[index] = slot = emptySlot()
    slot.id = id
    slot.atMs = atMs
    slot.bytes = bytes
    slot.url = input.url
    slot.requestId = input.requestId
    slot.method = input.method
    slot.version = input.version
    slot.integration = input.integration
    slot.agencyId = input.agencyId
    slot.status = input.status
    slot.durationMs = input.durationMs
    slot.warnings = input.warnings.length === 0 ? NO_WARNINGS : input.warnings
    slot.body = input.body
    slot.fault = input.fault
    slot.answerLost = input.answerLost
    slot.entry = undefined
    this.count++
    this.accounted += bytes
    return id
  }

  private dropOldest (): void {
    const slot = this.slots[this.head]
    this.head = (this.head + 1) % this.capacity
    this.count--
    this.accounted -= slot.bytes
    // what the dropped entry held is let go now, not when its slot is next written
    slot.body = undefined
    slot.entry = undefined
    slot.warnings = NO_WARNINGS
  }

  private describe (slot: Slot): EntryDescription {
    return (slot.entry ??= describe(slot))
  }

  /**
   * The entries a filter selects, oldest first; `limit` keeps the newest. The glob is compiled
   * once and tried last; the entries are those kept when the query began and still kept when it
   * reaches them (a slot reused meanwhile holds a newer entry: its own is gone), and the query
   * gives other requests their turn every QUERY_WORK_PER_TURN units of work.
   */
  private async select (f: JournalFilter): Promise<Selected[]> {
    const sinceId = f.since !== undefined && /^\d+$/.test(f.since) ? Number(f.since) : undefined
    const sinceMs = f.since !== undefined && sinceId === undefined ? Date.parse(f.since) : undefined
    const method = f.method?.toUpperCase()
    const pathMatch = f.path === undefined ? undefined : compileGlob(f.path)
    const kept: Array<{ slot: Slot, id: number }> = []
    for (let i = 0; i < this.count; i++) {
      const slot = this.slots[(this.head + i) % this.capacity]
      kept.push({ slot, id: slot.id })
    }
    const out: Selected[] = []
    let work = 0
    for (const { slot, id } of kept) {
      if (slot.id !== id) continue
      if (sinceId !== undefined && id <= sinceId) continue
      if (sinceMs !== undefined && !Number.isNaN(sinceMs) && slot.atMs <= sinceMs) continue
      const e = this.describe(slot)
      work += e.path.length
      if ((method === undefined || e.method === method) &&
        (f.agencyId === undefined || e.agencyId === f.agencyId) &&
        (f.status === undefined || e.status === f.status) &&
        (pathMatch === undefined || (work += e.path.length * pathMatch.words, pathMatch(e.path)))) out.push({ id, entry: e, body: slot.body })
      if (work >= QUERY_WORK_PER_TURN) {
        work = 0
        await nextTurn()
      }
    }
    return f.limit === undefined ? out : out.slice(Math.max(0, out.length - f.limit))
  }

  /** Entries as objects, bodies parsed (for code in the same process). */
  async list (f: JournalFilter = {}): Promise<JournalEntry[]> {
    return (await this.select(f)).map(({ id, entry: described, body }) => {
      const entry: JournalEntry = { id, ...described }
      if (body !== undefined) entry.body = 'json' in body ? JSON.parse(body.json) : body.about
      return entry
    })
  }

  /**
   * The same entries as one JSON array text, for the control API. A kept JSON body is spliced in
   * as its text, never parsed: parsing 16 MiB of `[{},{},…]` would cost far more time and memory
   * than the text itself.
   */
  async listJson (f: JournalFilter = {}): Promise<string> {
    return `[${(await this.select(f)).map((selected) => `{"id":${selected.id},${text(selected).slice(1)}`).join(',')}]`
  }

  /** Drops every entry (and the references to them) and starts counting from zero; ids keep rising. */
  async clear (): Promise<void> {
    this.slots = []
    this.head = 0
    this.count = 0
    this.accounted = 0
  }
}

function emptySlot (): Slot {
  return { id: 0, atMs: 0, bytes: 0, url: '', requestId: undefined, method: '', version: '', integration: null, agencyId: null, status: 0, durationMs: 0, warnings: NO_WARNINGS, body: undefined, fault: null, answerLost: null, entry: undefined }
}

/** An entry's JSON text without its id. */
function text ({ entry, body }: Selected): string {
  const head = JSON.stringify(entry)
  if (body === undefined) return head
  return `${head.slice(0, -1)},"body":${'json' in body ? body.json : JSON.stringify(body.about)}}`
}
