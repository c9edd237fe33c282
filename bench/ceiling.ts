import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { basicAuthCheck } from './basic-check.js'
import type { CeilingFile, StoredResponse } from './protocol.js'

/**
 * The ceiling of the benchmark: a bare Fastify server answering, from memory, the very bytes the
 * sandbox answered for the same method and URL (and body, when one URL had several answers), on
 * the sandbox's route patterns and behind the same Basic-auth check. Whatever the sandbox does
 * beyond routing, auth and sending bytes shows as the gap between the two.
 *
 *   node dist/bench/ceiling.js RESPONSES.json [--port N] [--host H]   (PORT and HOST also work)
 */

interface Answer {
  status: number
  contentType: string
  payload: Buffer
}

/** Answers by "METHOD url": one answer, or one per request body. */
type Table = Map<string, Answer | Map<string, Answer>>

const keyOf = (method: string, url: string) => `${method} ${url}`

function buildTable (responses: StoredResponse[]): Table {
  const groups = new Map<string, StoredResponse[]>()
  for (const r of responses) {
    const key = keyOf(r.method, r.url)
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  const table: Table = new Map()
  const answerOf = (r: StoredResponse): Answer => ({ status: r.status, contentType: r.contentType, payload: Buffer.from(r.payload, 'utf8') })
  for (const [key, group] of groups) {
    const same = group.every((r) => r.status === group[0].status && r.payload === group[0].payload)
    table.set(key, same ? answerOf(group[0]) : new Map(group.map((r) => [r.body ?? '', answerOf(r)])))
  }
  return table
}

async function startCeiling (file: CeilingFile, port: number, host: string): Promise<string> {
  const table = buildTable(file.responses)
  const authorized = basicAuthCheck(file.credentials.clientId, file.credentials.clientSecret)
  const app = Fastify({ logger: false })

  // JSON bodies are parsed as Fastify would, and kept as text to find the answer of that body.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      JSON.parse(body as string)
      done(null, body)
    } catch (e) {
      done(e as Error, undefined)
    }
  })

  app.get('/_ceiling/health', async () => ({ status: 'ok' }))

  await app.register(async function vendor (scope) {
    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!authorized(request.headers.authorization)) {
        return reply.code(401).header('www-authenticate', 'Basic realm="agency-sandbox"').type('text/plain; charset=utf-8').send('Unauthorized')
      }
    })
    const handler = (request: FastifyRequest, reply: FastifyReply) => {
      const entry = table.get(keyOf(request.method, request.url))
      const answer = entry instanceof Map ? entry.get(typeof request.body === 'string' ? request.body : '') : entry
      if (answer === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('no stored answer')
      return reply.code(answer.status).type(answer.contentType).send(answer.payload)
    }
    const seen = new Set<string>()
    for (const route of file.routes) {
      const key = keyOf(route.method, route.url)
      if (seen.has(key)) continue
      seen.add(key)
      scope.route({ method: route.method as 'GET' | 'POST', url: route.url, handler })
    }
  })

  return app.listen({ port, host })
}

async function main (): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { port: { type: 'string' }, host: { type: 'string' } },
    allowPositionals: true
  })
  if (positionals.length !== 1) {
    console.error('usage: node dist/bench/ceiling.js RESPONSES.json [--port N] [--host H]')
    process.exit(2)
  }
  const file = JSON.parse(readFileSync(positionals[0], 'utf8')) as CeilingFile
  const port = Number(values.port ?? process.env.PORT ?? 0)
  const host = values.host ?? process.env.HOST ?? '127.0.0.1'
  const url = await startCeiling(file, port, host)
  console.log(JSON.stringify({ listening: url }))
  const stop = () => process.exit(0)
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}

await main()
