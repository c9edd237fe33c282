import type { Static, TSchema } from '@sinclair/typebox'
import { validationFailed, type FieldError } from '../errors.js'
import type { AttachmentCommand, LogNoteCommand, TaskCommand } from '../schemas/commands.js'
import { attachmentCommand, checkFileSignature, decodeBase64Header, normalizeFileExt } from './attachment-headers.js'
import {
  AttachmentHeadersSchema, LogNoteBodySchema, V1AttachmentHeadersSchema, V1LogNoteBodySchema, type V1AttachmentHeaders, type V1LogNoteBody
} from '../schemas/writes.js'

/**
 * Each version's write request mapped up to the 4.0 command the domain speaks. Version 1:
 * Action → channel, Body → note, Description kept as the note's description,
 * PolicyIndex → the policy's id, Suspense → the task.
 */

/** The id of the client's policy at a 0-based index (version 1 PolicyIndex); throws when there is none. */
export type PolicyLookup = (index: number) => string

/**
 * A request part (body or headers) validated against `schema`, paired with its mapping. The route
 * validates with exactly this schema before the mapping runs, so the mapping may take its type.
 */
export interface Validated<S extends TSchema, Args extends unknown[], R> {
  schema: S
  map: (input: unknown, ...args: Args) => R
}

function validated<S extends TSchema, Args extends unknown[], R> (schema: S, map: (input: Static<S>, ...args: Args) => R): Validated<S, Args, R> {
  // Fastify ran the schema's validator on the input before the handler calls this (see the operation table).
  return { schema, map: (input, ...args) => map(input as Static<S>, ...args) }
}

export interface V1Suspense {
  category?: string
  dueDate: string
  suspendedFor: string
  suspendedForInitials?: string
}

export interface V1LogNote {
  action: number
  body: string
  description: string
  policyIndex?: number
  refId: string
  suspense?: V1Suspense
  ts: string
}

/** A suspense is the version 1 task: titled by the note's description, described by its body. */
export function suspenseToTask (s: V1Suspense, title: string, description: string): TaskCommand {
  return {
    assignedToRole: s.suspendedFor,
    assignedToInitials: s.suspendedForInitials ?? '',
    ...(s.category === undefined ? {} : { category: s.category }),
    description,
    dueDate: s.dueDate,
    title
  }
}

export function fromV1LogNote (v1: V1LogNote, policyId: string | undefined): LogNoteCommand {
  return {
    refId: v1.refId,
    channel: v1.action,
    note: v1.body,
    ts: v1.ts,
    description: v1.description,
    ...(policyId === undefined ? {} : { policyId }),
    ...(v1.suspense === undefined ? {} : { task: suspenseToTask(v1.suspense, v1.description, v1.body) })
  }
}

/** Version 1 attachment headers, already base64-decoded where the spec says b64. */
export interface V1AttachmentFields {
  action: number
  desc: string
  fileExt: string
  fileName: string
  logBody: string
  logDescription: string
  refId: string
  suspendedFor: string
  suspendedForInitials: string
  suspenseCategory: string
  suspenseDueDate: string
  ts: string
}

/** A version 1 attachment from its headers (base64 decoded where the spec says b64), in the order version 1 checked them. */
function fromV1AttachmentHeaders (h: V1AttachmentHeaders, content: Buffer, policyIdAt: PolicyLookup): AttachmentCommand {
  const fileExt = normalizeFileExt(h.fileext, '1')
  checkFileSignature(fileExt, content)
  const policyId = h.policyindex === undefined ? undefined : policyIdAt(Number(h.policyindex))
  const logBody = decodeBase64Header('LogBody', h.logbody)
  const logDescription = decodeBase64Header('LogDescription', h.logdescription)
  checkV1LogLengths(logBody, logDescription)
  return fromV1Attachment({
    action: Number(h.action),
    desc: decodeBase64Header('Desc', h.desc),
    fileExt,
    fileName: decodeBase64Header('FileName', h.filename),
    logBody,
    logDescription,
    refId: h.refid,
    suspendedFor: h.suspendedfor,
    suspendedForInitials: h.suspendedforinitials,
    suspenseCategory: decodeBase64Header('SuspenseCategory', h.suspensecategory),
    suspenseDueDate: h.suspenseduedate,
    ts: h.ts
  }, policyId, content)
}

/** The version 1 log note's limits, which its attachment's log headers share (decoded lengths). */
export const V1_LOG_BODY_MAX = 3000
export const V1_LOG_DESCRIPTION_MAX = 140

function checkV1LogLengths (logBody: string, logDescription: string): void {
  const errors: FieldError[] = []
  if ([...logBody].length > V1_LOG_BODY_MAX) errors.push({ field: 'LogBody', message: `must be at most ${V1_LOG_BODY_MAX} characters once decoded` })
  if ([...logDescription].length > V1_LOG_DESCRIPTION_MAX) {
    errors.push({ field: 'LogDescription', message: `must be at most ${V1_LOG_DESCRIPTION_MAX} characters once decoded` })
  }
  if (errors.length > 0) throw validationFailed(errors)
}

export function fromV1Attachment (v1: V1AttachmentFields, policyId: string | undefined, content: Buffer): AttachmentCommand {
  return {
    refId: v1.refId,
    channel: v1.action,
    ts: v1.ts,
    description: v1.desc,
    fileName: v1.fileName,
    fileExt: v1.fileExt,
    logNote: v1.logBody,
    logDescription: v1.logDescription,
    ...(policyId === undefined ? {} : { policyId }),
    task: suspenseToTask(
      { suspendedFor: v1.suspendedFor, suspendedForInitials: v1.suspendedForInitials, category: v1.suspenseCategory, dueDate: v1.suspenseDueDate },
      v1.logDescription,
      v1.logBody
    ),
    content
  }
}

/** The log note of a version: its body schema and the mapping to the 4.0 command. */
export type LogNoteMapping = Validated<TSchema, [policyIdAt: PolicyLookup], LogNoteCommand>
/** The attachment of a version: its header schema and the mapping (with the decompressed file) to the 4.0 command. */
export type AttachmentMapping = Validated<TSchema, [content: Buffer, policyIdAt: PolicyLookup], AttachmentCommand>

const logNote40: LogNoteMapping = validated(LogNoteBodySchema, (body) => body)
const logNoteV1: LogNoteMapping = validated(V1LogNoteBodySchema, (body: V1LogNoteBody, policyIdAt: PolicyLookup) =>
  fromV1LogNote(body, body.policyIndex === undefined ? undefined : policyIdAt(body.policyIndex)))

export const logNoteMappings = { '4.0': logNote40, '3.0': logNote40, 1: logNoteV1 } as const

export const attachmentMappings = {
  '4.0': validated(AttachmentHeadersSchema, (h, content: Buffer) => attachmentCommand(h, content, '4.0')),
  '3.0': validated(AttachmentHeadersSchema, (h, content: Buffer) => attachmentCommand(h, content, '3.0')),
  1: validated(V1AttachmentHeadersSchema, fromV1AttachmentHeaders)
} as const satisfies Record<string, AttachmentMapping>
