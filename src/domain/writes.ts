import { randomUUID } from 'node:crypto'
import type { AgencyRow, Repositories, WriteFilter, WriteKind, WriteRow } from '../db/index.js'
import { ApiError, clientNotFound, conflict, invalidField, notFound, validationFailed, type FieldError } from '../errors.js'
import type { Clock } from './clock.js'
import { parseTimestamp } from '../time.js'
import { sha256Hex as sha256 } from '../sha256.js'
import type { AttachmentCommand, LogNoteCommand, TaskCommand } from '../schemas/commands.js'
import { MIME_TYPES } from '../schemas/writes.js'

export type { AttachmentCommand, LogNoteCommand, TaskCommand } from '../schemas/commands.js'

/**
 * Log notes, attachments and receipts: validated against the client when received, then
 * applied at once (the agency is connected: 200) or kept pending (disconnected: 202) and
 * applied in arrival order when the agency reconnects. A repeated RefId is idempotent.
 */

export type Outcome = 'created' | 'saved'

export interface ReceiptCommand {
  refId: string
  channel: number
  logNote: string
  ts: string
  invoices?: { invoiceId: string; amount: number }[]
  officeId?: number
  payMethod?: string
  policyId?: string
  total: number
  task?: TaskCommand
}

export interface ReceiptAnswer {
  refId: string | null
  code: number
  message: string | null
}

/** Who sent a write, for the write listing. */
export interface Origin {
  integration: string
  apiVersion: string
}

export const OUTCOME_TEXT: Record<Outcome, string> = {
  created: 'Created',
  saved: 'Saved; it will be created when the agency next connects'
}

/** Stable JSON (sorted keys) for fingerprints: key order and casing of the request do not matter. */
function canonical (value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']'
  if (value !== null && typeof value === 'object') {
    return '{' + Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => JSON.stringify(k) + ':' + canonical((value as Record<string, unknown>)[k])).join(',') + '}'
  }
  return JSON.stringify(value)
}

/** What recording a write did: its outcome, and whether its RefId was used before (answered as then, nothing new kept). */
interface Recorded { outcome: Outcome; repeat: boolean }

/** Thrown inside a write's transaction to roll it back when its RefId was used before (nothing of it is kept). */
const REPEATED = Symbol('RefId used before')

const round2 = (n: number) => Math.round(n * 100) / 100

/**
 * `room`: throws (a 507) when the world cannot take this many bytes more: asked before a large
 * content is written, so that a world at its bound refuses it without the work of writing it (the
 * commit is checked again: worlds/world.ts).
 */
export function createWrites (repos: Pick<Repositories, 'agencies' | 'clients' | 'writes' | 'transaction'>, clock: Clock, room: (bytes: number) => void = () => {}) {
  /** The client a write targets: must exist and not be deleted. */
  function liveClient (agencyId: number, clientNumber: number) {
    const row = repos.clients.getClient(agencyId, clientNumber)
    if (row === undefined || row.deleted) throw clientNotFound(clientNumber)
    return row
  }

  /** The same check when nothing of the client is needed: its row is not read. */
  function checkLive (agencyId: number, clientNumber: number): void {
    if (!repos.clients.isLiveClient(agencyId, clientNumber)) throw clientNotFound(clientNumber)
  }

  /** A write with field errors is refused: with a 404 when its client is not there (that answer comes first), else a 400. */
  function refuseInvalid (agencyId: number, clientNumber: number, errors: FieldError[]): void {
    if (errors.length === 0) return
    checkLive(agencyId, clientNumber)
    throw validationFailed(errors)
  }

  /** Moves the client's details.modified to now (every applied write does). */
  function touch (agencyId: number, clientNumber: number, at: string): void {
    repos.clients.touchClient(agencyId, clientNumber, at, Date.parse(at))
  }

  function checkPolicy (agencyId: number, clientNumber: number, policyId: string | undefined, field: string, errors: FieldError[]) {
    if (policyId === undefined) return
    const known = repos.clients.listClientPolicies(agencyId, clientNumber).some((p) => p.policyId.toLowerCase() === policyId.toLowerCase())
    if (!known) errors.push({ field, message: `${policyId} is not a policy of client ${clientNumber}` })
  }

  /** Timestamps that have the right shape but are no real instant (month 13, 25 o'clock). */
  function checkTimes (times: [string, string | undefined][], errors: FieldError[]) {
    for (const [field, value] of times) {
      if (value !== undefined && parseTimestamp(value) === null) errors.push({ field, message: `'${value}' is not a real date and time` })
    }
  }

  /** A task's assignee: SpecifiedUser needs the email of an active agency user. */
  function checkTask (agencyId: number, task: TaskCommand | undefined, prefix: string, errors: FieldError[]) {
    if (task === undefined) return
    if (task.assignedToRole !== 'SpecifiedUser') return
    if (task.assignedToInitials !== undefined) {
      // Version 1: the suspense names its user by initials (the 3-letter username).
      const field = prefix === 'Task' ? 'SuspendedForInitials' : 'Suspense.SuspendedForInitials'
      const initials = task.assignedToInitials.trim()
      if (initials === '') errors.push({ field, message: 'is required when SuspendedFor is SpecifiedUser' })
      else if (!repos.agencies.listActiveUsers(agencyId).some((u) => u.username.toLowerCase() === initials.toLowerCase())) {
        errors.push({ field, message: `${initials} is not the username of an active user of this agency` })
      }
      return
    }
    const email = task.assignedToEmail?.trim()
    if (email === undefined || email === '') {
      errors.push({ field: `${prefix}AssignedToEmail`, message: 'is required when AssignedToRole is SpecifiedUser' })
    } else if (!repos.agencies.listActiveUsers(agencyId).some((u) => u.email?.toLowerCase() === email.toLowerCase())) {
      errors.push({ field: `${prefix}AssignedToEmail`, message: `${email} is not the email of an active user of this agency (see GET /vendor/agency/{agencyId}/users)` })
    }
  }

  /**
   * Records one write: the same RefId again answers as before (409 when the body differs);
   * otherwise it is applied now, or kept pending while the agency is disconnected. The client must
   * be live: its check is the write that moves its `modified` (or, pending, a read), and a RefId
   * used before is told by the insert itself, so a new write reads nothing first. The order of the
   * answers stays: the client (404), the RefId (200 or 409), the world's room (507).
   */
  function record (agency: AgencyRow, clientNumber: number, kind: WriteKind, refId: string, data: Record<string, unknown>,
    origin: Origin, content?: { bytes: Buffer, sha256: string }): Recorded {
    const fingerprint = sha256(canonical({ clientNumber, data, content: content === undefined ? null : content.sha256 }))
    const now = clock.iso()
    const applied = agency.connected
    // a read before the insert in the transaction could not wait for the lock of another writer of the file
    if (!applied) checkLive(agency.agencyId, clientNumber)
    try {
      repos.transaction(() => {
        const seq = repos.writes.insertNewWrite({
          agencyId: agency.agencyId,
          clientNumber,
          kind,
          refId,
          integration: origin.integration,
          apiVersion: origin.apiVersion,
          status: applied ? 'applied' : 'pending',
          fingerprint,
          receivedAt: now,
          appliedAt: applied ? now : null,
          data
        })
        if (seq === undefined) throw REPEATED
        if (applied && !repos.clients.touchLiveClient(agency.agencyId, clientNumber, now, Date.parse(now))) throw clientNotFound(clientNumber)
        if (content !== undefined) {
          room(content.bytes.length)
          repos.writes.insertContent(seq, content.bytes)
        }
      })
    } catch (e) {
      if (e !== REPEATED) throw e
      // rolled back, having written nothing: answered as the first time
      checkLive(agency.agencyId, clientNumber)
      const existing = repos.writes.getWrite(agency.agencyId, kind, refId)
      if (existing === undefined) throw new Error(`the write ${kind} ${refId} of agency ${agency.agencyId} was there and is not`)
      if (existing.fingerprint !== fingerprint) {
        throw conflict(`RefId ${refId} was already used for a different ${kind === 'log' ? 'log note' : kind}; use a new RefId for a new ${kind === 'log' ? 'log note' : kind}`)
      }
      return { outcome: existing.status === 'applied' ? 'created' : 'saved', repeat: true }
    }
    return { outcome: applied ? 'created' : 'saved', repeat: false }
  }

  return {
    logNote (agency: AgencyRow, clientNumber: number, cmd: LogNoteCommand, origin: Origin): Outcome {
      const errors: FieldError[] = []
      checkTimes([['TS', cmd.ts], ['Task.DueDate', cmd.task?.dueDate]], errors)
      checkPolicy(agency.agencyId, clientNumber, cmd.policyId, 'PolicyId', errors)
      checkTask(agency.agencyId, cmd.task, 'Task.', errors)
      refuseInvalid(agency.agencyId, clientNumber, errors)
      const { refId, ...data } = cmd
      return record(agency, clientNumber, 'log', refId, data, origin).outcome
    },

    /**
     * Throws the 507 an attachment of `bytes` would answer as the world stands (a RefId already
     * used answers as before, whatever the world holds): asked before its digest is computed.
     */
    checkRoom (agencyId: number, refId: string, bytes: number): void {
      if (repos.writes.getWrite(agencyId, 'attachment', refId) === undefined) room(bytes)
    },

    /** `contentSha256`: the content's SHA-256 (hex) when it was computed away from the event loop (attachments.ts). */
    attachment (agency: AgencyRow, clientNumber: number, cmd: AttachmentCommand, origin: Origin, contentSha256?: string): Outcome {
      const errors: FieldError[] = []
      checkTimes([['TS', cmd.ts], ['TaskDueDate', cmd.task?.dueDate]], errors)
      checkPolicy(agency.agencyId, clientNumber, cmd.policyId, 'PolicyId', errors)
      checkTask(agency.agencyId, cmd.task, 'Task', errors)
      refuseInvalid(agency.agencyId, clientNumber, errors)
      const { refId, content, ...rest } = cmd
      const digest = contentSha256 ?? sha256(content)
      const data = { ...rest, size: content.length, sha256: digest, contentType: MIME_TYPES[cmd.fileExt] ?? 'application/octet-stream' }
      return record(agency, clientNumber, 'attachment', refId, data, origin, { bytes: content, sha256: digest }).outcome
    },

    /**
     * Receipts, each checked alone: `invalid` holds the schema errors of each item (by index).
     * Valid items are recorded even when others fail.
     */
    receipts (agency: AgencyRow, clientNumber: number, items: (ReceiptCommand | FieldError[])[], origin: Origin): { outcome: Outcome; answers: ReceiptAnswer[] } {
      const client = liveClient(agency.agencyId, clientNumber)
      const invoices = new Map(
        (JSON.parse(client.invoices) as { id: string; balance?: number }[]).map((i) => [i.id.toLowerCase(), i])
      )
      const offices = new Set(repos.agencies.listOffices(agency.agencyId).map((o) => o.officeId))
      const seen = new Set<string>()
      // One transaction for the request: each valid item is recorded, nothing half-written.
      const answers = repos.transaction(() => items.map((item): ReceiptAnswer => {
        if (Array.isArray(item)) return { refId: null, code: 400, message: item.map((e) => `${e.field}: ${e.message}`).join('; ') }
        const errors: FieldError[] = []
        if (seen.has(item.refId.toLowerCase())) errors.push({ field: 'RefId', message: 'repeats the RefId of an earlier receipt in this request' })
        seen.add(item.refId.toLowerCase())
        checkTimes([['TS', item.ts], ['Task.DueDate', item.task?.dueDate]], errors)
        checkPolicy(agency.agencyId, clientNumber, item.policyId, 'PolicyId', errors)
        checkTask(agency.agencyId, item.task, 'Task.', errors)
        ;(item.invoices ?? []).forEach((inv, i) => {
          if (!invoices.has(inv.invoiceId.toLowerCase())) {
            errors.push({ field: `Invoices[${i}].InvoiceId`, message: `${inv.invoiceId} is not an open invoice of client ${clientNumber}` })
          }
        })
        // without invoices the payment is recorded unapplied; with them, the total is their sum
        if ((item.invoices ?? []).length > 0) {
          const sum = round2((item.invoices ?? []).reduce((s, inv) => s + inv.amount, 0))
          if (round2(item.total) !== sum) errors.push({ field: 'Total', message: `must equal the sum of the invoice amounts (${sum})` })
        }
        if (item.officeId !== undefined && !offices.has(item.officeId)) {
          errors.push({ field: 'OfficeId', message: `office ${item.officeId} is not an office of this agency` })
        }
        if (errors.length > 0) return { refId: item.refId, code: 400, message: errors.map((e) => `${e.field}: ${e.message}`).join('; ') }
        const { refId, ...rest } = item
        const data = { ...rest, payMethod: item.payMethod ?? 'Other', officeId: item.officeId ?? client.officeId }
        let repeat: boolean
        try {
          repeat = record(agency, clientNumber, 'receipt', refId, data, origin).repeat
        } catch (e) {
          if (e instanceof ApiError && e.status === 409) return { refId, code: 409, message: e.detail }
          throw e
        }
        return repeat ? { refId, code: 200, message: 'duplicate refId; already recorded' } : { refId, code: 200, message: null }
      }))
      return { outcome: agency.connected ? 'created' : 'saved', answers }
    },

    /** Applies the agency's pending writes in arrival order; returns how many. */
    applyPending (agencyId: number): number {
      return repos.transaction(() => {
        const pending = repos.writes.listWrites(agencyId, { status: 'pending' })
        for (const w of pending) {
          const now = clock.iso()
          repos.writes.markApplied(w.seq, now)
          touch(agencyId, w.clientNumber, now)
        }
        return pending.length
      })
    },

    list: (agencyId: number, filter: WriteFilter): WriteRow[] => repos.writes.listWrites(agencyId, filter),

    /** The id of the client's policy at a 0-based index (version 1 PolicyIndex). */
    policyIdAt (agencyId: number, clientNumber: number, index: number, field = 'PolicyIndex'): string {
      liveClient(agencyId, clientNumber)
      const policy = repos.clients.listClientPolicies(agencyId, clientNumber).find((p) => p.policyIndex === index)
      if (policy === undefined) throw invalidField(field, `client ${clientNumber} has no policy at index ${index}`)
      return policy.policyId
    },

    /** The stored bytes of an attachment and how to serve them. */
    attachmentContent (agencyId: number, refId: string): { content: Buffer; contentType: string; fileName: string } {
      const w = repos.writes.getWrite(agencyId, 'attachment', refId)
      const content = w === undefined ? undefined : repos.writes.getContent(w.seq)
      if (w === undefined || content === undefined) throw notFound(`No attachment with RefId ${refId} in agency ${agencyId}`)
      // the type and name an upload stores, derived again: a database seeded before fixtures were checked may hold others
      const ext = typeof w.data.fileExt === 'string' && Object.hasOwn(MIME_TYPES, w.data.fileExt) ? w.data.fileExt : undefined
      const name = typeof w.data.fileName === 'string' ? w.data.fileName : ''
      return { content, contentType: ext === undefined ? 'application/octet-stream' : MIME_TYPES[ext], fileName: ext === undefined ? name : `${name}.${ext}` }
    },

    newRefId: () => randomUUID()
  }
}

export type Writes = ReturnType<typeof createWrites>
