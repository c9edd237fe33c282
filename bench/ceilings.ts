import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BenchData } from './data.js'
import { freePort, spawnServer, type ServerProcess } from './processes.js'
import { UUID_PLACEHOLDER, type CeilingFile, type StoredResponse, type WriteCeilingFile } from './protocol.js'
import type { Scenario } from './scenarios.js'

/**
 * The ceilings a scenario is measured against: for reads, a bare Fastify server answering the
 * sandbox's own answers from memory (ceiling.ts); for log-note writes, a bare Fastify server over
 * better-sqlite3 doing only what such a write must (write-ceiling.ts).
 */

const HERE = fileURLToPath(new URL('.', import.meta.url))
const CEILING_SCRIPT = join(HERE, 'ceiling.js')
const WRITE_CEILING_SCRIPT = join(HERE, 'write-ceiling.js')

export interface CeilingOptions {
  /** Where the ceiling's files go. */
  tempDir: string
  /** Node flags before the script (a CPU profile). */
  nodeFlags: string[]
}

export const authorizationOf = (d: BenchData) => 'Basic ' + Buffer.from(`${d.credentials.clientId}:${d.credentials.clientSecret}`).toString('base64')

/** Asks the sandbox each distinct request of the scenario once, for the ceiling to replay. */
export async function storeResponses (scenario: Scenario, origin: string, auth: string): Promise<StoredResponse[]> {
  const stored: StoredResponse[] = []
  const seen = new Set<string>()
  for (const v of scenario.variants) {
    const key = `${v.method} ${v.path} ${v.body ?? ''}`
    if (seen.has(key)) continue
    seen.add(key)
    const body = v.body === undefined ? undefined : v.body.split(UUID_PLACEHOLDER).join(randomUUID())
    const res = await fetch(origin + v.path, {
      method: v.method,
      headers: body === undefined ? { authorization: auth } : { authorization: auth, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body })
    })
    const payload = await res.text()
    if (res.status !== 200) throw new Error(`${scenario.id}: ${v.method} ${v.path} answered ${res.status}: ${payload.slice(0, 500)}`)
    stored.push({
      method: v.method,
      url: v.path,
      ...(v.body === undefined ? {} : { body: v.body }),
      status: res.status,
      contentType: res.headers.get('content-type') ?? 'application/json; charset=utf-8',
      payload
    })
  }
  return stored
}

/** A ceiling process answering `file`'s responses, once healthy. */
export async function spawnCeiling (opts: CeilingOptions, file: CeilingFile, name: string): Promise<ServerProcess> {
  const responsesFile = join(opts.tempDir, `ceiling-${name}.json`)
  writeFileSync(responsesFile, JSON.stringify(file))
  return spawnNode([...opts.nodeFlags, CEILING_SCRIPT, responsesFile])
}

/**
 * The scenario's ceiling, with the sandbox's answers to its requests taken now (so writes of
 * earlier scenarios count for both servers); the write ceiling starts on a new database.
 */
export async function startCeiling (
  opts: CeilingOptions, scenario: Scenario, sandbox: ServerProcess, data: BenchData
): Promise<{ ceiling: ServerProcess; stored: StoredResponse[] }> {
  const stored = await storeResponses(scenario, sandbox.origin, authorizationOf(data))
  if (scenario.ceiling === 'write') {
    const file: WriteCeilingFile = { credentials: data.credentials, agencyId: data.agencyId, clientNumbers: data.liveClientNumbers, route: scenario.route.url }
    const specFile = join(opts.tempDir, `write-ceiling-${scenario.id}.json`)
    writeFileSync(specFile, JSON.stringify(file))
    const database = join(opts.tempDir, `write-ceiling-${scenario.id}-${randomUUID()}.db`)
    return { ceiling: await spawnNode([...opts.nodeFlags, WRITE_CEILING_SCRIPT, specFile, database]), stored }
  }
  const file: CeilingFile = { credentials: data.credentials, routes: [scenario.route], responses: stored }
  return { ceiling: await spawnCeiling(opts, file, scenario.id), stored }
}

async function spawnNode (args: string[]): Promise<ServerProcess> {
  const port = await freePort()
  return spawnServer({ args: [...args, '--port', String(port)], env: {}, port, healthPath: '/_ceiling/health', pollMs: 5, timeoutMs: 30_000 })
}
