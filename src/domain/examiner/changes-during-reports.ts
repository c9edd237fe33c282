import type { ClientVersion } from '../../db/clients.js'
import type { ClientsOf } from './report-runner.js'

/**
 * The clients changed while a report is computed. A report's records end when its job is made,
 * and the clients it compares are read after that (on the worker's request, in pages), so a
 * client changed in between is read in a state the session's log never held. Its modified time
 * does not tell: it can fall within the session (a simulator stamps a change when its tick
 * comes and makes it a moment later, and a stopped clock stamps everything at one instant). Such
 * a client is given to the report as changed after every horizon, so it is not judged.
 */
export class ChangesDuringReports {
  /** For each report being computed, the clients changed since its records end ("agencyId/clientNumber"). */
  private readonly reports = new Set<Set<string>>()

  /** A commit changed these clients ([agencyId, clientNumber]). */
  note (clients: ReadonlyArray<readonly [number, number]>): void {
    if (this.reports.size === 0) return
    for (const changed of this.reports) for (const [agencyId, clientNumber] of clients) changed.add(`${agencyId}/${clientNumber}`)
  }

  /**
   * Starts watching for one report whose records end now: its clients, with those changed since
   * marked, and `stop` once the report is computed.
   */
  watch (clientsOf: ClientsOf): { clientsOf: ClientsOf, stop: () => void } {
    const changed = new Set<string>()
    this.reports.add(changed)
    return {
      clientsOf: async (agencyId) => {
        const clients = await clientsOf(agencyId)
        if (changed.size === 0) return clients
        return clients.map((c): ClientVersion => changed.has(`${agencyId}/${c.clientNumber}`) ? { ...c, modifiedMs: Number.POSITIVE_INFINITY } : c)
      },
      stop: () => { this.reports.delete(changed) }
    }
  }
}
