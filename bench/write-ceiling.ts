import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { basicAuthCheck } from './basic-check.js'
import type { WriteCeilingFile } from './protocol.js'

/**
 * The ceiling of the log-note writes: a bare Fastify server over better-sqlite3 doing what any
 * durable log-note write of this API must do and nothing more. Route; parse the JSON body; check
 * Basic credentials; check the client exists; validate Channel (1 to 56), RefId (a UUID) and TS
 * (a date and time); insert the note in one transaction, WAL with synchronous=NORMAL as the
 * sandbox; RefId unique per agency: the same body answers again, another body 409; answer
 * `Created`. The gap between the sandbox and it is whatever the sandbox does beyond that.
 *
 *   node dist/bench/write-ceiling.js WRITE-CEILING.json DATABASE [--port N] [--host H]
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/

interface NoteBody { refId?: unknown; ts?: unknown; channel?: unknown; note?: unknown }

function openDatabase (file: string, spec: WriteCeilingFile): Database.Database {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec(`
    CREATE TABLE clients (agency_id INTEGER NOT NULL, client_number INTEGER NOT NULL, PRIMARY KEY (agency_id, client_number)) WITHOUT ROWID;
    CREATE TABLE notes (seq INTEGER PRIMARY KEY, agency_id INTEGER NOT NULL, client_number INTEGER NOT NULL, ref_id TEXT NOT NULL,
      fingerprint TEXT NOT NULL, ts TEXT NOT NULL, channel INTEGER NOT NULL, note TEXT, received_at TEXT NOT NULL,
      UNIQUE (agency_id, ref_id COLLATE NOCASE));
  `)
  const insert = db.prepare('INSERT INTO clients (agency_id, client_number) VALUES (?, ?)')
  db.transaction(() => { for (const n of spec.clientNumbers) insert.run(spec.agencyId, n) })()
  return db
}

async function start (spec: WriteCeilingFile, file: string, port: number, host: string): Promise<string> {
  const db = openDatabase(file, spec)
  const clientExists = db.prepare('SELECT 1 FROM clients WHERE agency_id = ? AND client_number = ?').pluck()
  const existing = db.prepare('SELECT fingerprint FROM notes WHERE agency_id = ? AND ref_id = ? COLLATE NOCASE').pluck()
  const insert = db.prepare(`INSERT INTO notes (agency_id, client_number, ref_id, fingerprint, ts, channel, note, received_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
  const write = db.transaction((agencyId: number, clientNumber: number, body: Required<NoteBody>, fingerprint: string): number => {
    const before = existing.get(agencyId, body.refId) as string | undefined
    if (before !== undefined) return before === fingerprint ? 200 : 409
    insert.run(agencyId, clientNumber, body.refId, fingerprint, body.ts, body.channel, typeof body.note === 'string' ? body.note : null, new Date().toISOString())
    return 200
  })
  const authorized = basicAuthCheck(spec.credentials.clientId, spec.credentials.clientSecret)
  const app = Fastify({ logger: false })
  app.get('/_ceiling/health', async () => ({ status: 'ok' }))
  app.post<{ Params: { agencyId: string; clientId: string }; Body: NoteBody }>(spec.route, (request, reply) => {
    if (!authorized(request.headers.authorization)) {
      return reply.code(401).header('www-authenticate', 'Basic realm="agency-sandbox"').type('text/plain; charset=utf-8').send('Unauthorized')
    }
    const agencyId = Number(request.params.agencyId)
    const clientNumber = Number(request.params.clientId)
    const problem = (status: number, detail: string) => reply.code(status).type('text/plain; charset=utf-8').send(detail)
    if (clientExists.get(agencyId, clientNumber) === undefined) return problem(404, 'Client not found')
    const body = request.body ?? {}
    if (typeof body.channel !== 'number' || !Number.isInteger(body.channel) || body.channel < 1 || body.channel > 56) return problem(400, 'Invalid Channel')
    if (typeof body.refId !== 'string' || !UUID.test(body.refId)) return problem(400, 'RefId: must be a UUID')
    if (typeof body.ts !== 'string' || !TIMESTAMP.test(body.ts) || Number.isNaN(Date.parse(body.ts))) return problem(400, 'TS: must be a date and time')
    const fingerprint = createHash('sha256').update(`${clientNumber}\n${body.ts}\n${body.channel}\n${String(body.note)}`).digest('hex')
    const status = write(agencyId, clientNumber, body as Required<NoteBody>, fingerprint)
    if (status === 409) return problem(409, `RefId ${body.refId} was already used for a different log note`)
    return reply.code(200).type('text/plain; charset=utf-8').send('Created')
  })
  return app.listen({ port, host })
}

const { values, positionals } = parseArgs({ options: { port: { type: 'string' }, host: { type: 'string' } }, allowPositionals: true })
if (positionals.length !== 2) {
  console.error('usage: node dist/bench/write-ceiling.js WRITE-CEILING.json DATABASE [--port N] [--host H]')
  process.exit(2)
}
const spec = JSON.parse(readFileSync(positionals[0], 'utf8')) as WriteCeilingFile
const url = await start(spec, positionals[1], Number(values.port ?? process.env.PORT ?? 0), values.host ?? process.env.HOST ?? '127.0.0.1')
console.log(JSON.stringify({ listening: url }))
const stop = () => process.exit(0)
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
