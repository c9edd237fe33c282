import type pg from 'pg'

/**
 * Agreed settings: a name and a value every instance over one PostgreSQL database must share (a
 * setting instances could each take from their own environment, where two values would make them
 * answer differently: the key reports are signed with, the worlds' caps). The first instance that
 * has a value records it; every instance compares its own with the one recorded, at its start.
 * Only an administrator's explicit step (`record`) changes a recorded value.
 */

export interface AgreedSetting {
  name: string
  /** This instance's value (undefined: it has none, and records none, but must agree with one recorded). */
  value: string | undefined
}

export interface RecordedSetting {
  name: string
  value: string
  recordedAtMs: number
  recordedBy: string
}

/** The settings on which this instance and the recorded ones disagree: its own value, and the one recorded. */
export interface Disagreement {
  name: string
  mine: string | undefined
  recorded: RecordedSetting
}

/** Records the values no instance recorded yet, then answers where this instance's differ from the recorded ones. */
export async function agreeOnSettings (pool: pg.Pool, settings: readonly AgreedSetting[], instance: string, nowMs = Date.now()): Promise<Disagreement[]> {
  if (settings.length === 0) return []
  for (const { name, value } of settings) {
    if (value === undefined) continue
    // two instances starting at once: one insert wins, the other compares with it
    await pool.query('INSERT INTO sandbox_agreed_settings (name, value, recorded_at_ms, recorded_by) VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING',
      [name, value, nowMs, instance])
  }
  const recorded = await recordedSettings(pool, settings.map((s) => s.name))
  const disagreements: Disagreement[] = []
  for (const { name, value } of settings) {
    const row = recorded.get(name)
    if (row !== undefined && row.value !== value) disagreements.push({ name, mine: value, recorded: row })
  }
  return disagreements
}

/** The settings recorded under these names. */
export async function recordedSettings (pool: pg.Pool, names: readonly string[]): Promise<Map<string, RecordedSetting>> {
  const { rows } = await pool.query<{ name: string, value: string, recorded_at_ms: string, recorded_by: string }>(
    'SELECT name, value, recorded_at_ms, recorded_by FROM sandbox_agreed_settings WHERE name = ANY($1)', [names])
  return new Map(rows.map((r) => [r.name, { name: r.name, value: r.value, recordedAtMs: Number(r.recorded_at_ms), recordedBy: r.recorded_by }]))
}

/** The administrator's step: records this value in place of any recorded before; answers the one it replaced. */
export async function recordSetting (pool: pg.Pool, name: string, value: string, by: string, nowMs = Date.now()): Promise<RecordedSetting | undefined> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const before = (await client.query<{ value: string, recorded_at_ms: string, recorded_by: string }>(
      'SELECT value, recorded_at_ms, recorded_by FROM sandbox_agreed_settings WHERE name = $1 FOR UPDATE', [name])).rows[0]
    await client.query(`INSERT INTO sandbox_agreed_settings (name, value, recorded_at_ms, recorded_by) VALUES ($1, $2, $3, $4)
      ON CONFLICT (name) DO UPDATE SET value = excluded.value, recorded_at_ms = excluded.recorded_at_ms, recorded_by = excluded.recorded_by`, [name, value, nowMs, by])
    await client.query('COMMIT')
    return before === undefined ? undefined : { name, value: before.value, recordedAtMs: Number(before.recorded_at_ms), recordedBy: before.recorded_by }
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw e
  } finally {
    client.release()
  }
}
