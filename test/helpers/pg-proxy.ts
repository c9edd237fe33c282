import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy between instances and a PostgreSQL server that can lose the answer to one COMMIT:
 * armed with a pattern, it watches the statements each connection sends (PostgreSQL's frontend
 * messages: Query and Parse carry their SQL text), and at the first COMMIT sent on a connection
 * after a statement matching the pattern it acts: `drop-before` closes both sides without
 * forwarding the COMMIT (nothing is applied); `drop-after` forwards the COMMIT, then closes both
 * sides (the server commits, the client never hears it); `hold-after` forwards it and answers
 * nothing more on that connection (with `onHeld`, e.g. freezing the server). It acts once, then
 * disarms. Armed `at: 'sync'`, it acts instead at the Sync that ends the matching statement's
 * execution (a statement of its own, committed at that Sync: a world's append).
 */

export type LostCommit = 'drop-before' | 'drop-after' | 'hold-after'

interface Armed {
  pattern: RegExp
  action: LostCommit
  onHeld?: () => void
  at: 'commit' | 'sync'
}

export class PgProxy {
  private readonly server: Server
  private armed: Armed | undefined
  private readonly sockets = new Set<Socket>()
  /** How many times it acted. */
  fired = 0
  /** Connections opened through it. */
  connections = 0
  port = 0

  constructor (private readonly targetPort: number) {
    this.server = createServer((client) => this.connection(client))
  }

  async listen (): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.port = (this.server.address() as { port: number }).port
    return `postgres://sandbox@127.0.0.1:${this.port}/postgres`
  }

  arm (pattern: RegExp, action: LostCommit, onHeld?: () => void, at: 'commit' | 'sync' = 'commit'): void {
    this.armed = { pattern, action, onHeld, at }
  }

  async close (): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise((resolve) => this.server.close(resolve))
  }

  private connection (client: Socket): void {
    this.connections++
    const upstream = connect(this.targetPort, '127.0.0.1')
    this.sockets.add(client)
    this.sockets.add(upstream)
    const end = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end)
    upstream.on('error', end)
    client.on('close', () => { upstream.end(); this.sockets.delete(client) })
    upstream.on('close', () => { client.destroy(); this.sockets.delete(upstream) })
    let held = false
    upstream.on('data', (data) => { if (!held) client.write(data) })

    let pending = Buffer.alloc(0)
    let started = false
    let marked = false
    /** The SQL of the statements prepared on this connection, by name ('' the unnamed one). */
    const prepared = new Map<string, string>()
    client.on('data', (data) => {
      pending = Buffer.concat([pending, data])
      for (;;) {
        // the startup message (and an SSL request) has no type byte
        const typed = started ? 1 : 0
        if (pending.length < typed + 4) return
        const length = pending.readInt32BE(typed)
        const total = typed + length
        if (pending.length < total) return
        const message = pending.subarray(0, total)
        pending = pending.subarray(total)
        if (!started) {
          // an SSL request (code 80877103) is followed by the real startup message
          started = !(length === 8 && message.readInt32BE(4) === 80877103)
          upstream.write(message)
          continue
        }
        const type = String.fromCharCode(message[0])
        // Parse names its statement, then its text; Bind names its portal, then its statement
        const second = (offset: number) => textAt(message, offset + textAt(message, offset).length + 1)
        if (type === 'P') prepared.set(textAt(message, 5), second(5))
        const sql = type === 'Q' ? textAt(message, 5) : type === 'B' ? prepared.get(second(5)) ?? '' : ''
        const armed = this.armed
        if (armed !== undefined && armed.pattern.test(sql)) marked = true
        const acts = armed?.at === 'sync' ? type === 'S' : type === 'Q' && /^\s*COMMIT/i.test(sql)
        if (armed !== undefined && marked && acts) {
          this.armed = undefined
          marked = false
          this.fired++
          if (armed.action === 'drop-before') {
            end()
            return
          }
          if (armed.action === 'drop-after') {
            // the COMMIT reaches the server before the end of the connection does
            upstream.end(message)
            client.destroy()
            return
          }
          held = true
          upstream.write(message)
          armed.onHeld?.()
          continue
        }
        if (!held) upstream.write(message)
      }
    })
  }
}

/** The zero-terminated text at `offset`. */
function textAt (message: Buffer, offset: number): string {
  const end = message.indexOf(0, offset)
  return message.toString('utf8', offset, end === -1 ? message.length : end)
}
