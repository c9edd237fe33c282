/**
 * Hosted mode: created worlds and tenants are the same on every instance over one PostgreSQL
 * database. A tenant made on one instance works on the other; a world created on one is reached
 * by its Client Ids and its token on the other, with the data written there; the bounds (worlds
 * at once, a tenant's quota) are counted across instances; a deletion, or an idle world's
 * expiry, holds everywhere; and nothing crosses tenants, on the vendor side or the control side,
 * on either instance.
 */
import t from 'tap'
import { postgresBinaries, startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { serveProcess, type Served } from '../helpers/process.js'
import { createClientBody } from '../helpers/writes.js'

/**
 * A request's answer, asked again a second later while it is a 503 (at most three times): a
 * store slowed by a loaded machine answers that, and a client retries it. What each 503 said is kept.
 */
async function answerPast503 (url: string, init: RequestInit): Promise<{ status: number, retried: string[] }> {
  const retried: string[] = []
  for (;;) {
    const answer = await fetch(url, init)
    if (answer.status !== 503 || retried.length === 3) return { status: answer.status, retried }
    retried.push(`503: ${(await answer.text()).slice(0, 200)}`)
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

const ADMIN_TOKEN = 'programme-administrator'
const AGENCY = 1001

interface Tenant { id: string, token: string }
interface World { id: string, token: string, integrations: Array<{ clientId: string, clientSecret: string }> }

t.setTimeout(300_000)

const skip = postgresBinaries() === undefined ? 'PostgreSQL is not installed (.ci/run installs Debian\'s postgresql)' : false
{
  let postgres: ScratchPostgres
  const instances: Served[] = []
  const start = async () => {
    const served = await serveProcess({ SANDBOX_DATABASE_URL: postgres.url, SANDBOX_DB: ':memory:', SANDBOX_CONTROL_TOKEN: ADMIN_TOKEN, SANDBOX_MAX_WORLDS: '5' })
    instances.push(served)
    return served.url
  }
  t.before(async () => { if (skip === false) postgres = await startScratchPostgres() })
  t.teardown(() => {
    for (const served of instances) served.child.kill('SIGKILL')
    postgres?.destroy()
  })

  const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' })
  const ADMIN = bearer(ADMIN_TOKEN)
  // the start-up fixture's first integration (`abc`), which may create clients
  const basic = (world: World) => ({ authorization: 'Basic ' + Buffer.from(`${world.integrations[0].clientId}:${world.integrations[0].clientSecret}`).toString('base64') })
  const post = async (url: string, headers: Record<string, string>, body: object = {}) => await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
  const createTenant = async (url: string, body: object = {}) => {
    const res = await post(`${url}/_sandbox/tenants`, ADMIN, body)
    if (res.status !== 201) throw new Error(`POST /_sandbox/tenants: ${res.status} ${await res.text()}`)
    return await res.json() as Tenant
  }
  const createWorld = async (url: string, headers: Record<string, string>, body: object = {}) => {
    const res = await post(`${url}/_sandbox/worlds`, headers, body)
    if (res.status !== 201) throw new Error(`POST /_sandbox/worlds: ${res.status} ${await res.text()}`)
    return await res.json() as World
  }
  const createClient = async (url: string, world: World) => await post(`${url}/vendor/agency/${AGENCY}/client?version=4.0`, { ...basic(world), 'content-type': 'application/json' }, createClientBody())
  const getClient = async (url: string, world: World, n: number) => await fetch(`${url}/vendor/agency/${AGENCY}/client/${n}?version=4.0`, { headers: basic(world) })
  const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

  t.test('worlds and tenants over two instances', { timeout: 240_000, skip }, async (t) => {
    const [a, b] = await Promise.all([start(), start()])

    const one = await createTenant(a, { name: 'partner one', maxWorlds: 2 })
    const two = await createTenant(b, { name: 'partner two', maxWorlds: 2 })
    t.same((await (await fetch(`${b}/_sandbox/tenants`, { headers: ADMIN })).json() as { tenants: Tenant[] }).tenants.map((x) => x.id), [one.id, two.id],
      'B lists the tenant created on A, and its own')
    t.equal((await fetch(`${b}/_sandbox/worlds`, { headers: bearer(one.token) })).status, 200, "A's tenant's token opens B")

    const w1 = await createWorld(b, bearer(one.token), { name: 'one on B' })
    const w2 = await createWorld(a, bearer(two.token), { name: 'two on A' })

    await t.test('a world created on one instance is reached on the other, with what was written there', async (t) => {
      t.equal((await fetch(`${a}/vendor/agencies?version=4.0`, { headers: basic(w1) })).status, 200, "B's world's Client Id is known on A")
      t.equal((await fetch(`${a}/_sandbox/worlds/${w1.id}/info`, { headers: bearer(w1.token) })).status, 200, 'and its token opens its routes on A')
      let stale = 0
      const numbers: number[] = []
      for (let i = 0; i < 10; i++) {
        const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a]
        const created = await createClient(writer, w1)
        t.equal(created.status, 200, `created (${created.status})`)
        const { clientNumber } = await created.json() as { clientNumber: number }
        numbers.push(clientNumber)
        if ((await getClient(reader, w1, clientNumber)).status !== 200) stale++
        await sleep(45)
      }
      t.equal(stale, 0, 'each write on one instance is read on the other on the next request')
      t.same(numbers, numbers.map((_, i) => numbers[0] + i), "the world's client numbers follow each other across instances")
      t.equal((await getClient(a, w2, numbers[0])).status, 404, "the other tenant's world does not have them")
      const reset = await post(`${b}/_sandbox/worlds/${w1.id}/reset`, bearer(one.token))
      t.equal(reset.status, 200, "the world's reset on B")
      t.equal((await getClient(a, w1, numbers[0])).status, 404, 'is what A answers')
    })

    await t.test('tenants × instances: nothing crosses tenants, on the vendor side or the control side', async (t) => {
      const callers = { one: bearer(one.token), two: bearer(two.token), w1: bearer(w1.token), w2: bearer(w2.token) }
      const owners: Record<string, string> = { [w1.id]: 'one', [w2.id]: 'two' }
      for (const url of [a, b]) {
        const where = url === a ? 'A' : 'B'
        for (const [name, headers] of Object.entries(callers)) {
          for (const world of [w1, w2]) {
            const own = owners[world.id] === name || (name === 'w1' && world === w1) || (name === 'w2' && world === w2)
            const info = await fetch(`${url}/_sandbox/worlds/${world.id}/info`, { headers })
            t.equal(info.status === 200, own, `${where}: ${name}'s token ${own ? 'opens' : 'does not open'} ${world === w1 ? 'w1' : 'w2'} (${info.status})`)
          }
          if (name === 'one' || name === 'two') {
            const listed = (await (await fetch(`${url}/_sandbox/worlds`, { headers })).json() as { worlds: Array<{ id: string }> }).worlds.map((w) => w.id)
            t.same(listed, [name === 'one' ? w1.id : w2.id], `${where}: tenant ${name} lists its own world only`)
            t.equal((await fetch(`${url}/_sandbox/tenants`, { headers })).status, 403, `${where}: tenant ${name} cannot list tenants`)
            t.equal((await fetch(`${url}/_sandbox/info`, { headers })).status, 403, `${where}: tenant ${name} cannot open the default world`)
          }
        }
        for (const world of [w1, w2]) {
          const other = world === w1 ? w2 : w1
          const agencies = await fetch(`${url}/vendor/agencies?version=4.0`, { headers: basic(world) })
          t.equal(agencies.status, 200, `${where}: a world's Client Id reads its world`)
          const unknown = { authorization: 'Basic ' + Buffer.from(`abc@w0000000000:${other.integrations[0].clientSecret}`).toString('base64') }
          t.equal((await fetch(`${url}/vendor/agencies?version=4.0`, { headers: unknown })).status, 401, `${where}: a Client Id naming no world is refused`)
        }
      }
    })

    await t.test('creates at once on both instances: the quota is counted where they are decided', async (t) => {
      const three = await createTenant(b, { name: 'partner three', maxWorlds: 2 })
      // both instances hold the tenant (and know it has no world) before the creates start
      for (const url of [a, b]) t.equal((await fetch(`${url}/_sandbox/worlds`, { headers: bearer(three.token) })).status, 200)
      const answers = await Promise.all(Array.from({ length: 6 }, async (_, i) => (await post(`${i % 2 === 0 ? a : b}/_sandbox/worlds`, bearer(three.token))).status))
      t.same(answers.filter((s) => s === 201).length, 2, `2 created of 6 (${answers.join(' ')})`)
      t.same(answers.filter((s) => s === 409).length, 4, 'the rest refused with 409')
      t.equal((await fetch(`${a}/_sandbox/tenants/${three.id}`, { method: 'DELETE', headers: ADMIN })).status, 204)
    })

    await t.test('bounds counted across instances: a tenant\'s quota, and worlds at once', async (t) => {
      const second = await createWorld(a, bearer(one.token))
      const third = await post(`${b}/_sandbox/worlds`, bearer(one.token))
      t.equal(third.status, 409, 'B refuses a third world to tenant one, one created on B and one on A (quota 2)')
      t.match(await third.text(), /quota/, 'naming the quota')
      // five worlds at once (SANDBOX_MAX_WORLDS): w1, w2, second, then two by the administrator, one on each
      await createWorld(a, ADMIN)
      await createWorld(b, ADMIN)
      const sixth = await post(`${a}/_sandbox/worlds`, ADMIN)
      t.equal(sixth.status, 429, `the sixth world is refused on A: five are held across both (${sixth.status})`)
      t.match(await sixth.text(), /SANDBOX_MAX_WORLDS=5/, 'naming the setting')
      t.equal((await fetch(`${b}/_sandbox/worlds/${second.id}`, { method: 'DELETE', headers: ADMIN })).status, 204, 'deleted on B')
      t.equal((await fetch(`${a}/vendor/agencies?version=4.0`, { headers: basic(second) })).status, 401, 'its Client Id answers 401 on A')
      t.equal((await fetch(`${a}/_sandbox/worlds/${second.id}/info`, { headers: bearer(one.token) })).status, 404, 'its routes 404 on A')
      t.equal((await post(`${a}/_sandbox/worlds`, bearer(one.token))).status, 201, 'and the place it held is free on A')
    })

    await t.test('an instance started later holds every world and tenant, with their clocks and fault rules', async (t) => {
      // a reset that keeps them writes a snapshot, which ends the log before it: it carries them
      const w2Routes = `/_sandbox/worlds/${w2.id}`
      const put = await fetch(`${a}${w2Routes}/clock`, { method: 'PUT', headers: bearer(two.token), body: JSON.stringify({ now: '2031-05-04T03:02:01Z', frozen: true }) })
      t.equal(put.status, 200, "w2's clock set on A")
      t.equal((await post(`${a}${w2Routes}/faults`, bearer(two.token), { match: { path: '/vendor/agency/9999/**' }, effect: { status: 503 } })).status, 201, 'a rule added on A')
      t.equal((await post(`${a}${w2Routes}/reset`, bearer(two.token), { keep: ['clock', 'faults'] })).status, 200, 'reset, keeping both')
      const c = await start()
      t.same(await (await fetch(`${c}${w2Routes}/clock`, { headers: bearer(two.token) })).json(), { now: '2031-05-04T03:02:01.000Z', frozen: true }, "C has w2's clock")
      t.same((await (await fetch(`${c}${w2Routes}/faults`, { headers: bearer(two.token) })).json() as Array<{ match: { path: string } }>).map((r) => r.match.path), ['/vendor/agency/9999/**'], "and w2's rule")
      t.equal((await fetch(`${c}${w2Routes}/faults`, { method: 'DELETE', headers: bearer(two.token) })).status, 204, 'cleared on C')
      t.equal((await fetch(`${c}${w2Routes}/clock`, { method: 'DELETE', headers: bearer(two.token) })).status, 200, 'real time again on C')
      t.equal((await fetch(`${c}/vendor/agencies?version=4.0`, { headers: basic(w2) })).status, 200, "w2's Client Id is known on C")
      t.equal((await fetch(`${c}/_sandbox/worlds`, { headers: bearer(two.token) })).status, 200, "tenant two's token opens C")
    })

    await t.test('fault rules are every instance\'s, and their counts hold across instances', async (t) => {
      const rules = `/_sandbox/worlds/${w2.id}/faults`
      const added = await post(`${a}${rules}`, bearer(two.token), { match: { path: '/vendor/agencies' }, effect: { status: 503 }, times: 3 })
      t.equal(added.status, 201, 'a rule added on A')
      const answers = await Promise.all(Array.from({ length: 10 }, async (_, i) => (await fetch(`${i % 2 === 0 ? a : b}/vendor/agencies?version=4.0`, { headers: basic(w2) })).status))
      t.equal(answers.filter((s) => s === 503).length, 3, `times 3: three requests of ten over both instances answered by it (${answers.join(' ')})`)
      t.equal((await fetch(`${b}/vendor/agencies?version=4.0`, { headers: basic(w1) })).status, 200, "another world's requests are not")
      const listed = await (await fetch(`${b}${rules}`, { headers: bearer(two.token) })).json() as Array<{ hits: number, matched: number, exhausted: boolean }>
      t.same(listed.map((r) => [r.hits, r.exhausted]), [[3, true]], 'B lists it with its three hits, exhausted')
      const every = await post(`${b}${rules}`, bearer(two.token), { match: { path: '/vendor/agencies' }, effect: { status: 500 }, every: 2 })
      t.equal(every.status, 201, 'a rule for every second request added on B')
      const sequence: number[] = []
      for (let i = 0; i < 6; i++) sequence.push((await fetch(`${i % 2 === 0 ? a : b}/vendor/agencies?version=4.0`, { headers: basic(w2) })).status)
      t.same(sequence, [200, 500, 200, 500, 200, 500], 'every second request, counted across both')
      t.equal((await fetch(`${a}${rules}`, { method: 'DELETE', headers: bearer(two.token) })).status, 204, 'the rules cleared on A')
      t.equal((await fetch(`${b}/vendor/agencies?version=4.0`, { headers: basic(w2) })).status, 200, 'B no longer applies them')
    })

    await t.test('PostgreSQL stopped: catalogue changes answer 503 with Retry-After and change nothing', async (t) => {
      const before = await (await fetch(`${a}/_sandbox/worlds`, { headers: ADMIN })).json() as { worlds: Array<{ id: string }> }
      postgres.stop()
      try {
        for (const [path, body] of [['/_sandbox/tenants', { name: 'while down' }], ['/_sandbox/worlds', {}]] as const) {
          const answer = await post(`${b}${path}`, ADMIN, body)
          t.equal(answer.status, 503, `POST ${path}: 503`)
          t.equal(answer.headers.get('retry-after'), '1', 'with Retry-After')
        }
        const deleted = await fetch(`${a}/_sandbox/worlds/${w1.id}`, { method: 'DELETE', headers: ADMIN })
        t.equal(deleted.status, 503, 'DELETE of a world: 503')
      } finally {
        postgres.start()
      }
      let after: { worlds: Array<{ id: string }> } | undefined
      for (let i = 0; i < 50 && after === undefined; i++) {
        const answer = await fetch(`${b}/_sandbox/worlds`, { headers: ADMIN })
        if (answer.status === 200) after = await answer.json() as { worlds: Array<{ id: string }> }
        else await sleep(200)
      }
      t.same(after?.worlds.map((w) => w.id), before.worlds.map((w) => w.id), 'once it is back, B lists the worlds there were: none added, none deleted')
      const tenants = await (await fetch(`${a}/_sandbox/tenants`, { headers: ADMIN })).json() as { tenants: Array<{ name: string }> }
      t.notOk(tenants.tenants.some((x) => x.name === 'while down'), 'and no tenant was added')
      t.equal((await fetch(`${a}/vendor/agencies?version=4.0`, { headers: basic(w1) })).status, 200, 'w1 answers on A')
    })

    await t.test('the administrator changes a tenant on one instance: the other holds the change on its next request', async (t) => {
      const full = await post(`${a}/_sandbox/worlds`, bearer(one.token))
      t.equal(full.status, 409, 'tenant one is at its quota of 2')
      // room among the sandbox's five worlds at once: one of the administrator's goes
      const listed = await (await fetch(`${a}/_sandbox/worlds`, { headers: ADMIN })).json() as { worlds: Array<{ id: string, tenant: string | null }> }
      const spare = listed.worlds.find((w) => w.tenant === null && w.id !== 'default')
      t.equal((await fetch(`${a}/_sandbox/worlds/${spare?.id ?? 'none'}`, { method: 'DELETE', headers: ADMIN })).status, 204)
      const raised = await fetch(`${b}/_sandbox/tenants/${one.id}`, { method: 'PATCH', headers: ADMIN, body: JSON.stringify({ maxWorlds: 3, name: 'partner one, larger' }) })
      t.equal(raised.status, 200, 'its quota raised on B')
      t.equal((await post(`${a}/_sandbox/worlds`, bearer(one.token))).status, 201, 'A creates its third world at once')
      t.equal((await post(`${a}/_sandbox/worlds`, bearer(one.token))).status, 409, 'and not a fourth')
      t.equal((await (await fetch(`${a}/_sandbox/tenants/${one.id}`, { headers: ADMIN })).json() as { name: string }).name, 'partner one, larger', 'A has its new name')

      let token = one.token
      for (let round = 0; round < 6; round++) {
        const [renewer, other] = round % 2 === 0 ? [a, b] : [b, a]
        const renewed = await post(`${renewer}/_sandbox/tenants/${one.id}/token`, ADMIN)
        t.equal(renewed.status, 200, `a new token on ${renewer === a ? 'A' : 'B'}`)
        const next = (await renewed.json() as { token: string }).token
        t.equal((await fetch(`${other}/_sandbox/worlds`, { headers: bearer(token) })).status, 401, 'the other instance refuses the old token on its very next request')
        t.equal((await fetch(`${other}/_sandbox/worlds`, { headers: bearer(next) })).status, 200, 'and takes the new one')
        token = next
      }
      one.token = token
    })

    await t.test('a tenant deleted on one instance is gone on the other, with its worlds', async (t) => {
      t.equal((await fetch(`${a}/_sandbox/tenants/${two.id}`, { method: 'DELETE', headers: ADMIN })).status, 204, 'deleted on A')
      t.equal((await fetch(`${b}/_sandbox/worlds`, { headers: bearer(two.token) })).status, 401, 'its token opens nothing on B')
      t.equal((await fetch(`${b}/vendor/agencies?version=4.0`, { headers: basic(w2) })).status, 401, "its world's Client Id answers 401 on B")
    })

    await t.test('a world used on one instance stays alive on the other; idle, it expires on both', async (t) => {
      const brief = await createWorld(a, ADMIN, { ttlSeconds: 2 })
      for (let i = 0; i < 8; i++) {
        await sleep(400)
        t.equal((await fetch(`${b}/vendor/agencies?version=4.0`, { headers: basic(brief) })).status, 200, `used on B (${i})`)
      }
      t.equal((await fetch(`${a}/vendor/agencies?version=4.0`, { headers: basic(brief) })).status, 200, 'A still has it after 3.2 s: its use on B counts')
      // past its time to live with a margin: 100 ms once answered 200 in a full run of the suite on
      // a loaded machine (which step ran late, the use's record, the sweep or a change of owner, is not known);
      // and a 503 (once, in a full run) is asked again, as a client does
      await sleep(2600)
      // (the instance that did not own it may learn of the expiry only from its former owner, as a request forwarded there arrives)
      for (const url of [a, b]) {
        const gone = await answerPast503(`${url}/vendor/agencies?version=4.0`, { headers: basic(brief) })
        t.equal(gone.status, 401, `idle past its ttl: gone${gone.retried.length > 0 ? ` (after ${gone.retried.join('; ')})` : ''}`)
        t.equal((await fetch(`${url}/_sandbox/worlds/${brief.id}/info`, { headers: ADMIN })).status, 404, 'and on the control plane')
      }
      // as when the other instance forwarded a request before it learnt of the expiry: it reaches an
      // instance where the world is gone, and where the default world is not held (it may not be forwarded again)
      const defaultHere = (await fetch(`${a}/vendor/agencies?version=4.0`)).headers.get('x-sandbox-forwarded-by') === null
      const notDefaultOwner = defaultHere ? b : a
      const forwarded = { 'x-sandbox-forwarded-by': 'another instance' }
      t.equal((await fetch(`${notDefaultOwner}/vendor/agencies?version=4.0`, { headers: { ...basic(brief), ...forwarded } })).status, 401, 'a request forwarded to it before its expiry was known: 401')
      t.equal((await fetch(`${notDefaultOwner}/_sandbox/worlds/${brief.id}/info`, { headers: { ...ADMIN, ...forwarded } })).status, 404, 'and on the control plane, 404')
    })
  })
}
