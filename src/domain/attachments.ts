import { gunzipSync } from 'node:zlib'
import { badRequest, invalidField, unsupportedMediaType, validationFailed, type FieldError } from '../errors.js'
import { AGENT_ROLES, ATTACHMENT_TYPES, type AttachmentHeaders, type AttachmentVersion } from '../schemas/writes.js'
import { parseTimestamp } from '../time.js'
import { decodeBase64Header } from './write-rules.js'
import type { AttachmentCommand, TaskCommand } from './writes.js'

/**
 * The attachment rules a schema cannot express: the body is one gzip stream of at most 5 MiB
 * once decompressed, the file type is one of the version's, base64 headers are UTF-8 text, and
 * the Task* headers form a group (none, or all the required ones). Inputs are plain: header
 * values by lower-case name, the body's bytes. Every fault is an ApiError naming the header.
 */

/** Largest decompressed attachment: 5 MiB. */
export const MAX_ATTACHMENT = 5 * 1024 * 1024
/** Largest compressed attachment body accepted on the wire. */
export const MAX_ATTACHMENT_BODY = 6 * 1024 * 1024

/** Header values by lower-case name, as Node hands them over (absent: undefined). */
export type HeaderRecord = Readonly<Record<string, string | undefined>>

/** Spec spelling of the attachment headers (of every version), by lower-case name. */
export const HEADER_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  ['Channel', 'Desc', 'FileExt', 'FileName', 'LogNote', 'PolicyId', 'RefId', 'TS', 'TaskAssignedTo', 'TaskAssignedToEmail',
    'TaskCategory', 'TaskDescription', 'TaskDueDate', 'TaskTitle', 'Action', 'LogBody', 'LogDescription', 'PolicyIndex',
    'SuspendedFor', 'SuspendedForInitials', 'SuspenseCategory', 'SuspenseDueDate'].map((h) => [h.toLowerCase(), h])
)

/** The gzip body of an attachment, decompressed without ever holding more than the limit. */
export function gunzipAttachment (body: unknown): Buffer {
  if (!Buffer.isBuffer(body) || body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b) {
    throw unsupportedMediaType('The body must be the file compressed with gzip (it must start with the gzip magic bytes 1f 8b); no other compression is supported')
  }
  try {
    return gunzipSync(body, { maxOutputLength: MAX_ATTACHMENT })
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      // the live service's sentence and status (400, not 413)
      throw badRequest('File exceeds max size of 5 MB.', [{ field: '(body)', message: `must be at most ${MAX_ATTACHMENT} bytes (5 MiB) once decompressed` }])
    }
    throw badRequest(`The body is not a complete gzip stream: ${(e as Error).message}`, [{ field: '(body)', message: 'must be a valid gzip stream' }])
  }
}

/**
 * The attachment's file type as stored: one leading dot removed, lower-cased, and one of the types
 * of the version (`txt` only in version 1; `eml` and `msg` only in 3.0 and 4.0).
 */
export function normalizeFileExt (ext: string, version: AttachmentVersion): string {
  const allowed: readonly string[] = ATTACHMENT_TYPES[version]
  const type = (ext.startsWith('.') ? ext.slice(1) : ext).toLowerCase()
  if (!allowed.includes(type)) throw invalidField('FileExt', `must be one of ${allowed.join(', ')}`)
  return type
}

const startsWith = (content: Buffer, bytes: readonly number[]) => bytes.every((b, i) => content[i] === b)

/** Text as the live service takes it for eml (and version 1 txt): valid UTF-8 without NUL bytes. */
function isText (content: Buffer): boolean {
  if (content.includes(0)) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(content)
    return true
  } catch {
    return false
  }
}

/** Whether the decompressed bytes carry the signature of the file type (as normalizeFileExt returns it). */
const SIGNATURES: Readonly<Record<string, (content: Buffer) => boolean>> = {
  pdf: (c) => startsWith(c, [0x25, 0x50, 0x44, 0x46, 0x2d]), // %PDF-
  png: (c) => startsWith(c, [0x89, 0x50, 0x4e, 0x47]),
  jpg: (c) => startsWith(c, [0xff, 0xd8, 0xff]),
  jpeg: (c) => startsWith(c, [0xff, 0xd8, 0xff]),
  // an ID3 tag, or straight into an MPEG audio frame (frame sync: eleven set bits)
  mp3: (c) => startsWith(c, [0x49, 0x44, 0x33]) || (c.length >= 2 && c[0] === 0xff && (c[1] & 0xe0) === 0xe0),
  msg: (c) => startsWith(c, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), // OLE compound file
  eml: isText,
  txt: isText
}

/**
 * The live service looks at the decompressed bytes before any other header: a file whose first
 * bytes do not match its FileExt answers 400 `Invalid file signature`.
 */
export function checkFileSignature (fileExt: string, content: Buffer): void {
  const matches = SIGNATURES[fileExt]
  if (matches !== undefined && !matches(content)) {
    throw badRequest('Invalid file signature', [{ field: 'FileExt', message: `the file's bytes are not a ${fileExt} file (its signature does not match)` }])
  }
}

const TASK_HEADERS = ['taskassignedto', 'taskassignedtoemail', 'taskcategory', 'taskdescription', 'taskduedate', 'tasktitle']
const REQUIRED_TASK_HEADERS = ['taskassignedto', 'taskdescription', 'taskduedate', 'tasktitle']
const TASK_ROLES: readonly string[] = [...AGENT_ROLES, 'Csr']

/** The optional task of an attachment: all Task* headers absent, or the required ones present. */
export function attachmentTask (h: HeaderRecord): TaskCommand | undefined {
  if (TASK_HEADERS.every((n) => h[n] === undefined)) return undefined
  const errors: FieldError[] = []
  for (const n of REQUIRED_TASK_HEADERS) {
    if (h[n] === undefined || h[n] === '') errors.push({ field: HEADER_NAMES[n], message: 'is required when any Task header is sent' })
  }
  const { taskassignedto: role, taskduedate: dueDate, taskdescription: description, tasktitle: title } = h
  if (role !== undefined && role !== '' && !TASK_ROLES.includes(role)) {
    errors.push({ field: 'TaskAssignedTo', message: `must be one of ${AGENT_ROLES.join(', ')}` })
  }
  if (dueDate !== undefined && dueDate !== '' && parseTimestamp(dueDate) === null) {
    errors.push({ field: 'TaskDueDate', message: 'must be an ISO 8601 date-time such as 2024-10-08T14:30:00Z' })
  }
  // the checks above leave each required header a non-empty string; the narrowing says so to the compiler
  if (errors.length > 0 || role === undefined || dueDate === undefined || description === undefined || title === undefined) {
    throw validationFailed(errors)
  }
  return {
    assignedToRole: role,
    ...(h.taskassignedtoemail === undefined ? {} : { assignedToEmail: h.taskassignedtoemail }),
    ...(h.taskcategory === undefined ? {} : { category: decodeBase64Header('TaskCategory', h.taskcategory) }),
    description: decodeBase64Header('TaskDescription', description),
    dueDate,
    title: decodeBase64Header('TaskTitle', title)
  }
}

/**
 * A 3.0 or 4.0 attachment as the domain records it: headers decoded and checked (in the order
 * FileExt and the file's signature, Desc, FileName, LogNote, the Task group), with the decompressed content.
 */
export function attachmentCommand (h: AttachmentHeaders, content: Buffer, version: AttachmentVersion): AttachmentCommand {
  const fileExt = normalizeFileExt(h.fileext, version)
  checkFileSignature(fileExt, content)
  const description = decodeBase64Header('Desc', h.desc)
  const fileName = decodeBase64Header('FileName', h.filename)
  const logNote = decodeBase64Header('LogNote', h.lognote)
  const task = attachmentTask(h)
  return {
    refId: h.refid,
    channel: Number(h.channel),
    ts: h.ts,
    description,
    fileName,
    fileExt,
    logNote,
    ...(h.policyid === undefined ? {} : { policyId: h.policyid }),
    ...(task === undefined ? {} : { task }),
    content
  }
}
