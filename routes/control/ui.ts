import type { FastifyInstance, FastifyReply } from 'fastify'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { notFound } from '../../src/errors.js'
import type { ControlOptions } from './options.js'

/** Folder of the console's static files. */
export const CONSOLE_DIR = join(ROOT, 'public', 'console')

/** Served file types: anything else (and any name with a path in it) is not found. */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8'
}

/** A plain file name in the console folder: no separators, no `..`, no leading dot. */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$/

async function sendFile(reply: FastifyReply, name: string): Promise<FastifyReply> {
  const dot = name.lastIndexOf('.')
  const type = dot === -1 ? undefined : TYPES[name.slice(dot).toLowerCase()]
  if (!SAFE_NAME.test(name) || name.includes('..') || type === undefined) throw notFound(`No console file '${name}'`)
  let content: Buffer
  try {
    // Read at request time: files edited on disk are served without a restart.
    content = await readFile(join(CONSOLE_DIR, name))
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') throw notFound(`No console file '${name}'`)
    throw e
  }
  return reply
    .type(type)
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .send(content)
}

/** The web console at /_sandbox/ui (static files from public/console). */
export default async function consoleUi(fastify: FastifyInstance, _options: ControlOptions) {
  const schema = { summary: 'The web console (HTML page)', hide: true }
  fastify.get('/ui', { schema }, (_request, reply) => sendFile(reply, 'index.html'))
  fastify.get('/ui/', { schema }, (_request, reply) => sendFile(reply, 'index.html'))
  fastify.get<{ Params: { file: string } }>('/ui/:file', {
    schema: { summary: 'A static file of the web console', hide: true }
  }, (request, reply) => sendFile(reply, request.params.file))
}
