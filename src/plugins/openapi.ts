import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { DOCUMENT_NAMES, type DescribeScope, type DocsInstance } from './openapi-documents.js'

export type { DescribeScope } from './openapi-documents.js'

/**
 * /openapi/{4.0,3.0,1,control}.json and Swagger UI at /docs. The documents come from a second
 * Fastify instance with the same routes and @fastify/swagger (openapi-docs.ts), built on the
 * first request for a document or the UI: the generator, Swagger UI and their dependencies
 * stay out of the sandbox's start-up.
 */

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
  app: FastifyInstance, version: string, register: (app: FastifyInstance, describe: DescribeScope) => Promise<void>
): void {
  let instance: Promise<DocsInstance> | undefined
  const docsInstance = () =>
    (instance ??= import('./openapi-docs.js')
      .then((m) => m.buildDocsInstance(version, register))
      .catch((e: unknown) => {
        instance = undefined // a failed build is tried again by the next request
        throw e
      }))
  app.addHook('onClose', async () => {
    if (instance !== undefined) await (await instance.catch(() => undefined))?.app.close()
  })

  for (const name of DOCUMENT_NAMES) {
    app.get(`/openapi/${name}.json`, { schema: { hide: true } }, async (_request, reply) => {
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
