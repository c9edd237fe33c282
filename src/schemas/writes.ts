import { Type, type Static } from '@sinclair/typebox'
import { markCalendar, markEnumeration, markLiveSentence } from './bind.js'
import { documentAs } from './documented.js'
import {
  APPLICATION_TYPES, BUSINESS_TYPES, CLIENT_STATUSES, CONTACT_TYPES, DateTimeString, Guid, MAIN_CONTACT_TYPES, enumeration
} from './common.js'
import { LOB_CODES } from './lob.js'

/**
 * Request schemas of the write operations: log note, attachment headers, receipts and create client
 * (versions 4.0/3.0), and the version 1 log note and attachment headers.
 *
 * Property names are the wire's camelCase. Request keys are bound to them case-insensitively before
 * validation (src/schemas/bind.ts), so `Note`, `note` and `NOTE` all land on `note`, and the spec's
 * `LOBs` lands on the wire's `loBs`. There are no other names: `action` is the version 1 name of the
 * channel only (in 3.0 and 4.0 it is an unknown key, as the live service treats it). Enumerations
 * bind in any case (and by number), dates must be real calendar values (see bind.ts). Descriptions
 * of pattern-checked strings are worded to follow "must be", because validation errors read
 * "must be <description>".
 */

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

/** AgentRole of the spec (log notes, receipts, attachments, version 1 suspense). */
export const AGENT_ROLES = ['SpecifiedUser', 'Producer', 'CSR', 'Agent1', 'Agent2', 'Agent3'] as const
export type AgentRole = (typeof AGENT_ROLES)[number]

/** The same roles as the create-client page spells them (`Csr`). */
export const TASK_CREATE_ROLES = ['SpecifiedUser', 'Producer', 'Csr', 'Agent1', 'Agent2', 'Agent3'] as const
export type TaskCreateRole = (typeof TASK_CREATE_ROLES)[number]

/** AgentRole as requests bind it: any case (so `Csr` and `csr` are CSR), or its number 0 to 5. */
const agentRole = (description = 'AgentRole, in any case (CSR may be spelled Csr), or its number 0 to 5') =>
  enumeration(AGENT_ROLES, true, description, [...AGENT_ROLES, 'Csr'])

const LOG_ACTION_DESCRIPTION =
  'LogAction 1 to 56: seven channel groups of eight starting at 1 Phone, 9 Mail, 17 Walk In, 25 Online, ' +
  '33 Email, 41 Text, 49 Chat; the offset 0-7 inside a group is To Insured, To Carrier, To Agency Staff, ' +
  'To 3rd Party, From Insured, From Carrier, From Agency Staff, From 3rd Party (29 = Online From Insured)'

/** A fresh LogAction schema (its own description per use). */
const logAction = (description = LOG_ACTION_DESCRIPTION) => Type.Integer({ minimum: 1, maximum: 56, description })

/** LogAction: integer 1..56, seven channel groups of eight directions. */
export const LogActionSchema = logAction()
export type LogAction = Static<typeof LogActionSchema>

/**
 * DateOnly as callers send it: `yyyy-mm-dd`, optionally followed by a time (`2024-10-08T00:00:00`),
 * the way the service itself writes dates; a real calendar date (the binder checks it).
 */
const dateOnlyOrDateTime = (description = 'a date yyyy-mm-dd, optionally with a time such as 2024-10-08T00:00:00') =>
  markCalendar(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,7})?)?(Z|[+-]\\d{2}:?\\d{2})?)?$', description }), 'date')

/** Exactly two characters (a state code), when set. */
const StateCode = Type.String({ minLength: 2, maxLength: 2, description: 'state code, exactly 2 characters (e.g. ME)' })

// ---------------------------------------------------------------------------------------------
// Task, log note, receipts (versions 4.0 and 3.0)
// ---------------------------------------------------------------------------------------------

/** Task inside a log note or a receipt (no length limits: the spec sets them only for create client). */
export const TaskSchema = Type.Object(
  {
    assignedToRole: agentRole(),
    assignedToEmail: Type.Optional(Type.String({ description: 'email of an active agency user; required when assignedToRole is SpecifiedUser' })),
    category: Type.Optional(Type.String({ description: 'task category' })),
    description: Type.String({ description: 'what the user has to do' }),
    dueDate: DateTimeString,
    title: Type.String({ description: 'task title' })
  },
  { additionalProperties: false, title: 'Task', description: 'a task for an agency user' }
)
export type Task = Static<typeof TaskSchema>

/** POST .../client/{clientId}/log, versions 4.0 and 3.0. */
export const LogNoteBodySchema = Type.Object(
  {
    // the live service answers a missing or invalid channel (e.g. sent as `action`) `Invalid Channel`
    channel: markLiveSentence(logAction(`${LOG_ACTION_DESCRIPTION}; the key is channel (action is read only in version 1)`), 'Invalid Channel'),
    note: Type.String({
      minLength: 1,
      description: 'text of the log note (may contain HTML); the spec sets no maximum for this operation'
    }),
    policyId: Type.Optional(Guid),
    refId: Guid,
    ts: DateTimeString,
    task: Type.Optional(TaskSchema)
  },
  { additionalProperties: false, title: 'LogNote', description: 'log note of versions 4.0 and 3.0' }
)
export type LogNoteBody = Static<typeof LogNoteBodySchema>

export const ReceiptInvoiceSchema = Type.Object(
  {
    amount: Type.Number({ exclusiveMinimum: 0, description: 'amount applied to this invoice, greater than 0' }),
    invoiceId: Guid
  },
  { additionalProperties: false, title: 'ReceiptInvoice' }
)
export type ReceiptInvoice = Static<typeof ReceiptInvoiceSchema>

/** One receipt of POST .../client/{clientId}/receipts. */
export const ReceiptSchema = Type.Object(
  {
    channel: logAction(`source of the interaction that produced the payment: ${LOG_ACTION_DESCRIPTION}`),
    invoices: Type.Optional(Type.Array(ReceiptInvoiceSchema, { description: 'open invoices of the client the payment is applied to' })),
    logNote: Type.String({ minLength: 1, description: 'text of the log note linked to the receipt' }),
    officeId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: "office of the receipt; the client's office when absent" })),
    payMethod: Type.Optional(Type.String({ maxLength: 50, description: 'payment method; Other when absent' })),
    policyId: Type.Optional(Guid),
    refId: Guid,
    ts: DateTimeString,
    task: Type.Optional(TaskSchema),
    total: Type.Number({ description: 'amount received, required; with invoices it must equal the sum of their amounts, without invoices the payment is recorded unapplied' })
  },
  { additionalProperties: false, title: 'Receipt', description: 'a payment received from the client' }
)
export type Receipt = Static<typeof ReceiptSchema>

/** Receipts are checked one by one (each answered on its own), against this schema. */
export const ReceiptItemSchema = ReceiptSchema
export type ReceiptItem = Receipt

const RECEIPTS_BODY_DESCRIPTION = '1 to 100 receipts; each is validated and answered on its own with {refId, code, message}'

/**
 * The receipts body as the route validates it: only an array of 1 to 100 items. Each item is bound
 * and validated separately against ReceiptItemSchema, so one bad receipt does not reject the others.
 * The OpenAPI documents describe it as the array of Receipt it is, so that generated clients type it.
 */
export const ReceiptsBodySchema = documentAs(
  Type.Array(Type.Unknown(), { minItems: 1, maxItems: 100, description: RECEIPTS_BODY_DESCRIPTION }),
  Type.Array(ReceiptSchema, { minItems: 1, maxItems: 100, description: RECEIPTS_BODY_DESCRIPTION })
)
export type ReceiptsBody = Static<typeof ReceiptsBodySchema>

// ---------------------------------------------------------------------------------------------
// Create client (version 4.0)
// ---------------------------------------------------------------------------------------------

export const ClientBusinessDetailSchema = Type.Object(
  {
    businessType: enumeration(BUSINESS_TYPES, true, 'BusinessType, in any case, or its number 0 to 8'),
    companyName: Type.String({ minLength: 1, maxLength: 60, description: 'company name, at most 60 characters' }),
    dbaName: Type.Optional(Type.String({ maxLength: 60, description: 'doing-business-as name, at most 60 characters' })),
    feinNum: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'at most 9 digits 0-9' })),
    licenseNum: Type.Optional(Type.String({ maxLength: 30, description: 'license number, at most 30 characters' })),
    naics: Type.Optional(Type.String({ maxLength: 6, description: 'NAICS code, at most 6 characters' })),
    website: Type.Optional(Type.String({ maxLength: 128, description: 'website, at most 128 characters' }))
  },
  { additionalProperties: false, title: 'ClientBusinessDetail', description: 'makes the client Commercial' }
)
export type ClientBusinessDetail = Static<typeof ClientBusinessDetailSchema>

export const AddressCreateSchema = Type.Object(
  {
    address1: Type.Optional(Type.String({ maxLength: 40 })),
    address2: Type.Optional(Type.String({ maxLength: 40 })),
    city: Type.Optional(Type.String({ maxLength: 19 })),
    state: Type.Optional(StateCode),
    zip: Type.Optional(Type.String({ maxLength: 10 }))
  },
  { additionalProperties: false, title: 'AddressCreateRequest', description: 'all fields optional' }
)
export type AddressCreate = Static<typeof AddressCreateSchema>

export const ContactCreateSchema = Type.Object(
  {
    type: enumeration(CONTACT_TYPES, true, 'ContactType, in any case, or its number 0 to 13'),
    value: Type.String({ maxLength: 128, description: 'the number, address or URL, at most 128 characters' })
  },
  { additionalProperties: false, title: 'ContactCreateRequest' }
)
export type ContactCreate = Static<typeof ContactCreateSchema>

export const PersonCreateSchema = Type.Object(
  {
    contacts: Type.Optional(Type.Array(ContactCreateSchema, { maxItems: 5, description: 'at most 5 contacts of the person' })),
    dateOfBirth: Type.Optional(dateOnlyOrDateTime()),
    driverLicenseNumber: Type.Optional(Type.String({ maxLength: 25 })),
    firstName: Type.Optional(Type.String({ maxLength: 14 })),
    lastName: Type.Optional(Type.String({ maxLength: 24 })),
    mainContactType: enumeration(MAIN_CONTACT_TYPES, true, 'MainContactType, in any case, or its number 0 to 3; exactly one person of the client is First, at most one Second')
  },
  { additionalProperties: false, title: 'PersonCreateRequest' }
)
export type PersonCreate = Static<typeof PersonCreateSchema>

export const PolicyCreateSchema = Type.Object(
  {
    applicationType: Type.Optional(enumeration(APPLICATION_TYPES, true, 'ApplicationType, in any case, or its number 0 to 9')),
    effectiveDate: Type.Optional(
      dateOnlyOrDateTime('a date yyyy-mm-dd on or after 1970-01-01, optionally with a time such as 2024-10-08T00:00:00')
    ),
    loBs: Type.Optional(Type.Array(enumeration(LOB_CODES, false, 'line-of-business code, in any case'), {
      maxItems: 12,
      description: 'at most 12 line-of-business codes (the spec names this field LOBs)'
    })),
    policyNumber: Type.Optional(Type.String({ maxLength: 25 })),
    state: Type.Optional(StateCode)
  },
  { additionalProperties: false, title: 'PolicyCreateRequest', description: 'policy shell created with the client; all fields optional' }
)
export type PolicyCreate = Static<typeof PolicyCreateSchema>

/** The log note created with a client. The spec types Channel as Int32; the sandbox holds it to LogAction. */
export const LogCreateSchema = Type.Object(
  {
    channel: logAction(),
    note: Type.String({ minLength: 1, maxLength: 3000, description: 'text of the log note, at most 3,000 characters' }),
    policyId: Type.Optional(Guid),
    ts: DateTimeString
  },
  { additionalProperties: false, title: 'LogCreateRequest' }
)
export type LogCreate = Static<typeof LogCreateSchema>

export const TaskCreateSchema = Type.Object(
  {
    assignedToRole: enumeration(
      TASK_CREATE_ROLES,
      true,
      'AgentRole as the create-client page spells it (Csr; CSR is accepted too), in any case, or its number 0 to 5; Csr, Producer and Agent1-3 need an agency default user for the role',
      [...TASK_CREATE_ROLES, 'CSR']
    ),
    assignedToEmail: Type.Optional(Type.String({ description: 'email of an active agency user; required when assignedToRole is SpecifiedUser' })),
    category: Type.Optional(Type.String({ maxLength: 50 })),
    description: Type.String({ maxLength: 4000 }),
    dueDate: DateTimeString,
    title: Type.String({ maxLength: 50 })
  },
  { additionalProperties: false, title: 'TaskCreateRequest' }
)
export type TaskCreate = Static<typeof TaskCreateSchema>

/** POST /vendor/agency/{agencyId}/client (version 4.0). The First/Second person rule is checked in code. */
export const ClientCreateRequestSchema = Type.Object(
  {
    businessDetail: Type.Optional(ClientBusinessDetailSchema),
    contacts: Type.Optional(Type.Array(ContactCreateSchema, { maxItems: 5, description: 'at most 5 client-level contacts' })),
    log: LogCreateSchema,
    mailingAddress: Type.Optional(AddressCreateSchema),
    officeId: Type.Optional(Type.Integer({ minimum: 1, maximum: 32767, description: "office of the client (Int16); the agency's default office when absent" })),
    people: Type.Array(PersonCreateSchema, {
      minItems: 1,
      maxItems: 11,
      description: '1 to 11 people; exactly one with MainContactType First, at most one with Second'
    }),
    policy: Type.Optional(PolicyCreateSchema),
    source: Type.Optional(Type.String({ maxLength: 14 })),
    status: Type.Optional(enumeration(CLIENT_STATUSES, true, 'ClientStatus, in any case, or its number 0 to 3; Prospect when absent')),
    task: Type.Optional(TaskCreateSchema)
  },
  { additionalProperties: false, title: 'ClientCreateRequest' }
)
export type ClientCreateRequest = Static<typeof ClientCreateRequestSchema>

// ---------------------------------------------------------------------------------------------
// Version 1 log note
// ---------------------------------------------------------------------------------------------

export const SuspenseSchema = Type.Object(
  {
    category: Type.Optional(Type.String()),
    dueDate: DateTimeString,
    suspendedFor: agentRole(),
    suspendedForInitials: Type.Optional(Type.String({ maxLength: 3, description: "the user's 3-character username" }))
  },
  { additionalProperties: false, title: 'Suspense', description: 'version 1 follow-up for an agency user' }
)
export type Suspense = Static<typeof SuspenseSchema>

/** POST /vendor/agency/{agencyId}/client/{clientId} without version. */
export const V1LogNoteBodySchema = Type.Object(
  {
    action: logAction(),
    body: Type.String({ minLength: 1, maxLength: 3000, description: 'text of the log note, at most 3,000 characters' }),
    description: Type.String({ maxLength: 140, description: 'short description, at most 140 characters' }),
    policyIndex: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, description: "0-based position of the policy in the client's policies" })),
    refId: Guid,
    suspense: Type.Optional(SuspenseSchema),
    ts: DateTimeString
  },
  { additionalProperties: false, title: 'LogNoteV1', description: 'log note of version 1' }
)
export type V1LogNoteBody = Static<typeof V1LogNoteBodySchema>

// ---------------------------------------------------------------------------------------------
// Attachment headers (names lower-case, as Node hands them over)
// ---------------------------------------------------------------------------------------------

/** A LogAction sent as a header: the digits of 1..56. */
const LogActionHeader = Type.String({
  pattern: '^([1-9]|[1-4][0-9]|5[0-6])$',
  description: 'a LogAction number from 1 to 56 (seven channel groups of eight: 1 Phone, 9 Mail, 17 Walk In, 25 Online, 33 Email, 41 Text, 49 Chat)'
})
const b64 = (what: string) => Type.String({ description: `${what}, base64 of UTF-8 text` })

/**
 * Attachment metadata, versions 4.0 and 3.0. Base64 values are decoded in code, and the Task*
 * headers form one group whose rule (none, or all the required ones) is also checked in code.
 * Other HTTP headers are of course allowed.
 */
export const AttachmentHeadersSchema = Type.Object(
  {
    channel: LogActionHeader,
    desc: b64('description of the attachment'),
    fileext: Type.String({ description: 'file type, with or without a leading dot: pdf, jpg, jpeg, mp3, png, eml, msg' }),
    filename: b64('file name without its extension'),
    lognote: b64('text of the log note'),
    policyid: Type.Optional(Guid),
    refid: Guid,
    ts: DateTimeString,
    // an enumeration the binder canonicalises; the Task* group rule checks it (src/domain/attachments.ts)
    taskassignedto: Type.Optional(markEnumeration(Type.String({
      description: 'AgentRole of the task, in any case, or its number 0 to 5; any Task* header makes TaskAssignedTo, TaskDescription, TaskDueDate and TaskTitle required'
    }), AGENT_ROLES, true)),
    taskassignedtoemail: Type.Optional(Type.String({ description: 'email of an active agency user; required when TaskAssignedTo is SpecifiedUser' })),
    taskcategory: Type.Optional(b64('task category')),
    taskdescription: Type.Optional(b64('task description')),
    taskduedate: Type.Optional(markCalendar(Type.String({ description: 'ISO 8601 due date of the task, a real calendar date and time' }))),
    tasktitle: Type.Optional(b64('task title'))
  },
  { additionalProperties: true, title: 'AttachmentHeaders' }
)
export type AttachmentHeaders = Static<typeof AttachmentHeadersSchema>

/** Attachment metadata of version 1: all required except policyindex. */
export const V1AttachmentHeadersSchema = Type.Object(
  {
    action: LogActionHeader,
    desc: b64('description of the attachment'),
    fileext: Type.String({ description: 'file type, with or without a leading dot: png, pdf, txt, jpg, jpeg, mp3' }),
    filename: b64('file name without its extension'),
    logbody: b64('text of the log note'),
    logdescription: b64('description of the log note'),
    policyindex: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'a 0-based policy index (digits only)' })),
    refid: Guid,
    suspendedfor: agentRole(),
    suspendedforinitials: Type.String({ maxLength: 3, description: "the user's 3-character username" }),
    suspensecategory: b64('suspense category'),
    suspenseduedate: DateTimeString,
    ts: DateTimeString
  },
  { additionalProperties: true, title: 'V1AttachmentHeaders' }
)
export type V1AttachmentHeaders = Static<typeof V1AttachmentHeadersSchema>

/** Attachment file types accepted per version (lower-case, without a dot). */
export const ATTACHMENT_TYPES = {
  '4.0': ['pdf', 'jpg', 'jpeg', 'mp3', 'png', 'eml', 'msg'],
  '3.0': ['pdf', 'jpg', 'jpeg', 'mp3', 'png', 'eml', 'msg'],
  // eslint-disable-next-line @stylistic/quote-props -- '1' stays a string key, like the version it names
  '1': ['png', 'pdf', 'txt', 'jpg', 'jpeg', 'mp3']
} as const satisfies Record<'4.0' | '3.0' | '1', readonly string[]>
export type AttachmentVersion = keyof typeof ATTACHMENT_TYPES

/** The content type an attachment is served with, by its file type. */
export const MIME_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  mp3: 'audio/mpeg',
  eml: 'message/rfc822',
  msg: 'application/vnd.ms-outlook',
  txt: 'text/plain'
}
