/**
 * Hosted mode's lock order, over a real PostgreSQL (src/db/postgres/catalogue.ts, owners.ts): a
 * world's row in world_owners is locked before its row in sandbox_worlds, and several worlds' rows
 * in the order of their ids. A tenant or a world deleted while its owner renews its leases waits
 * for the renewal instead of deadlocking with it (PostgreSQL then cancels one of the two: a DELETE
 * of a tenant answered 503 and its worlds stayed).
 */
import t from 'tap'
import pg from 'pg'
import { Catalogue, type WorldRow } from '../../src/db/postgres/catalogue.js'
import { Owners } from '../../src/db/postgres/owners.js'
import { migratedPostgres, sleep, withoutPostgres } from '../helpers/hosted.js'

const LEASE_MS = 60_000

const worldRow = (id: string, tenantId: string): WorldRow => ({
  id, name: id, tenantId, tokenKey: `key-${id}`, source: 'empty', ttlMs: 0, createdAtMs: 1, lastUsedMs: 1, maxBytes: undefined, ownSecrets: false
})

t.test('the catalogue and the owners lock in one order', { skip: withoutPostgres }, async (t) => {
  const { postgres, pool } = await migratedPostgres(t)
  const catalogue = new Catalogue(pool)
  const owners = new Owners(pool, 'x', LEASE_MS)
  const addTenant = async (tenantId: string, worldIds: string[]) => {
    await catalogue.change(async (change) => {
      await change.addTenant({ id: tenantId, name: tenantId, maxWorlds: 10, createdAtMs: 1, tokenKey: `key-${tenantId}` })
      for (const id of worldIds) await change.addWorld(worldRow(id, tenantId), Buffer.from('{}'), '{}')
      return { changed: true, result: undefined }
    })
    for (const id of worldIds) t.match(await owners.claim(id, 'http://x'), { mine: true })
  }
  /** Another connection, holding its transaction open between steps. */
  const connection = async () => {
    const client = new pg.Client({ connectionString: postgres.url })
    await client.connect()
    t.teardown(async () => await client.end())
    return client
  }
  /** Until some statement waits for a row lock (the step under test has reached its wait). */
  const someoneWaits = async () => {
    for (let i = 0; i < 200; i++) {
      const { rows } = await pool.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
      if (rows.length > 0) return
      await sleep(10)
    }
    throw new Error('nothing waited for a lock')
  }
  const remaining = async (table: string, ids: string[]) =>
    Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE world_id = ANY($1)`, [ids])).rows[0].n)

  await t.test('a tenant deleted while its owner renews: the delete waits, both are applied', async (t) => {
    await addTenant('t1', ['w-a', 'w-b'])
    // a renewal's order: the owner's row first, then the world's row (its last use)
    const renewer = await connection()
    await renewer.query('BEGIN')
    await renewer.query("UPDATE world_owners SET expires_at = now() + interval '1 minute' WHERE world_id = 'w-a'")
    const deleting = catalogue.change(async (change) => ({ changed: true, result: await change.deleteTenant('t1') }))
    await someoneWaits()
    await renewer.query("UPDATE sandbox_worlds SET last_used_ms = 2 WHERE world_id = 'w-a'")
    await renewer.query('COMMIT')
    t.equal((await deleting).result, true, 'the tenant was deleted once the renewal committed')
    for (const table of ['sandbox_worlds', 'world_owners', 'world_log']) t.equal(await remaining(table, ['w-a', 'w-b']), 0, `nothing of its worlds is left in ${table}`)
  })

  await t.test('a renewal while worlds are deleted: it waits at the first world it shares, in the order of ids', async (t) => {
    await addTenant('t2', ['w-c', 'w-d'])
    // a deletion's order: the owners' rows by id
    const deleter = await connection()
    await deleter.query('BEGIN')
    await deleter.query("SELECT 1 FROM world_owners WHERE world_id = 'w-c' FOR UPDATE")
    const renewing = owners.renew(['w-d', 'w-c'].map((worldId) => ({ worldId, epoch: 1, facts: null, lastUsedMs: 5 })))
    await someoneWaits()
    await deleter.query("SELECT 1 FROM world_owners WHERE world_id = 'w-d' FOR UPDATE")
    await deleter.query('COMMIT')
    t.same([...await renewing].sort(), ['w-c', 'w-d'], 'both leases renewed once the other transaction ended')
  })
})
