/**
 * The shared request journal's instance side (hosted mode), over a store in memory: what it
 * ships and when, and how long a read waits for the other instances.
 */
import t from 'tap'
import type { JournalStore, ShippedEntry } from '../../src/db/postgres/journal-store.js'
import { Journal } from '../../src/domain/journal.js'
import { SharedJournals } from '../../src/domain/worlds/shared-journals.js'

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

function fakeStore (behind: () => string[] = () => []) {
  const calls: string[] = []
  const shipped: ShippedEntry[] = []
  const store = {
    register: async () => { calls.push('register') },
    beat: async () => { calls.push('beat') },
    unregister: async () => { calls.push('unregister') },
    lastRead: async () => 7,
    ship: async (_read: number, entries: readonly ShippedEntry[]) => { calls.push('ship'); shipped.push(...entries) },
    announceRead: async () => 8,
    publish: async () => { calls.push('publish') },
    behind: async () => behind(),
    entries: async () => shipped.map((e, i) => ({ id: String(i + 1), path: e.path, entry: e.entry })),
    clear: async () => { shipped.length = 0 }
  }
  return { store: store as unknown as JournalStore, calls, shipped }
}

function journalWithOne (): Journal {
  const journal = new Journal(10)
  journal.record({ url: '/vendor/agency/1/clients', warnings: [], describe: () => ({ time: '2026-01-01T00:00:00.000Z', method: 'GET', path: '/vendor/agency/1/clients', version: '4.0', query: {}, integration: 'abc', agencyId: 1, status: 200, durationMs: 1, warnings: [] }) }, 0)
  return journal
}

t.test('while it cannot hear reads announced, an instance ships every second; while it can, it only says it is alive', async (t) => {
  const { store, calls, shipped } = fakeStore()
  const journals = new SharedJournals(store, () => undefined)
  t.teardown(async () => await journals.close())
  journals.add('default', journalWithOne())
  await sleep(1150)
  t.same(calls, ['ship'], 'deaf: shipped on the heartbeat')
  t.equal(shipped.length, 1, 'the entry answered here')
  journals.listenerUp()
  await sleep(1000)
  t.same(calls, ['ship', 'beat'], 'listening: a heartbeat only')
})

t.test('a read waits for the instances behind, and answers 503 naming them when they do not ship in time', async (t) => {
  let waiting = 3
  const { store } = fakeStore(() => (waiting-- > 0 ? ['there'] : []))
  const journals = new SharedJournals(store, () => undefined)
  t.teardown(async () => await journals.close())
  const journal = journalWithOne()
  journals.add('default', journal)
  const listed = JSON.parse(await journal.listJson()) as Array<{ id: number, path: string }>
  t.same(listed.map((e) => [e.id, e.path]), [[1, '/vendor/agency/1/clients']], 'read once the other shipped')
  t.equal(waiting, -1, 'after asking until none was behind')

  const stuck = fakeStore(() => ['there:1'])
  const stuckJournals = new SharedJournals(stuck.store, () => undefined)
  t.teardown(async () => await stuckJournals.close())
  const other = journalWithOne()
  stuckJournals.add('default', other)
  const refused: unknown = await other.listJson().then(() => 'answered', (e: unknown) => e)
  t.match(refused, { status: 503, detail: /there:1/ }, '503 naming the instance')
})
