import { conflict, notFound } from '../../errors.js'
import type { Session } from '../../schemas/examiner.js'
import type { RequestRecord } from './codec.js'
import { CLIENT_CHANGED } from './records.js'

/** What the examiner (sessions.ts) decides: how a session is shown, which changes a commit logs, and when a mirror is refused. */

/** Sessions open at once in one world; one more is a 409 (end or delete the ones a failed run left open). */
export const MAX_OPEN_SESSIONS = 1000
/** Agencies one session may declare mirrors of; one more is a 409. */
export const MAX_MIRRORS_PER_SESSION = 20

/** What ended a session: asked to (`end`), or its world's reset (`reset`). */
export type EndedBy = 'end' | 'reset'

/** The 409 of a world with MAX_OPEN_SESSIONS open. */
export const tooManyOpen = (open: number) =>
  conflict(`This world has ${open} open sessions, its most; end (POST /_sandbox/sessions/{id}/end) or delete the sessions a failed run left open, or reset the world, which ends them`)

/** A session as the control plane shows it. */
export function sessionView (row: { id: number, name: string, clientId: string | null, startedMs: number, endedMs: number | null, endedBy: string | null },
  count: { recorded: number, capped: boolean }): Session {
  return {
    id: row.id,
    name: row.name,
    clientId: row.clientId,
    startedAt: new Date(row.startedMs).toISOString(),
    ...(row.endedMs === null ? {} : { endedAt: new Date(row.endedMs).toISOString() }),
    ...(row.endedBy === null ? {} : { endedBy: row.endedBy as EndedBy }),
    recorded: count.recorded,
    capped: count.capped
  }
}

/** The clients a commit changed, as the records logged among the requests: one per client, counted by no session. */
export function changeRecords (clients: ReadonlyArray<readonly [number, number]>, atMs: number, realMs: number): RequestRecord[] {
  const urls = new Set(clients.map(([agencyId, clientNumber]) => `/vendor/agency/${agencyId}/client/${clientNumber}`))
  return [...urls].map((url) => ({ atMs, realMs, elapsedMs: 0, method: 'CHANGE', url, operation: CLIENT_CHANGED, status: 0, journalId: 0 }))
}

/** Refuses a mirror of an ended session, of an agency the world lacks, or of one agency more than the session's most. */
export function checkMirror (session: { id: number, ended: boolean }, agencyId: number, agencyExists: boolean, mirrored: readonly number[]): void {
  if (session.ended) throw conflict(`Session ${session.id} has ended: its report is the one it ended with. Post mirrors before ending the session`)
  if (!agencyExists) throw notFound(`No agency ${agencyId} in this world; a mirror is of an agency the integration syncs`)
  if (!mirrored.includes(agencyId) && mirrored.length >= MAX_MIRRORS_PER_SESSION) {
    throw conflict(`Session ${session.id} has mirrors of ${mirrored.length} agencies, its most (${MAX_MIRRORS_PER_SESSION}); post again for one of them to replace it`)
  }
}

/** The 409 of a session that ended while its mirror was read. */
export const endedWhileRead = (id: number) => conflict(`Session ${id} ended while its mirror was read`)

/**
 * The Client Ids the open sessions of a world take, with how many sessions take each (null: every
 * Client Id): asked on every partner request while sessions are open, so it is two lookups.
 */
export class WantedClients {
  private all = 0
  private readonly byClient = new Map<string, number>()

  /** True while some session takes requests. */
  get any (): boolean {
    return this.all > 0 || this.byClient.size > 0
  }

  wants (clientId: string | null | undefined): boolean {
    return this.all > 0 || (clientId !== null && clientId !== undefined && this.byClient.has(clientId))
  }

  /** One session more (1) or fewer (-1) takes this Client Id. */
  change (clientId: string | null, delta: 1 | -1): void {
    if (clientId === null) {
      this.all += delta
      return
    }
    const n = (this.byClient.get(clientId) ?? 0) + delta
    if (n > 0) this.byClient.set(clientId, n)
    else this.byClient.delete(clientId)
  }
}
