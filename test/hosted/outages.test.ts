/**
 * Hosted mode while PostgreSQL is away: stopped for 10 s, then frozen for 10 s (its processes
 * stopped, its connections open and silent), under reads and writes sent through two instances.
 * Every request is answered (503 with Retry-After while a write cannot reach the log, or while a
 * lease cannot be renewed), none hangs; once PostgreSQL is back the world answers again, and the
 * ledger holds: every acknowledged write there once, none answered "nothing was applied" there.
 */
import t from 'tap'
import { hostedInstances, sleep, withoutPostgres } from '../helpers/hosted.js'
import { audit, newLedger, writer, type Ledger } from '../../bench/ledger.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }

t.setTimeout(300_000)

t.test('PostgreSQL away under reads and writes', { timeout: 280_000, skip: withoutPostgres }, async (t) => {
  const cluster = hostedInstances(t)
  await cluster.ready()
  const [a, b] = await Promise.all([cluster.start(), cluster.start()])
  const urls = () => [a.url, b.url]

  /** Reads of a client through both instances, each answer noted as the writers note theirs. */
  const reader = async (ledger: Ledger, run: { stop: boolean }) => {
    for (let i = 0; !run.stop; i++) {
      const began = Date.now()
      try {
        const answer = await fetch(`${urls()[i % 2]}/vendor/agency/1001/client/1001?version=4.0`, { headers: AUTH, signal: AbortSignal.timeout(8000) })
        await answer.arrayBuffer()
        ledger.answers.push({ status: answer.status, ms: Date.now() - began, retryAfter: answer.headers.get('retry-after'), atMs: began })
      } catch (e) {
        ledger.answers.push({ status: (e as Error).name === 'TimeoutError' ? -1 : 0, ms: Date.now() - began, retryAfter: null, atMs: began })
      }
      await sleep(20)
    }
  }

  for (const [how, away, back] of [
    ['stopped', () => cluster.postgres().stop(), () => cluster.postgres().start()],
    ['frozen', () => cluster.postgres().freeze(), () => cluster.postgres().thaw()]
  ] as const) {
    await t.test(`PostgreSQL ${how} for 10 s`, async (t) => {
      t.equal((await fetch(`${a.url}/vendor/agencies?version=4.0`, { headers: AUTH })).status, 200, 'answering before')
      const ledger = newLedger()
      const reads = newLedger()
      const run = { stop: false }
      const load = [...Array.from({ length: 3 }, async () => await writer(urls, ledger, run)), reader(reads, run)]
      await sleep(1000)
      const awayAt = Date.now()
      away()
      await sleep(10_000)
      back()
      const backAt = Date.now()
      let answering = 0
      for (let i = 0; i < 100 && answering !== 200; i++) {
        answering = (await fetch(`${b.url}/vendor/agency/1001/client/1001?version=4.0`, { headers: AUTH })).status
        if (answering !== 200) await sleep(100)
      }
      t.equal(answering, 200, `answering again ${Date.now() - backAt} ms after PostgreSQL is back`)
      await sleep(1000)
      run.stop = true
      await Promise.all(load)
      const answers = [...ledger.answers, ...reads.answers]
      const during = answers.filter((answer) => answer.atMs >= awayAt && answer.atMs < backAt)
      t.ok(during.some((answer) => answer.status === 503), `503 while PostgreSQL was ${how} (${during.length} requests)`)
      t.same(answers.filter((answer) => answer.status <= 0), [], 'none hung, none dropped')
      t.same([...new Set(answers.map((answer) => answer.status))].filter((status) => ![200, 429, 503].includes(status)), [], 'answered 200, 429 or 503')
      t.same(answers.filter((answer) => answer.status === 503 && answer.retryAfter !== '1'), [], 'every 503 with Retry-After: 1')
      t.comment(`slowest answer ${Math.max(...answers.map((answer) => answer.ms))} ms; ${ledger.notes.length} log notes and ${ledger.clients.length} clients acknowledged, ${ledger.notApplied.length} said not applied`)
      t.same(await audit(a.url, ledger), { missing: [], twice: [], falselyRefused: [] }, 'every acknowledged write there once; none said not applied is there')
    })
  }
})
