import pg from 'pg'

/**
 * Leases among instances (hosted mode): session-level advisory locks held on a connection of this
 * instance's own, so at most one instance holds a key at a time (a world's real-time simulator),
 * and a key is free for another instance as soon as its holder's connection ends, a process
 * killed outright included. Keys this instance seeks are tried again every `retryMs`.
 */

/** The first of the two keys of every lease's lock: apart from the one-key locks of the logs and the catalogue. */
const LEASE_SPACE = 0x53494d /* 'SIM' */

export interface LeaseSettings {
  url: string
  retryMs?: number
  onError?: (message: string) => void
}

export class Leases {
  private client: pg.Client | undefined
  /** The keys sought, each with whom to tell when it is granted or lost. */
  private readonly sought = new Map<string, (held: boolean) => void>()
  private readonly held = new Set<string>()
  private round: Promise<void> = Promise.resolve()
  private readonly timer: NodeJS.Timeout
  private closed = false

  constructor (private readonly settings: LeaseSettings) {
    this.timer = setInterval(() => this.again(), settings.retryMs ?? 1000)
    this.timer.unref()
  }

  /** Seeks the key (told `true` once held, `false` if it is lost), or gives it up. */
  seek (key: string, wanted: boolean, onChange: (held: boolean) => void): void {
    if (wanted === this.sought.has(key)) return
    if (wanted) this.sought.set(key, onChange)
    else this.sought.delete(key)
    // sought again before a round gave it back: still held (if that round gives it back, it says so)
    if (wanted && this.held.has(key)) onChange(true)
    this.again()
  }

  async close (): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    await this.round
    const client = this.client
    this.client = undefined
    await client?.end().catch(() => undefined)
  }

  /** One round at a time: locks for the keys sought and not held, unlocks for those held and no longer sought. */
  private again (): void {
    this.round = this.round.then(async () => await this.settle()).catch((e: Error) => this.lost(e))
  }

  private async settle (): Promise<void> {
    if (this.closed) return
    const wanting = [...this.sought.keys()].filter((key) => !this.held.has(key))
    const leaving = [...this.held].filter((key) => !this.sought.has(key))
    if (wanting.length === 0 && leaving.length === 0) return
    const client = this.client ?? await this.connect()
    for (const key of leaving) {
      await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LEASE_SPACE, key])
      this.held.delete(key)
      // sought again while it was given back: not held now, and tried for again on the next round
      this.sought.get(key)?.(false)
    }
    for (const key of wanting) {
      const { rows } = await client.query<{ granted: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS granted', [LEASE_SPACE, key])
      if (rows[0]?.granted !== true) continue
      // sought no more while it was asked: given back at once, on the next round
      const onChange = this.sought.get(key)
      this.held.add(key)
      onChange?.(true)
    }
  }

  private async connect (): Promise<pg.Client> {
    // eslint-disable-next-line camelcase -- pg's own option names
    const client = new pg.Client({ connectionString: this.settings.url, application_name: 'agency-sandbox leases', keepAlive: true, connectionTimeoutMillis: 3000 })
    client.on('error', (e) => { if (this.client === client) this.lost(e) })
    client.on('end', () => { if (this.client === client) this.lost() })
    await client.connect()
    this.client = client
    return client
  }

  /** The connection ended or failed: every lease it held is free for others now; sought keys are tried again. */
  private lost (e?: Error): void {
    const client = this.client
    this.client = undefined
    client?.end().catch(() => undefined)
    if (e !== undefined && !this.closed) this.settings.onError?.(`PostgreSQL leases: ${e.message}; trying again in ${this.settings.retryMs ?? 1000} ms`)
    const held = [...this.held]
    this.held.clear()
    for (const key of held) this.sought.get(key)?.(false)
  }
}
