import rateLimit from '@fastify/rate-limit'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { gunzipSync } from 'node:zlib'
import type { CreateClientCommand } from '../../src/domain/create-client.js'
import {
  checkEffectiveDate, checkPeopleRules, decodeBase64Header, normalizeFileExt, pascalPath
} from '../../src/domain/write-rules.js'
import { OUTCOME_TEXT, type Outcome, type TaskCommand } from '../../src/domain/writes.js'
import {
  badRequest, payloadTooLarge, tooManyRequests, unsupportedMediaType, validationFailed, type FieldError
} from '../../src/errors.js'
import { fieldErrors } from '../../src/plugins/errors.js'
import { grantOf, type VendorRouteOptions } from '../../src/plugins/vendor.js'
import { SlidingWindowStore } from '../../src/plugins/sliding-window.js'
import { ClientParams, AgencyParams, VersionQuery } from '../../src/schemas/requests.js'
import {
  AGENT_ROLES, AttachmentHeadersSchema, ClientCreateRequestSchema, LogNoteBodySchema, ReceiptsBodySchema,
  V1AttachmentHeadersSchema, V1LogNoteBodySchema
} from '../../src/schemas/writes.js'
import { fromV1Attachment, fromV1LogNote } from '../../src/versions/writes.js'
import { parseTimestamp } from '../../src/time.js'
import type { ApiVersion } from '../../src/versions/index.js'

/** Largest decompressed attachment: 5 MiB. */
export const MAX_ATTACHMENT = 5 * 1024 * 1024
/** Largest compressed attachment body accepted on the wire. */
export const MAX_ATTACHMENT_BODY = 6 * 1024 * 1024
/** Create-client rate per integration. */
export const CREATE_CLIENT_RATE = { max: 25, timeWindow: 1000 }

const WRITE_VERSIONS: ApiVersion[] = ['4.0', '3.0']

const OutcomeSchema = Type.String({ description: 'Created (200) or Saved; it will be created when the agency next connects (202)' })

export function answerOutcome(reply: FastifyReply, outcome: Outcome): void {
  reply.code(outcome === 'created' ? 200 : 202).type('text/plain; charset=utf-8').send(OUTCOME_TEXT[outcome])
}

const originOf = (request: FastifyRequest, version: ApiVersion) => ({ integration: request.integrationId, apiVersion: version })

/** Field names in errors as the spec's tables write them (`People[2].LastName`). */
const pascalFields = (field: string, context: string) => (context === 'body' ? pascalPath(field) : field)

/** Spec spelling of the attachment headers, for error messages. */
const HEADER_NAMES: Record<string, string> = Object.fromEntries(
  ['Channel', 'Desc', 'FileExt', 'FileName', 'LogNote', 'PolicyId', 'RefId', 'TS', 'TaskAssignedTo', 'TaskAssignedToEmail',
    'TaskCategory', 'TaskDescription', 'TaskDueDate', 'TaskTitle', 'Action', 'LogBody', 'LogDescription', 'PolicyIndex',
    'SuspendedFor', 'SuspendedForInitials', 'SuspenseCategory', 'SuspenseDueDate'].map((h) => [h.toLowerCase(), h])
)
const headerFields = (field: string, context: string) => (context === 'headers' ? HEADER_NAMES[field.toLowerCase()] ?? field : field)

/** The receipt item check: TypeBox's compiler and value modules load with the first receipt, not at start-up. */
let receiptCheck: Promise<typeof import('../../src/domain/item-validator.js').checkReceiptItem> | undefined
const loadReceiptCheck = () => (receiptCheck ??= import('../../src/domain/item-validator.js').then((m) => m.checkReceiptItem))

/** The optional task of an attachment: all Task* headers absent, or the required ones present. */
function attachmentTask(h: Record<string, string | undefined>): TaskCommand | undefined {
  const names = ['taskassignedto', 'taskassignedtoemail', 'taskcategory', 'taskdescription', 'taskduedate', 'tasktitle']
  if (names.every((n) => h[n] === undefined)) return undefined
  const errors: FieldError[] = []
  for (const n of ['taskassignedto', 'taskdescription', 'taskduedate', 'tasktitle']) {
    if (h[n] === undefined || h[n] === '') errors.push({ field: HEADER_NAMES[n], message: 'is required when any Task header is sent' })
  }
  const role = h.taskassignedto
  if (role !== undefined && role !== '' && ![...AGENT_ROLES, 'Csr'].includes(role)) {
    errors.push({ field: 'TaskAssignedTo', message: `must be one of ${AGENT_ROLES.join(', ')}` })
  }
  if (h.taskduedate !== undefined && h.taskduedate !== '' && parseTimestamp(h.taskduedate) === null) {
    errors.push({ field: 'TaskDueDate', message: 'must be an ISO 8601 date-time such as 2024-10-08T14:30:00Z' })
  }
  if (errors.length > 0) throw validationFailed(errors)
  return {
    assignedToRole: role as string,
    ...(h.taskassignedtoemail === undefined ? {} : { assignedToEmail: h.taskassignedtoemail }),
    ...(h.taskcategory === undefined ? {} : { category: decodeBase64Header('TaskCategory', h.taskcategory) }),
    description: decodeBase64Header('TaskDescription', h.taskdescription as string),
    dueDate: h.taskduedate as string,
    title: decodeBase64Header('TaskTitle', h.tasktitle as string)
  }
}

/** The gzip body of an attachment, decompressed without ever holding more than the limit. */
export function gunzipAttachment(body: unknown): Buffer {
  if (!Buffer.isBuffer(body) || body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b) {
    throw unsupportedMediaType('The body must be the file compressed with gzip (it must start with the gzip magic bytes 1f 8b); no other compression is supported')
  }
  try {
    return gunzipSync(body, { maxOutputLength: MAX_ATTACHMENT })
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw payloadTooLarge(`The file is larger than ${MAX_ATTACHMENT} bytes (5 MiB) once decompressed`)
    }
    throw badRequest(`The body is not a complete gzip stream: ${(e as Error).message}`, [{ field: '(body)', message: 'must be a valid gzip stream' }])
  }
}

/** Version 3.0 and 4.0 writes: log note, attachment, receipts (spec endpoints 7-9) and create client (10). */
export default async function writeRoutes(fastify: FastifyInstance, { sandbox, version: routeVersion }: VendorRouteOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  const versions = WRITE_VERSIONS.filter((v) => v === routeVersion)

  if (routeVersion === '4.0') await app.register(rateLimit, {
    global: false,
    store: SlidingWindowStore as never,
    keyGenerator: (request) => request.integrationId,
    errorResponseBuilder: (_request, context) =>
      tooManyRequests(`At most ${context.max} create-client requests per second per integration; wait 1 second before retrying`, 1)
  })

  for (const version of versions) {
    app.route({
      method: 'POST',
      url: '/vendor/agency/:agencyId/client/:clientId/log',
      constraints: { apiVersion: version },
      config: { scope: 'create-log-attachment-task', fieldName: pascalFields },
      schema: {
        summary: 'Write a log note to the client (200 created, 202 saved until the agency connects)',
        params: ClientParams,
        querystring: VersionQuery,
        body: LogNoteBodySchema,
        response: { 200: OutcomeSchema, 202: OutcomeSchema }
      },
      handler: (request, reply) => {
        const outcome = sandbox.writes.logNote(grantOf(request).agency, request.params.clientId, request.body, originOf(request, version))
        answerOutcome(reply, outcome)
      }
    })

    app.route({
      method: 'POST',
      url: '/vendor/agency/:agencyId/client/:clientId/receipts',
      constraints: { apiVersion: version },
      config: { scope: 'create-log-attachment-task', fieldName: pascalFields },
      schema: {
        summary: 'Record payments received from the client; one {refId, code, message} per receipt, in order',
        params: ClientParams,
        querystring: VersionQuery,
        body: ReceiptsBodySchema,
        response: {
          200: Type.Array(Type.Object({ refId: Type.Union([Type.String(), Type.Null()]), code: Type.Integer(), message: Type.Union([Type.String(), Type.Null()]) })),
          202: Type.Array(Type.Object({ refId: Type.Union([Type.String(), Type.Null()]), code: Type.Integer(), message: Type.Union([Type.String(), Type.Null()]) }))
        }
      },
      handler: async (request, reply) => {
        const warnings: string[] = request.warnings ?? []
        const check = await loadReceiptCheck()
        const items = (request.body as unknown[]).map((raw, i) => check(raw, i, warnings))
        if (warnings.length > 0) request.warnings = warnings
        const { outcome, answers } = sandbox.writes.receipts(grantOf(request).agency, request.params.clientId, items, originOf(request, version))
        // An item that failed the schema still answers with the RefId it carried, when readable.
        const raw = request.body as Record<string, unknown>[]
        const withRefs = answers.map((a, i) => (a.refId !== null ? a : { ...a, refId: refIdOf(raw[i]) }))
        return reply.code(outcome === 'created' ? 200 : 202).send(withRefs)
      }
    })
  }

  // Attachments: the body is gzip bytes whatever the Content-Type says.
  await app.register(async function attachments(scope) {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_ATTACHMENT_BODY }, (_request, body, done) => done(null, body))
    const typed = scope.withTypeProvider<TypeBoxTypeProvider>()
    for (const version of versions) {
      typed.route({
        method: 'POST',
        url: '/vendor/agency/:agencyId/client/:clientId/attachment',
        constraints: { apiVersion: version },
        bodyLimit: MAX_ATTACHMENT_BODY,
        config: { scope: 'create-log-attachment-task', fieldName: headerFields },
        schema: {
          summary: 'Attach a file (gzip body, metadata in headers; 200 created, 202 saved until the agency connects)',
          params: ClientParams,
          querystring: VersionQuery,
          headers: AttachmentHeadersSchema,
          response: { 200: OutcomeSchema, 202: OutcomeSchema }
        },
        handler: (request, reply) => {
          const h = request.headers as Record<string, string | undefined>
          const content = gunzipAttachment(request.body)
          const outcome = sandbox.writes.attachment(grantOf(request).agency, request.params.clientId, {
            refId: h.refid as string,
            channel: Number(h.channel),
            ts: h.ts as string,
            description: decodeBase64Header('Desc', h.desc as string),
            fileName: decodeBase64Header('FileName', h.filename as string),
            fileExt: normalizeFileExt(h.fileext as string, version),
            logNote: decodeBase64Header('LogNote', h.lognote as string),
            ...(h.policyid === undefined ? {} : { policyId: h.policyid }),
            ...(() => {
              const task = attachmentTask(h)
              return task === undefined ? {} : { task }
            })(),
            content
          }, originOf(request, version))
          answerOutcome(reply, outcome)
        }
      })
    }

    if (routeVersion === '1') typed.route({
      method: 'POST',
      url: '/vendor/agency/:agencyId/client/:clientId/attachment',
      constraints: { apiVersion: '1' },
      bodyLimit: MAX_ATTACHMENT_BODY,
      config: { scope: 'create-log-attachment-task', fieldName: headerFields },
      schema: {
        summary: 'Version 1: attach a file (gzip body, metadata and suspense in headers)',
        params: ClientParams,
        headers: V1AttachmentHeadersSchema,
        response: { 200: OutcomeSchema, 202: OutcomeSchema }
      },
      handler: (request, reply) => {
        const grant = grantOf(request)
        const h = request.headers
        const content = gunzipAttachment(request.body)
        const { agencyId, clientId } = request.params
        const policyId = h.policyindex === undefined ? undefined : sandbox.writes.policyIdAt(agencyId, clientId, Number(h.policyindex))
        const cmd = fromV1Attachment({
          action: Number(h.action),
          desc: decodeBase64Header('Desc', h.desc),
          fileExt: normalizeFileExt(h.fileext, '1'),
          fileName: decodeBase64Header('FileName', h.filename),
          logBody: decodeBase64Header('LogBody', h.logbody),
          logDescription: decodeBase64Header('LogDescription', h.logdescription),
          refId: h.refid,
          suspendedFor: h.suspendedfor,
          suspendedForInitials: h.suspendedforinitials,
          suspenseCategory: decodeBase64Header('SuspenseCategory', h.suspensecategory),
          suspenseDueDate: h.suspenseduedate,
          ts: h.ts
        }, policyId, content)
        answerOutcome(reply, sandbox.writes.attachment(grant.agency, clientId, cmd, originOf(request, '1')))
      }
    })
  })

  // Version 1 log note: POST on the client itself, with Action/Body/Description/Suspense.
  if (routeVersion === '1') app.route({
    method: 'POST',
    url: '/vendor/agency/:agencyId/client/:clientId',
    constraints: { apiVersion: '1' },
    config: { scope: 'create-log-attachment-task', fieldName: pascalFields },
    schema: {
      summary: 'Version 1: write a log note to the client (200 created, 202 saved until the agency connects)',
      params: ClientParams,
      body: V1LogNoteBodySchema,
      response: { 200: OutcomeSchema, 202: OutcomeSchema }
    },
    handler: (request, reply) => {
      const grant = grantOf(request)
      const { agencyId, clientId } = request.params
      const policyId = request.body.policyIndex === undefined ? undefined : sandbox.writes.policyIdAt(agencyId, clientId, request.body.policyIndex)
      const outcome = sandbox.writes.logNote(grant.agency, clientId, fromV1LogNote(request.body, policyId), originOf(request, '1'))
      answerOutcome(reply, outcome)
    }
  })

  if (routeVersion === '4.0') app.route({
    method: 'POST',
    url: '/vendor/agency/:agencyId/client',
    constraints: { apiVersion: '4.0' },
    attachValidation: true,
    config: { scope: 'client-create', rateLimit: CREATE_CLIENT_RATE, fieldName: pascalFields },
    schema: {
      summary: 'Create a client (25 requests per second per integration)',
      params: AgencyParams,
      querystring: VersionQuery,
      body: ClientCreateRequestSchema,
      response: { 200: Type.Object({ clientNumber: Type.Integer() }) }
    },
    handler: (request) => {
      const body = request.body as unknown as CreateClientCommand
      const people = Array.isArray((body as { people?: unknown })?.people)
        ? (body.people as unknown[]).filter((p): p is CreateClientCommand['people'][number] => p !== null && typeof p === 'object')
        : []
      const policy = (body as { policy?: unknown })?.policy
      const ruleErrors = [
        ...checkPeopleRules(people as never),
        ...(policy !== null && typeof policy === 'object' ? checkEffectiveDate(policy as never) : [])
      ]
      const validation = request.validationError as { validation?: Parameters<typeof fieldErrors>[0] } | undefined
      if (validation?.validation !== undefined) {
        const schemaErrors = fieldErrors(validation.validation, 'body').map((e) => ({ ...e, field: pascalPath(e.field) }))
        throw validationFailed([...schemaErrors, ...ruleErrors])
      }
      const clientNumber = sandbox.creator.create(grantOf(request).agency, body, originOf(request, '4.0'), ruleErrors)
      return { clientNumber }
    }
  })
}

function refIdOf(item: unknown): string | null {
  if (item === null || typeof item !== 'object') return null
  const entry = Object.entries(item).find(([k]) => k.toLowerCase() === 'refid')
  return typeof entry?.[1] === 'string' ? entry[1] : null
}
