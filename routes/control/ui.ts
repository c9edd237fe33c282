import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { notFound } from '../../src/errors.js'
import { CLIENT_GROUPS } from '../../src/schemas/client.js'
import { SCOPES, type Scope } from '../../src/schemas/common.js'
import { WRITE_KINDS } from '../../src/schemas/control.js'
import { API_VERSIONS, versionOf } from '../../src/versions/index.js'
import type { ControlOptions } from './options.js'

/** Folder of the console's static files. */
export const CONSOLE_DIR = join(ROOT, 'public', 'console')

/**
 * Served file types: anything else (and any name with a path in it) is not found. No .json: the
 * folder's tsconfig.json (type checking of the modules) is not part of the console.
 */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8'
}

/** A plain file name in the console folder: no separators, no `..`, no leading dot. */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$/

async function sendFile (reply: FastifyReply, name: string): Promise<FastifyReply> {
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

/** Short names of the scopes for narrow table headers (typed by scope: a new scope needs one). */
const SCOPE_LABELS: Readonly<Record<Scope, string>> = {
  'client-read': 'read',
  'create-log-attachment-task': 'log/attach',
  'client-create': 'create',
  'user-list': 'users',
  'invoice-read': 'invoices'
}

/** Plural names of the write kinds, as lists show them. */
const WRITE_KIND_LABELS: Readonly<Record<(typeof WRITE_KINDS)[number], string>> = {
  log: 'log notes',
  attachment: 'attachments',
  receipt: 'receipts',
  client: 'created clients'
}

/** The scope that lets an integration read an agency's clients. */
const CLIENT_READ_SCOPE: Scope = 'client-read'

const Names = (description: string) => Type.Array(Type.String(), { description })
const Labels = (description: string) => Type.Record(Type.String(), Type.String(), { description })

export const SandboxMetaSchema = Type.Object({
  versions: Names('partner API versions, newest first (the values of the version query parameter, but the last)'),
  unversioned: Type.String({ description: 'the version that answers a request without a version parameter' }),
  scopes: Names('scopes an agency can grant an integration'),
  scopeLabels: Labels('a short name of each scope'),
  clientReadScope: Type.String({ description: 'the scope that lets an integration read clients' }),
  clientGroups: Names('data groups of a client, in the order the service writes them (the values of include)'),
  writeKinds: Names('kinds of partner writes (the kind filter of /_sandbox/agencies/{agencyId}/writes)'),
  writeKindLabels: Labels('a plural name of each write kind')
}, { additionalProperties: false, title: 'SandboxMeta' })

/** The server's own constants, as the console and other tools need them (built once). */
export const SANDBOX_META: Static<typeof SandboxMetaSchema> = {
  versions: [...API_VERSIONS],
  unversioned: versionOf('/vendor/agencies'),
  scopes: [...SCOPES],
  scopeLabels: { ...SCOPE_LABELS },
  clientReadScope: CLIENT_READ_SCOPE,
  clientGroups: [...CLIENT_GROUPS],
  writeKinds: [...WRITE_KINDS],
  writeKindLabels: { ...WRITE_KIND_LABELS }
}

/** The web console at /_sandbox/ui (static files from public/console) and the constants it shows. */
export default async function consoleUi (fastify: FastifyInstance, _options: ControlOptions) {
  fastify.withTypeProvider<TypeBoxTypeProvider>().get('/meta', {
    schema: {
      summary: 'Constants of the sandbox: API versions, scopes, client groups and write kinds',
      response: { 200: SandboxMetaSchema }
    }
  }, () => SANDBOX_META)

  const schema = { summary: 'The web console (HTML page)', hide: true }
  fastify.get('/ui', { schema }, (_request, reply) => sendFile(reply, 'index.html'))
  fastify.get('/ui/', { schema }, (_request, reply) => sendFile(reply, 'index.html'))
  fastify.get<{ Params: { file: string } }>('/ui/:file', {
    schema: { summary: 'A static file of the web console', hide: true }
  }, (request, reply) => sendFile(reply, request.params.file))
}
