import type { FastifyInstance } from 'fastify'
import type { ApiVersion } from '../versions/index.js'

/** The OpenAPI documents the sandbox serves, shared by the serving plugin and the generator. */
export type DocumentName = ApiVersion | 'control'
export type Documents = Partial<Record<DocumentName, () => unknown>>
export const DOCUMENT_NAMES: readonly DocumentName[] = ['4.0', '3.0', '1', 'control']

/** Adds the OpenAPI generator to a scope, naming its document. */
export type DescribeScope = (scope: FastifyInstance, name: DocumentName) => Promise<void>

export interface DocsInstance {
  app: FastifyInstance
  docs: Documents
}
