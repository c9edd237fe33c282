import type { AttachmentCommand, LogNoteCommand, TaskCommand } from '../domain/writes.js'

/**
 * Version 1 writes mapped up to the 4.0 commands the domain speaks:
 * Action → channel, Body → note, Description kept as the note's description,
 * PolicyIndex → the policy's id, Suspense → the task.
 */

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
export function suspenseToTask(s: V1Suspense, title: string, description: string): TaskCommand {
  return {
    assignedToRole: s.suspendedFor,
    assignedToInitials: s.suspendedForInitials ?? '',
    ...(s.category === undefined ? {} : { category: s.category }),
    description,
    dueDate: s.dueDate,
    title
  }
}

export function fromV1LogNote(v1: V1LogNote, policyId: string | undefined): LogNoteCommand {
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

export function fromV1Attachment(v1: V1AttachmentFields, policyId: string | undefined, content: Buffer): AttachmentCommand {
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
