import type { FastifyReply, FastifyRequest } from 'fastify'
import { attachmentPlace, contentSha256, declaredSize, gunzipAttachment, MAX_ATTACHMENT, MAX_ATTACHMENT_BODY } from '../../src/domain/attachments.js'
import { HEADER_NAMES, type HeaderRecord } from '../../src/versions/attachment-headers.js'
import type { CreateClientRequest } from '../../src/domain/create-client.js'
import { recordReceipts } from '../../src/domain/receipts.js'
import { pascalPath } from '../../src/domain/write-rules.js'
import { OUTCOME_TEXT, type Outcome, type Writes } from '../../src/domain/writes.js'
import { ApiError } from '../../src/errors.js'
import { noteBodyBytes } from '../../src/http/body-buffers.js'
import { fieldErrors } from '../../src/plugins/errors.js'
import { grantOf } from '../../src/plugins/vendor.js'
import { originOf, type OperationHandlers, type OperationRequest } from './operation.js'

/** A write's status: 200 when it was created, 202 when it waits for its agency to connect. */
const outcomeStatus = (outcome: Outcome): number => (outcome === 'created' ? 200 : 202)

/**
 * Answers a write's outcome. An async handler returns what this returns (the reply): Fastify then
 * knows the answer is on its way, and does not send it again, empty, while an onSend hook of
 * hosted mode still waits for the write's append.
 */
export function answerOutcome (reply: FastifyReply, outcome: Outcome): FastifyReply {
  return reply.code(outcomeStatus(outcome)).type('text/plain; charset=utf-8').send(OUTCOME_TEXT[outcome])
}

/**
 * Runs a write and answers it. A world in a file commits it with the other writes of this turn
 * (worlds/write-batch.ts), and it is answered once that commit is done. Any other world applies it
 * at once, and it is answered in the same call, as it always was: hosted mode hands a turn's
 * writes to the world's log as their answer is sent, and nothing comes between the two. The work
 * gets the world's writes as they are when it runs (a reset meanwhile may have swapped its data).
 */
function answerWrite<T> (request: FastifyRequest, work: (writes: Writes) => T, answer: (value: T) => FastifyReply): FastifyReply | Promise<FastifyReply> {
  if (!request.world.writeBatch.batched) return answer(work(request.world.writes))
  return commitWrite(request, work).then(answer)
}

/** The write in its world's commit of this turn (at once in a world in memory); settles once committed. */
const commitWrite = <T>(request: FastifyRequest, work: (writes: Writes) => T): Promise<T> =>
  request.world.writeBatch.run(() => work(request.world.writes))

/** Field names in errors as the spec's tables write them (`People[2].LastName`). */
const pascalFields = (field: string, context: string) => (context === 'body' ? pascalPath(field) : field)

/** Header names in errors as the spec writes them (`TaskDueDate`). */
const headerFields = (field: string, context: string) => (context === 'headers' ? HEADER_NAMES[field.toLowerCase()] ?? field : field)

/** The request's headers as a plain record of text values (Node gives arrays only for set-cookie). */
function headerRecord (request: FastifyRequest): HeaderRecord {
  const record: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(request.headers)) record[name] = Array.isArray(value) ? value.join(', ') : value
  return record
}

/** When each create-client request arrived, on the sandbox clock's real time. */
const arrivals = new WeakMap<FastifyRequest, number>()

/** The create-client request as bound: the body and, when it failed the schema, the schema's errors. */
function createClientRequest (request: OperationRequest<'createClient'>): CreateClientRequest {
  const failed = request.validationError
  if (failed === undefined) return { valid: true, body: request.body }
  const schemaErrors = fieldErrors(failed.validation, 'body').map((e) => ({ ...e, field: pascalPath(e.field) }))
  return { valid: false, body: request.body, schemaErrors }
}

/**
 * The attachment's content. Its bytes count as body bytes (src/http/body-buffers.ts), and so does
 * the limit for a stream refused as too large or broken: its output was made before the refusal.
 */
async function decompressedBody (request: FastifyRequest): Promise<Buffer> {
  try {
    const content = await gunzipAttachment(request.body)
    noteBodyBytes(request, content.length)
    return content
  } catch (e) {
    if (e instanceof ApiError && e.status === 400) noteBodyBytes(request, MAX_ATTACHMENT)
    throw e
  }
}

/**
 * Writes (spec endpoints 7 to 10): log notes, attachments, receipts and create client. Each
 * version's request is mapped to the 4.0 command by `mapping`; the rules are the domain's.
 */
export const writeHandlers: OperationHandlers<'logNote' | 'attachment' | 'receipts' | 'createClient'> = {
  logNote: ({ version, mapping }) => ({
    fieldName: pascalFields,
    handler: (request, reply) => {
      const { agency } = grantOf(request)
      const { clientId } = request.params
      const command = mapping.map(request.body, (index) => request.world.writes.policyIdAt(agency.agencyId, clientId, index))
      const origin = originOf(request, version)
      return answerWrite(request, (writes) => writes.logNote(agency, clientId, command, origin), (outcome) => answerOutcome(reply, outcome))
    }
  }),

  // The body is gzip bytes whatever the Content-Type says; the metadata is in headers.
  attachment: ({ version, mapping }) => ({
    fieldName: headerFields,
    rawBodyLimit: MAX_ATTACHMENT_BODY,
    handler: async (request, reply) => {
      const { agency } = grantOf(request)
      const { clientId } = request.params
      // a world at its bound refuses the content its body declares before it is decompressed (a new RefId's)
      const declared = declaredSize(request.body)
      const refId = request.headers.refid
      if (declared !== undefined && typeof refId === 'string') request.world.writes.checkRoom(agency.agencyId, refId, declared)
      const release = await attachmentPlace(request.world.id)
      try {
        // the content's decompression and digest run in libuv's thread pool, not on the event loop
        const content = await decompressedBody(request)
        const command = mapping.map(headerRecord(request), content, (index) => request.world.writes.policyIdAt(agency.agencyId, clientId, index))
        // a world at its bound refuses it before its digest is made
        request.world.writes.checkRoom(agency.agencyId, command.refId, content.length)
        const digest = await contentSha256(content)
        const origin = originOf(request, version)
        return await answerWrite(request, (writes) => writes.attachment(agency, clientId, command, origin, digest), (outcome) => answerOutcome(reply, outcome))
      } finally {
        release()
      }
    }
  }),

  receipts: ({ version }) => ({
    fieldName: pascalFields,
    handler: async (request, reply) => {
      const warnings = (request.warnings ??= [])
      const { outcome, answers } = await recordReceipts(
        (work) => commitWrite(request, work), grantOf(request).agency, request.params.clientId, request.body, originOf(request, version), warnings
      )
      return reply.code(outcomeStatus(outcome)).send(answers)
    }
  }),

  createClient: ({ version }) => ({
    fieldName: pascalFields,
    attachValidation: true,
    // The budget counts a creation at the time its request arrived, however long it then takes.
    onRequest: (request, _reply, done) => {
      arrivals.set(request, request.world.clock.realMs())
      done()
    },
    // What is left of the integration's budget, on every answer after authentication.
    onSend: (request, reply, payload, done) => {
      if (request.integrationId !== '') {
        const { limit, remaining, resetMs } = request.world.creator.budget(request.integrationId)
        reply.header('x-ratelimit-limit', limit).header('x-ratelimit-remaining', remaining).header('x-ratelimit-reset', Math.ceil(resetMs / 1000))
      }
      done(null, payload)
    },
    handler: (request) => {
      const arrivedAt = arrivals.get(request)
      const clientNumber = request.world.creator.create(grantOf(request).agency, createClientRequest(request), originOf(request, version), arrivedAt)
      return { clientNumber }
    }
  })
}
