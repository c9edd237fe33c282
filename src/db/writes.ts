import type { UnitOfWork } from './unit-of-work.js'

/** Writes partners sent (log notes, attachments with their bytes, receipts, created clients). */

export type WriteKind = 'log' | 'attachment' | 'receipt' | 'client'
export type WriteStatus = 'pending' | 'applied'

export interface WriteRow {
  seq: number
  agencyId: number
  clientNumber: number
  kind: WriteKind
  refId: string
  integration: string
  apiVersion: string
  status: WriteStatus
  fingerprint: string
  receivedAt: string
  appliedAt: string | null
  data: Record<string, unknown>
}

export interface WriteFilter {
  kind?: WriteKind
  status?: WriteStatus
  clientNumber?: number
}

interface RawWrite {
  seq: number;
  agency_id: number;
  client_number: number;
  kind: string;
  ref_id: string;
  integration: string
  api_version: string;
  status: string;
  fingerprint: string;
  received_at: string;
  applied_at: string | null;
  data: string
}
const toWrite = (r: RawWrite): WriteRow => ({
  seq: r.seq,
  agencyId: r.agency_id,
  clientNumber: r.client_number,
  kind: r.kind as WriteKind,
  refId: r.ref_id,
  integration: r.integration,
  apiVersion: r.api_version,
  status: r.status as WriteStatus,
  fingerprint: r.fingerprint,
  receivedAt: r.received_at,
  appliedAt: r.applied_at,
  data: JSON.parse(r.data) as Record<string, unknown>
})

type FilterParams = { agencyId: number; kind: string | null; status: string | null; clientNumber: number | null }

export function createWriteRepository (sql: UnitOfWork) {
  const byRef = sql.query<[number, string, string], RawWrite>('SELECT * FROM writes WHERE agency_id = ? AND kind = ? AND ref_id = ?')
  const filtered = sql.query<FilterParams, RawWrite>(
    `SELECT * FROM writes WHERE agency_id = @agencyId
       AND (@kind IS NULL OR kind = @kind) AND (@status IS NULL OR status = @status)
       AND (@clientNumber IS NULL OR client_number = @clientNumber)
     ORDER BY seq`
  )
  const all = sql.query<[], RawWrite>('SELECT * FROM writes ORDER BY seq')
  const counts = sql.query<[], { pending: number | null; applied: number | null }>(
    "SELECT sum(status = 'pending') AS pending, sum(status = 'applied') AS applied FROM writes"
  )
  type InsertParams = [agencyId: number, clientNumber: number, kind: WriteKind, refId: string, integration: string, apiVersion: string,
    status: WriteStatus, fingerprint: string, receivedAt: string, appliedAt: string | null, data: string]
  // parameters by position, in the order of the columns: binding by name looks each one up in an object, on every write
  const INSERT = `INSERT INTO writes (agency_id, client_number, kind, ref_id, integration, api_version, status, fingerprint, received_at, applied_at, data)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  const insertParams = (w: Omit<WriteRow, 'seq'>): InsertParams =>
    [w.agencyId, w.clientNumber, w.kind, w.refId, w.integration, w.apiVersion, w.status, w.fingerprint, w.receivedAt, w.appliedAt, JSON.stringify(w.data)]
  const insert = sql.command<InsertParams>(INSERT)
  // the same, unless the agency already has a write of this kind and RefId: the unique key's own
  // lookup answers that, so a new write costs no separate query of the RefId
  const insertNew = sql.command<InsertParams>(`${INSERT} ON CONFLICT (agency_id, kind, ref_id) DO NOTHING`)
  const markApplied = sql.command<[string, number]>("UPDATE writes SET status = 'applied', applied_at = ? WHERE seq = ?")
  const insertContent = sql.command<[number, Buffer]>('INSERT INTO attachment_content (write_seq, content) VALUES (?, ?)')
  const content = sql.query<[number], { content: Buffer }>('SELECT content FROM attachment_content WHERE write_seq = ?')

  return {
    getWrite (agencyId: number, kind: WriteKind, refId: string): WriteRow | undefined {
      const r = byRef.get(agencyId, kind, refId)
      return r === undefined ? undefined : toWrite(r)
    },
    /** Inserts a write; returns its sequence number (arrival order). */
    insertWrite: (w: Omit<WriteRow, 'seq'>): number => Number(insert.run(...insertParams(w)).lastInsertRowid),
    /** Inserts a write unless its agency has one of this kind and RefId; returns its sequence number, or undefined when it was not inserted. */
    insertNewWrite (w: Omit<WriteRow, 'seq'>): number | undefined {
      const result = insertNew.run(...insertParams(w))
      return result.changes === 0 ? undefined : Number(result.lastInsertRowid)
    },
    listWrites: (agencyId: number, f: WriteFilter = {}): WriteRow[] =>
      filtered.all({ agencyId, kind: f.kind ?? null, status: f.status ?? null, clientNumber: f.clientNumber ?? null }).map(toWrite),
    listAllWrites: (): WriteRow[] => all.all().map(toWrite),
    markApplied: (seq: number, at: string): void => { markApplied.run(at, seq) },
    countWrites (): { pending: number; applied: number } {
      const r = counts.get()
      return { pending: r?.pending ?? 0, applied: r?.applied ?? 0 }
    },
    insertContent: (seq: number, bytes: Buffer): void => { insertContent.run(seq, bytes) },
    getContent: (seq: number): Buffer | undefined => content.get(seq)?.content
  }
}

export type WriteRepository = ReturnType<typeof createWriteRepository>
