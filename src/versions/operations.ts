import { Type, type TSchema } from '@sinclair/typebox'
import { AgencyUserSchema, type AgencyEntry, type Office } from '../schemas/agency.js'
import type { Scope } from '../schemas/common.js'
import {
  AgencyParams, BatchBody, ChangedClientsQuery, ClientIdList, ClientParams, IncludeQuery, SearchQuery, VersionQuery
} from '../schemas/requests.js'
import { ClientCreateRequestSchema, ReceiptsBodySchema } from '../schemas/writes.js'
import { agencyListSchema, mapAgencyList } from './agencies.js'
import { clientShapes, type ClientShape } from './clients.js'
import { mapOfficeList, officeListSchema } from './offices.js'
import type { ApiVersion } from './index.js'
import { attachmentMappings, logNoteMappings, type AttachmentMapping, type LogNoteMapping } from './writes.js'

/**
 * The partner API as data: every operation, the versions that have it, and for each version its
 * request and response schemas and its mapping to and from the 4.0 domain. One loop
 * (routes/partner-api/index.ts) registers each operation once per version listed here, with the
 * operation's handler; an operation absent from a version answers 404 there.
 */

/** How a version's requests and answers differ, per operation (undefined: the 4.0 shape as is). */
export interface OperationMappings {
  agencies: (entries: AgencyEntry[]) => unknown
  offices: (offices: Office[]) => unknown
  users: undefined
  changedClients: undefined
  getClient: ClientShape
  batchClients: ClientShape
  searchClients: ClientShape
  logNote: LogNoteMapping
  attachment: AttachmentMapping
  receipts: undefined
  createClient: undefined
}

export type OperationId = keyof OperationMappings

/** One operation in one version. */
export interface VersionBinding<Mapping> {
  /** When the version's URL differs from the operation's (the version 1 log note). */
  url?: string
  /** When the version's summary differs from the operation's. */
  summary?: string
  querystring?: TSchema
  headers?: TSchema
  body?: TSchema
  response: Record<number, TSchema>
  /** Reshapes the raw body before binding and validation (3.0/4.0 batch reads: a bare array of numbers). */
  bindBody?: (body: unknown) => unknown
  mapping: Mapping
}

export interface Operation<Mapping> {
  method: 'GET' | 'POST'
  url: string
  summary: string
  /** Scope the agency must have granted; absent: the subscription alone suffices. */
  scope?: Scope
  /** The operation changes the agency's data (a POST may only read: a batch read); hosted mode gives it the world's write turn. */
  writes?: true
  params?: TSchema
  versions: Partial<Record<ApiVersion, VersionBinding<Mapping>>>
}

const AGENCY = '/vendor/agency/:agencyId'
const CLIENT = `${AGENCY}/client/:clientId`

const OutcomeSchema = Type.String({ description: 'Created (200) or Saved; it will be created when the agency next connects (202)' })
const OUTCOME = { 200: OutcomeSchema, 202: OutcomeSchema }
const ReceiptAnswers = Type.Array(Type.Object(
  { refId: Type.Union([Type.String(), Type.Null()]), code: Type.Integer(), message: Type.Union([Type.String(), Type.Null()]) },
  { title: 'ReceiptResult', description: 'the outcome of one receipt: code 200 recorded, 400 invalid, 409 refId used for another receipt' }
))

/** The same binding in every version. */
const inEveryVersion = <M>(binding: VersionBinding<M>) => ({ '4.0': binding, '3.0': binding, 1: binding })
/** The same binding in 4.0 and 3.0. */
const in40And30 = <M>(binding: VersionBinding<M>) => ({ '4.0': binding, '3.0': binding })

/** Client reads answer the version's client shape; 3.0 and 4.0 take the include parameter. */
function clientRead (version: ApiVersion, one: boolean, extra: Partial<VersionBinding<ClientShape>> = {}): VersionBinding<ClientShape> {
  const shape = clientShapes[version]
  return {
    querystring: shape.include === 'none' ? VersionQuery : IncludeQuery,
    response: { 200: one ? shape.schema : Type.Array(shape.schema) },
    mapping: shape,
    ...extra
  }
}

/** 3.0/4.0 batch bodies: one caller posts a bare array of numbers; it binds as {clientNumbers}. */
const bareArrayAsClientNumbers = (body: unknown) => (Array.isArray(body) ? { clientNumbers: body } : body)

const logNote = (version: ApiVersion): VersionBinding<LogNoteMapping> => {
  const mapping = logNoteMappings[version]
  return { querystring: VersionQuery, body: mapping.schema, response: OUTCOME, mapping }
}

const attachment = (version: ApiVersion): VersionBinding<AttachmentMapping> => {
  const mapping = attachmentMappings[version]
  return { querystring: VersionQuery, headers: mapping.schema, response: OUTCOME, mapping }
}

/** In registration order (the order of each version's routes and OpenAPI paths). */
export const OPERATIONS: { readonly [K in OperationId]: Operation<OperationMappings[K]> } = {
  agencies: {
    method: 'GET',
    url: '/vendor/agencies',
    summary: 'Agencies subscribed to the integration',
    versions: {
      '4.0': { querystring: VersionQuery, response: { 200: agencyListSchema['4.0'] }, mapping: mapAgencyList['4.0'] },
      '3.0': { querystring: VersionQuery, response: { 200: agencyListSchema['3.0'] }, mapping: mapAgencyList['3.0'] },
      1: { querystring: VersionQuery, response: { 200: agencyListSchema['1'] }, mapping: mapAgencyList['1'] }
    }
  },
  offices: {
    method: 'GET',
    url: `${AGENCY}/offices`,
    summary: "The agency's offices",
    params: AgencyParams,
    versions: {
      '4.0': { querystring: VersionQuery, response: { 200: officeListSchema['4.0'] }, mapping: mapOfficeList['4.0'] },
      '3.0': { querystring: VersionQuery, response: { 200: officeListSchema['3.0'] }, mapping: mapOfficeList['3.0'] },
      1: { querystring: VersionQuery, response: { 200: officeListSchema['1'] }, mapping: mapOfficeList['1'] }
    }
  },
  users: {
    method: 'GET',
    url: `${AGENCY}/users`,
    summary: "The agency's active users",
    scope: 'user-list',
    params: AgencyParams,
    versions: { '4.0': { querystring: VersionQuery, response: { 200: Type.Array(AgencyUserSchema) }, mapping: undefined } }
  },
  changedClients: {
    method: 'GET',
    url: `${AGENCY}/clients`,
    summary: 'Ids of the clients changed since asOf (all when absent), ascending',
    scope: 'client-read',
    params: AgencyParams,
    versions: inEveryVersion({ querystring: ChangedClientsQuery, response: { 200: ClientIdList }, mapping: undefined })
  },
  getClient: {
    method: 'GET',
    url: CLIENT,
    summary: 'One client',
    scope: 'client-read',
    params: ClientParams,
    versions: { '4.0': clientRead('4.0', true), '3.0': clientRead('3.0', true), 1: clientRead('1', true) }
  },
  batchClients: {
    method: 'POST',
    url: `${AGENCY}/clients`,
    summary: 'Batch read of up to 200 clients',
    scope: 'client-read',
    params: AgencyParams,
    versions: {
      '4.0': clientRead('4.0', false, { body: BatchBody, bindBody: bareArrayAsClientNumbers }),
      '3.0': clientRead('3.0', false, { body: BatchBody, bindBody: bareArrayAsClientNumbers }),
      1: clientRead('1', false, { body: Type.Array(Type.Integer({ minimum: 1, maximum: 2147483647 }), { description: 'up to 200 client ids' }) })
    }
  },
  searchClients: {
    method: 'GET',
    url: `${AGENCY}/clients/search`,
    summary: 'Clients with a policy of exactly this number',
    scope: 'client-read',
    params: AgencyParams,
    versions: {
      '4.0': clientRead('4.0', false, { querystring: SearchQuery }),
      '3.0': clientRead('3.0', false, { querystring: SearchQuery })
    }
  },
  logNote: {
    method: 'POST',
    writes: true,
    url: `${CLIENT}/log`,
    summary: 'Write a log note to the client (200 created, 202 saved until the agency connects)',
    scope: 'create-log-attachment-task',
    params: ClientParams,
    versions: {
      '4.0': logNote('4.0'),
      '3.0': logNote('3.0'),
      1: {
        ...logNote('1'),
        url: CLIENT,
        summary: 'Version 1: write a log note to the client (200 created, 202 saved until the agency connects)',
        querystring: undefined
      }
    }
  },
  receipts: {
    method: 'POST',
    writes: true,
    url: `${CLIENT}/receipts`,
    summary: 'Record payments received from the client; one {refId, code, message} per receipt, in order',
    scope: 'create-log-attachment-task',
    params: ClientParams,
    versions: in40And30({ querystring: VersionQuery, body: ReceiptsBodySchema, response: { 200: ReceiptAnswers, 202: ReceiptAnswers }, mapping: undefined })
  },
  attachment: {
    method: 'POST',
    writes: true,
    url: `${CLIENT}/attachment`,
    summary: 'Attach a file (gzip body, metadata in headers; 200 created, 202 saved until the agency connects)',
    scope: 'create-log-attachment-task',
    params: ClientParams,
    versions: {
      '4.0': attachment('4.0'),
      '3.0': attachment('3.0'),
      1: { ...attachment('1'), summary: 'Version 1: attach a file (gzip body, metadata and suspense in headers)', querystring: undefined }
    }
  },
  createClient: {
    method: 'POST',
    writes: true,
    url: `${AGENCY}/client`,
    summary: 'Create a client (25 requests per second per integration)',
    scope: 'client-create',
    params: AgencyParams,
    versions: {
      '4.0': { querystring: VersionQuery, body: ClientCreateRequestSchema, response: { 200: Type.Object({ clientNumber: Type.Integer() }, { title: 'ClientCreateResponse' }) }, mapping: undefined }
    }
  }
}

/** The operations of a version, in registration order. */
export function operationsOf (version: ApiVersion): OperationId[] {
  return (Object.keys(OPERATIONS) as OperationId[]).filter((id) => OPERATIONS[id].versions[version] !== undefined)
}
