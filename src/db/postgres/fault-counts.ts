import type pg from 'pg'

/** One rule's counts. */
export interface FaultCountRow {
  matched: number
  hits: number
  exhausted: boolean
}

/**
 * The counts of one world's fault rules in PostgreSQL (migrations/postgres/002-catalogue.sql):
 * each step one statement, which the row's lock orders among instances, so a rule with `times: 1`
 * affects one request whichever instance each arrives at.
 */
export class FaultCounts {
  constructor (private readonly pool: pg.Pool, private readonly worldId: string) {}

  /** Counts one match unless the rule is exhausted (undefined); its matches so far. */
  async match (ruleId: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ matched: string }>(
      `INSERT INTO world_fault_counts (world_id, rule_id, matched) VALUES ($1, $2, 1)
       ON CONFLICT (world_id, rule_id) DO UPDATE SET matched = world_fault_counts.matched + 1
       WHERE NOT world_fault_counts.exhausted
       RETURNING matched`,
      [this.worldId, ruleId]
    )
    return rows.length === 0 ? undefined : Number(rows[0].matched)
  }

  /** Counts one hit unless the rule is exhausted (undefined), exhausting it at `times`; its hits so far. */
  async hit (ruleId: string, times: number | undefined): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ hits: string }>(
      `UPDATE world_fault_counts SET hits = hits + 1, exhausted = ($3::bigint IS NOT NULL AND hits + 1 >= $3::bigint)
       WHERE world_id = $1 AND rule_id = $2 AND NOT exhausted
       RETURNING hits`,
      [this.worldId, ruleId, times ?? null]
    )
    return rows.length === 0 ? undefined : Number(rows[0].hits)
  }

  async all (): Promise<Map<string, FaultCountRow>> {
    const { rows } = await this.pool.query<{ rule_id: string, matched: string, hits: string, exhausted: boolean }>(
      'SELECT rule_id, matched, hits, exhausted FROM world_fault_counts WHERE world_id = $1', [this.worldId]
    )
    return new Map(rows.map((r) => [r.rule_id, { matched: Number(r.matched), hits: Number(r.hits), exhausted: r.exhausted }]))
  }
}
