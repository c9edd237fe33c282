/**
 * Hosted mode, a COMMIT whose answer is lost (src/db/postgres/outcomes.ts): a proxy between the
 * instance and PostgreSQL drops the connection right after forwarding a COMMIT (the server
 * commits, the instance never hears it), or right before (nothing is applied), or forwards it and
 * the server freezes; for a world's append (one statement, committed at its Sync), the same at
 * that Sync. The instance learns the outcome from a new connection before it answers:
 * 200 when the write is there, 503 "nothing was applied" only when it is not, and 503 "outcome
 * unknown" when it cannot learn in time. A 503 that says nothing was applied is never followed
 * by the write being there. The same for a world created (the catalogue).
 */
import t from 'tap'
import { startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { withoutPostgres, sleep } from '../helpers/hosted.js'
import { PgProxy, type LostCommit } from '../helpers/pg-proxy.js'
import { serveProcess, type Served } from '../helpers/process.js'
import { createClientBody } from '../helpers/writes.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }
const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' }
const APPEND = /INSERT INTO world_log/
const WORLD_ADDED = /INSERT INTO sandbox_worlds/

t.setTimeout(300_000)

t.test('a COMMIT whose answer is lost is resolved before the answer', { skip: withoutPostgres, timeout: 240_000 }, async (t) => {
  const postgres: ScratchPostgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  const proxy = new PgProxy(postgres.port)
  const url = await proxy.listen()
  t.teardown(async () => await proxy.close())
  // 1 s for a statement: a frozen server is given up 1.5 s after the COMMIT, then 2 s to learn the outcome
  const served: Served = await serveProcess({ SANDBOX_DATABASE_URL: url, SANDBOX_DB: ':memory:', SANDBOX_PG_STATEMENT_TIMEOUT_MS: '1000' })
  t.teardown(() => served.child.kill('SIGKILL'))
  const base = served.url

  const createClient = async () => {
    const res = await fetch(`${base}/vendor/agency/1001/client?version=4.0`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(createClientBody()) })
    const text = await res.text()
    return { status: res.status, retryAfter: res.headers.get('retry-after'), text, clientNumber: res.status === 200 ? (JSON.parse(text) as { clientNumber: number }).clientNumber : undefined }
  }
  const clientThere = async (n: number) => (await fetch(`${base}/vendor/agency/1001/client/${n}?version=4.0`, { headers: AUTH })).status === 200
  /** Creates clients until one is acknowledged (the instance may answer 503 while it recovers): its number. */
  const acknowledged = async (): Promise<number> => {
    for (let i = 0; i < 40; i++) {
      const answer = await createClient()
      if (answer.clientNumber !== undefined) return answer.clientNumber
      await sleep(250)
    }
    throw new Error('no create client acknowledged')
  }
  const lose = async <T>(action: LostCommit, pattern: RegExp, request: () => Promise<T>): Promise<T> => {
    proxy.arm(pattern, action, action === 'hold-after' ? () => postgres.freeze() : undefined, pattern === APPEND ? 'sync' : 'commit')
    const fired = proxy.fired
    const answer = await request()
    t.equal(proxy.fired, fired + 1, `the proxy lost the COMMIT's answer (${action})`)
    if (action === 'hold-after') postgres.thaw()
    return answer
  }

  await t.test('partner writes: applied, not applied, unknown', async (t) => {
    const first = await acknowledged()

    const applied = await lose('drop-after', APPEND, createClient)
    t.equal(applied.status, 200, `the COMMIT reached the server: answered as applied (${applied.text})`)
    t.equal(applied.clientNumber, first + 1)
    t.ok(await clientThere(first + 1), 'and the client is there')

    const refused = await lose('drop-before', APPEND, createClient)
    t.equal(refused.status, 503, 'the COMMIT never reached the server: 503')
    t.match(refused.text, /Nothing was applied/, 'saying nothing was applied')
    t.equal(refused.retryAfter, '1')
    const next = await acknowledged()
    t.equal(next, first + 2, 'which is true: the next client takes the number the refused one would have had')

    const unknown = await lose('hold-after', APPEND, createClient)
    t.equal(unknown.status, 503, 'the server froze after the COMMIT: 503')
    t.match(unknown.text, /outcome unknown; the client may have been created: look for it before creating it again/, 'saying the outcome is unknown, and what to look for')
    t.notMatch(unknown.text, /Nothing was applied/i)
    t.equal(unknown.retryAfter, '1')
    // the answer was unknown: the write may or may not be there (an append is one statement, which
    // the server may still commit when it resumes, or cancel, its statement_timeout passed), and
    // the next client's number says the same
    let seen = false
    for (let i = 0; i < 40 && !seen; i++) {
      seen = await clientThere(next)
      if (!seen) await sleep(250)
    }
    t.ok(seen, 'the world answers again once the server resumes, with every acknowledged write')
    const held = await clientThere(next + 1)
    t.comment(held ? 'the write held by the freeze was applied' : 'the write held by the freeze was not applied')
    t.equal(await acknowledged(), held ? next + 2 : next + 1, 'the next client follows what is there')
  })

  await t.test('a world created (the catalogue): applied, not applied', async (t) => {
    const create = async () => {
      const res = await fetch(`${base}/_sandbox/worlds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'lost answer' }) })
      return { status: res.status, text: await res.text() }
    }
    const listed = async () => ((await (await fetch(`${base}/_sandbox/worlds`)).json()) as { worlds: Array<{ id: string }> }).worlds.map((w) => w.id)

    const applied = await lose('drop-after', WORLD_ADDED, create)
    t.equal(applied.status, 201, `created: answered as created (${applied.text.slice(0, 200)})`)
    const { id } = JSON.parse(applied.text) as { id: string }
    t.ok((await listed()).includes(id), 'and it is listed')

    const before = (await listed()).length
    const refused = await lose('drop-before', WORLD_ADDED, create)
    t.equal(refused.status, 503)
    t.match(refused.text, /Nothing was applied/)
    t.equal((await listed()).length, before, 'and no world was added')
  })

  await t.test('the metrics count the outcomes learnt after a lost answer', async (t) => {
    const text = await (await fetch(`${base}/_sandbox/metrics`)).text()
    const count = (outcome: string) => Number(new RegExp(`sandbox_pg_commits_total\\{kind="world",outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1])
    t.equal(count('found_after_lost_answer'), 1, 'the append whose answer was dropped after it: found')
    // the one held by the freeze: learnt absent when the server resumed in time (its statement cancelled), else unknown
    t.equal(count('absent_after_lost_answer') + count('unknown'), 2, 'the other two: absent, or unknown')
    t.ok(count('absent_after_lost_answer') >= 1, 'the one dropped before it: absent')
    t.match(text, /sandbox_pg_commits_total\{kind="catalogue",outcome="found_after_lost_answer"\} 1/)
    t.match(text, /sandbox_pg_commits_total\{kind="catalogue",outcome="absent_after_lost_answer"\} 1/)
  })
})
