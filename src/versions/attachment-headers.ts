import { badRequest, invalidField, validationFailed, type FieldError } from '../errors.js'
import type { AttachmentCommand, TaskCommand } from '../schemas/commands.js'
import { AGENT_ROLES, ATTACHMENT_TYPES, type AttachmentHeaders, type AttachmentVersion } from '../schemas/writes.js'
import { parseTimestamp } from '../time.js'

/**
 * An attachment's headers read into the domain's command, with the rules a schema cannot express:
 * the file type is one of the version's and the file's bytes carry its signature, base64 headers
 * are UTF-8 text, and the Task* headers form a group (none, or all the required ones). Inputs are
 * plain: header values by lower-case name, the body's decompressed bytes. Every fault is an
 * ApiError naming the header.
 */

/** Header values by lower-case name, as Node hands them over (absent: undefined). */
export type HeaderRecord = Readonly<Record<string, string | undefined>>

/** Spec spelling of the attachment headers (of every version), by lower-case name. */
export const HEADER_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  ['Channel', 'Desc', 'FileExt', 'FileName', 'LogNote', 'PolicyId', 'RefId', 'TS', 'TaskAssignedTo', 'TaskAssignedToEmail',
    'TaskCategory', 'TaskDescription', 'TaskDueDate', 'TaskTitle', 'Action', 'LogBody', 'LogDescription', 'PolicyIndex',
    'SuspendedFor', 'SuspendedForInitials', 'SuspenseCategory', 'SuspenseDueDate'].map((h) => [h.toLowerCase(), h])
)

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

/**
 * Standard alphabet with its `=` padding (a length that is a multiple of 4), no whitespace: what
 * .NET's Convert.FromBase64String, which the live service decodes these headers with, accepts.
 */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
/** The same without the padding, to tell the caller that only the padding is missing. */
const UNPADDED_BASE64 = /^(?:[A-Za-z0-9+/]{4})*[A-Za-z0-9+/]{2,3}$/
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes a base64 header value as UTF-8 text. Anything that is not strict, padded base64 of valid
 * UTF-8 without a NUL is a 400 naming the header (`name`, in the spec's spelling). The empty string is the empty text.
 */
export function decodeBase64Header (name: string, value: string): string {
  if (!BASE64.test(value)) {
    if (UNPADDED_BASE64.test(value)) {
      throw invalidField(name, "must be padded base64: its length must be a multiple of 4, so add the '=' padding")
    }
    throw invalidField(name, 'must be base64 (UTF-8 text)')
  }
  let text: string
  try {
    text = UTF8.decode(Buffer.from(value, 'base64'))
  } catch {
    throw invalidField(name, 'must be base64 (UTF-8 text)')
  }
  // strict UTF-8 holds no lone surrogate; a NUL it may, which no store holds alike (json-body.ts)
  if (text.includes('\0')) throw invalidField(name, 'must be base64 of text without a NUL character (U+0000)')
  return text
}
