/**
 * Hosted mode: what happens to a world when its owner fails. Killed outright (SIGKILL) under
 * writes sent through both instances, the other instance takes the world over once the lease has
 * run out, and the ledger holds: every acknowledged write there once, none answered "nothing was
 * applied" there. Frozen (SIGSTOP) past its lease, the owner loses the world to the next request
 * of the other instance; thawed, it answers from the new owner, never from what it held.
 */
import t from 'tap'
import { hostedInstances, sleep, withoutPostgres } from '../helpers/hosted.js'
import { audit, newLedger, writer } from '../../bench/ledger.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }

t.setTimeout(240_000)

t.test('owner failures', { timeout: 200_000, skip: withoutPostgres }, async (t) => {
  const cluster = hostedInstances(t)
  await cluster.ready()
  const [a, b] = await Promise.all([cluster.start(), cluster.start()])
  /** The instance that answers the default world now (whichever instance it is asked through). */
  const ownerOf = async () => {
    const name = (await fetch(`${a.url}/vendor/agencies?version=4.0`, { headers: AUTH })).headers.get('x-sandbox-instance') ?? ''
    return Number(name.split(':')[1]) === a.child.pid ? a : b
  }

  await t.test('the owner killed under writes: the other takes the world over, and the ledger holds', async (t) => {
    const owner = await ownerOf()
    const survivor = owner === a ? b : a
    const ledger = newLedger()
    const run = { stop: false }
    let alive = [a.url, b.url]
    const writers = Array.from({ length: 4 }, async () => await writer(() => alive, ledger, run))
    await sleep(800)
    const killedAt = Date.now()
    owner.child.kill('SIGKILL')
    alive = [survivor.url]
    await sleep(4000)
    run.stop = true
    await Promise.all(writers)
    const after = ledger.answers.filter((answer) => answer.status === 200 && answer.atMs > killedAt)
    t.ok(after.length > 10, `writes acknowledged again after the kill (${after.length}), the first sent ${after.length === 0 ? '-' : after[0].atMs - killedAt} ms after it`)
    t.ok(ledger.notes.length > 20, `${ledger.notes.length} log notes and ${ledger.clients.length} clients acknowledged`)
    t.same(await audit(survivor.url, ledger), { missing: [], twice: [], falselyRefused: [] }, 'every acknowledged write there once; none said not applied is there')
    t.same([...new Set(ledger.answers.map((answer) => answer.status))].filter((status) => ![0, 200, 429, 503].includes(status)), [], 'no other answer than 200, 429, 503 (or a refused connection to the killed one)')
    const fresh = await cluster.start()
    t.same(await audit(fresh.url, ledger), { missing: [], twice: [], falselyRefused: [] }, 'an instance started afterwards answers the same')
  })

  await t.test('the owner frozen past its lease loses the world; thawed, it answers from the new owner', async (t) => {
    const instances = cluster.running()
    const named = (await fetch(`${instances[0].url}/vendor/agencies?version=4.0`, { headers: AUTH })).headers.get('x-sandbox-instance') ?? ''
    const frozen = instances.find((served) => served.child.pid === Number(named.split(':')[1]))
    const active = instances.find((served) => served !== frozen)
    t.ok(frozen !== undefined && active !== undefined, 'the owner and another instance')
    if (frozen === undefined || active === undefined) return
    frozen.child.kill('SIGSTOP')
    // past its lease (2 s), the next request through the other instance takes the world over
    await sleep(2700)
    const ledger = newLedger()
    const run = { stop: false }
    const writers = Array.from({ length: 2 }, async () => await writer(() => [active.url], ledger, run))
    await sleep(2000)
    frozen.child.kill('SIGCONT')
    await sleep(1000)
    run.stop = true
    await Promise.all(writers)
    t.ok(ledger.notes.length > 5, `writes acknowledged through the other instance while the owner was frozen (${ledger.notes.length})`)
    const answer = await fetch(`${frozen.url}/vendor/agency/1001/client/${ledger.clients.at(-1) ?? 1001}?version=4.0`, { headers: AUTH })
    t.equal(answer.status, 200, 'the thawed instance reads a client created while it was frozen')
    t.not(answer.headers.get('x-sandbox-instance'), named, 'answered by the new owner')
    t.same(await audit(frozen.url, ledger), { missing: [], twice: [], falselyRefused: [] }, 'the ledger holds, read through the thawed instance')
  })
})
