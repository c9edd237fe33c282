import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ROOT } from '../config.js'
import { DOCUMENT_NAMES, type DescribeScope, type DocsInstance, type DocumentName } from './openapi-documents.js'

export type { DescribeScope } from './openapi-documents.js'

/**
 * /openapi/{4.0,3.0,1,control}.json and Swagger UI at /docs. The documents come from a second
 * Fastify instance with the same routes and @fastify/swagger (openapi-docs.ts). `npm run build`
 * writes them to dist/openapi (scripts/prebuild-documents.ts), and they are served from there
 * when they were made from the very routes, schemas and version of this app: registering every
 * route again kept the event loop busy for 80–130 ms on the first request for the docs. Without
 * them (or when stale) the instance is built on the first request for a document or the UI, as
 * Swagger UI's is in any case: the generator, Swagger UI and their dependencies stay out of the
 * sandbox's start-up. The key covers the routes and their schemas, not the code shaping the
 * documents in openapi-docs.ts, which the build rewrites with everything else.
 */

/** Where the build writes the documents: part of the built package, like dist/src. */
export const PREBUILT_DOCUMENTS_DIR = join(ROOT, 'dist', 'openapi')

/** The file naming the key the documents in PREBUILT_DOCUMENTS_DIR were made for. */
export const PREBUILT_INDEX = 'index.json'

const documentsKeys = new WeakMap<FastifyInstance, () => string>()

/** What identifies the documents of an app serving them: its version, routes and schemas (for the build). */
export function documentsKeyOf (app: FastifyInstance): string {
  const key = documentsKeys.get(app)
  if (key === undefined) throw new Error('this app does not serve OpenAPI documents')
  return key()
}

/**
 * The paths Swagger UI (@fastify/swagger-ui) answers under /docs: its page, its two documents and
 * the files of its flat static folder. Anything else (dot segments, percent escapes, backslashes,
 * sub-folders) is the sandbox's not-found without reaching the docs instance, whose URL parser
 * would resolve `/docs/%2e%2e/…` to a path outside /docs.
 */
const DOCS_PATH = /^\/docs(?:\/|\/json|\/yaml|\/static\/(?!.*\.\.)[A-Za-z0-9_-][A-Za-z0-9._-]{0,127})?$/

/** The request's path when Swagger UI serves it, else undefined. The query string is not forwarded. */
export function docsPath (url: string): string | undefined {
  const query = url.indexOf('?')
  const path = query === -1 ? url : url.slice(0, query)
  return DOCS_PATH.test(path) ? path : undefined
}

/** Headers of the docs instance's answers not copied onto the sandbox's own. */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'])

/**
 * Serves the documents. `register` registers the sandbox's routes on another instance, calling
 * `describe` in each scope that has a document.
 */
export function serveDocuments (
  app: FastifyInstance, version: string, register: (app: FastifyInstance, describe: DescribeScope) => Promise<void>,
  prebuiltDir = PREBUILT_DOCUMENTS_DIR
): void {
  // Every route registered after this (call it before the routes), with what shapes its document.
  const routes: unknown[] = []
  app.addHook('onRoute', (route) => {
    if ((route.schema as { hide?: boolean } | undefined)?.hide !== true) routes.push([route.method, route.url, route.constraints ?? null, route.schema ?? null])
  })
  let key: string | undefined
  const documentsKey = () => (key ??= createHash('sha256').update(JSON.stringify([version, routes])).digest('hex'))
  documentsKeys.set(app, documentsKey)

  let prebuilt: Promise<Partial<Record<DocumentName, string>> | undefined> | undefined
  /** The documents the build wrote, when they were made for this app's key. */
  const prebuiltDocuments = () => (prebuilt ??= (async () => {
    try {
      const index = JSON.parse(await readFile(join(prebuiltDir, PREBUILT_INDEX), 'utf8')) as { key?: unknown }
      if (index.key !== documentsKey()) return undefined
      const docs: Partial<Record<DocumentName, string>> = {}
      for (const name of DOCUMENT_NAMES) docs[name] = await readFile(join(prebuiltDir, `${name}.json`), 'utf8')
      return docs
    } catch {
      return undefined // none written (a build without that step, tests over the sources): made here
    }
  })())

  let instance: Promise<DocsInstance> | undefined
  const docsInstance = () =>
    (instance ??= Promise.all([import('./openapi-docs.js'), prebuiltDocuments()])
      .then(([m, built]) => (built === undefined ? m.buildDocsInstance(version, register) : m.buildUiInstance()))
      .catch((e: unknown) => {
        instance = undefined // a failed build is tried again by the next request
        throw e
      }))
  app.addHook('onClose', async () => {
    if (instance !== undefined) await (await instance.catch(() => undefined))?.app.close()
  })

  for (const name of DOCUMENT_NAMES) {
    app.get(`/openapi/${name}.json`, { schema: { hide: true } }, async (_request, reply) => {
      const built = (await prebuiltDocuments())?.[name]
      if (built !== undefined) return reply.type('application/json; charset=utf-8').send(built)
      const doc = (await docsInstance()).docs[name]
      if (doc === undefined) return reply.code(404).send()
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(doc()))
    })
  }

  /** Swagger UI's pages and assets, answered by the docs instance. */
  const ui = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = docsPath(request.url)
    if (path === undefined) return reply.callNotFound()
    const { app: docs } = await docsInstance()
    const headers: Record<string, string> = {}
    for (const name of ['accept', 'accept-encoding', 'if-none-match', 'if-modified-since', 'range']) {
      const value = request.headers[name]
      if (typeof value === 'string') headers[name] = value
    }
    const res = await docs.inject({ method: request.method as 'GET' | 'HEAD', url: path, headers })
    // the sandbox's own not-found answer (a problem body), as for any other unknown path
    if (res.statusCode === 404) return reply.callNotFound()
    reply.code(res.statusCode)
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name.toLowerCase())) reply.header(name, value)
    }
    return reply.send(res.rawPayload.length > 0 ? res.rawPayload : undefined)
  }
  app.get('/docs', { schema: { hide: true } }, ui)
  app.get('/docs/*', { schema: { hide: true } }, ui)
}
