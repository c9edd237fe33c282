/**
 * What a write asks of the domain, in the 4.0 terms the domain speaks: each version's request
 * (body and headers) is mapped to one of these by src/versions/, and the domain applies it.
 * Plain types: the wire's validation lives in the TypeBox schemas of writes.ts.
 */

export interface TaskCommand {
  assignedToRole: string
  assignedToEmail?: string
  /** Version 1 suspenses name the user by initials (the 3-letter username). */
  assignedToInitials?: string
  category?: string
  description: string
  dueDate: string
  title: string
}

export interface LogNoteCommand {
  refId: string
  channel: number
  note: string
  ts: string
  policyId?: string
  /** Version 1 only: the log note's short description. */
  description?: string
  task?: TaskCommand
}

export interface AttachmentCommand {
  refId: string
  channel: number
  ts: string
  description: string
  fileName: string
  fileExt: string
  logNote: string
  /** Version 1 only: the log note's short description. */
  logDescription?: string
  policyId?: string
  task?: TaskCommand
  content: Buffer
}
