import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { fixture } from './world.js'

/**
 * A fake vendor API on 127.0.0.1 for the importer to read from: one small agency of the demo
 * world (1003: 10 clients, 3 offices) answered as the live service would, except for the
 * requests a hostile scenario answers itself (a gzip bomb, an endless body, JSON nested 10,000
 * deep, escape sequences, Retry-After: 300, an object where an array is due).
 */

export const AGENCY = 1003
const agency = fixture.agencies.find((a) => a.agencyId === AGENCY)! as unknown as {
  offices: Array<Record<string, unknown>>
  users: Array<Record<string, unknown> & { active?: boolean }>
  clients: Array<Record<string, unknown> & { clientNumber: number; deleted?: boolean }>
}

type Rec = Record<string, unknown>
const clone = <T>(v: T): T => structuredClone(v)

/** What a well-behaved instance answers, by request. */
export const world = {
  agencies: (): unknown => [{ agencyId: AGENCY, scopes: ['client-read', 'create-log-attachment-task', 'user-list', 'invoice-read'] }],
  offices: (): Rec[] => clone(agency.offices),
  users: (): Rec[] => agency.users.filter((u) => u.active !== false).map(({ active: _, ...u }) => clone(u)),
  liveIds: (): number[] => agency.clients.filter((c) => c.deleted !== true).map((c) => c.clientNumber),
  client: (n: number): Rec | undefined => {
    const c = agency.clients.find((x) => x.clientNumber === n && x.deleted !== true)
    return c === undefined ? undefined : clone(c)
  }
}

/** A request as the scenario sees it. */
export interface Asked {
  method: string
  path: string
  query: URLSearchParams
  /** The batch read's client numbers. */
  clientNumbers?: number[]
}

/** `what` of the request: the listing, a batch read… */
export function kindOf (a: Asked): 'agencies' | 'offices' | 'users' | 'ids' | 'deleted' | 'client' | 'batch' | 'other' {
  if (a.path === '/vendor/agencies') return 'agencies'
  if (/^\/vendor\/agency\/\d+\/offices$/.test(a.path)) return 'offices'
  if (/^\/vendor\/agency\/\d+\/users$/.test(a.path)) return 'users'
  if (/^\/vendor\/agency\/\d+\/clients$/.test(a.path)) {
    if (a.method === 'POST') return 'batch'
    return a.query.get('deleted') === 'true' ? 'deleted' : 'ids'
  }
  if (/^\/vendor\/agency\/\d+\/client\/\d+$/.test(a.path)) return 'client'
  return 'other'
}

/** The world's answer to a request (404 for anything else). */
export function worldAnswer (a: Asked): { status: number; body: unknown } {
  switch (kindOf(a)) {
    case 'agencies': return { status: 200, body: world.agencies() }
    case 'offices': return { status: 200, body: world.offices() }
    case 'users': return { status: 200, body: world.users() }
    case 'ids': return { status: 200, body: world.liveIds() }
    case 'deleted': return { status: 200, body: [] }
    case 'client': {
      const c = world.client(Number(a.path.split('/').pop()))
      return c === undefined ? { status: 404, body: { title: 'Not Found' } } : { status: 200, body: c }
    }
    case 'batch': return { status: 200, body: (a.clientNumbers ?? []).flatMap((n) => world.client(n) ?? []) }
    default: return { status: 404, body: { title: 'Not Found' } }
  }
}

/** A scenario's own answer to a request, or undefined to let the world answer. */
export type Hostile = (a: Asked, res: ServerResponse) => boolean

const MiB = 1024 * 1024

let block: Buffer | undefined
/** A gzip member of `[`, then members of `0,0,0,…` up to `bytes` once inflated (never closed): one 64 MiB member compressed once, then repeated. */
export function gzipBomb (bytes: number): Buffer {
  block ??= gzipSync(Buffer.from('0,'.repeat(32 * MiB)), { level: 9 })
  return Buffer.concat([gzipSync('['), ...Array.from({ length: Math.ceil(bytes / (64 * MiB)) }, () => block!)])
}

export function sendJson (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(bytes.length), ...headers })
  res.end(bytes)
}

/** `[0,0,0,…` for as long as the reader reads, as fast as it reads. */
export function endless (res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' })
  const chunk = Buffer.from('0,'.repeat(32 * 1024))
  res.write('[')
  const pump = () => {
    while (!res.destroyed && res.write(chunk)) { /* until the socket pushes back */ }
    if (!res.destroyed) res.once('drain', pump)
  }
  pump()
}

/** `[0,0,` one byte every 100 ms, forever. */
export function trickle (res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.write('[')
  const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('0,')), 100)
  res.on('close', () => clearInterval(timer))
}

export class FakeUpstream {
  private constructor (private readonly server: Server, readonly origin: string) {}

  static async start (hostile: Hostile): Promise<FakeUpstream> {
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      const chunks: Buffer[] = []
      let size = 0
      req.on('data', (c: Buffer) => {
        size += c.length
        if (size <= MiB) chunks.push(c)
      })
      req.on('end', () => {
        const asked: Asked = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams }
        if (asked.method === 'POST') {
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { clientNumbers?: number[] }
            asked.clientNumbers = body.clientNumbers
          } catch { /* not a batch read */ }
        }
        if (hostile(asked, res)) return
        const { status, body } = worldAnswer(asked)
        sendJson(res, status, body)
      })
    })
    server.keepAliveTimeout = 5_000
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return new FakeUpstream(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  }

  async stop (): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
