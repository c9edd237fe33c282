/**
 * Hosted mode: an instance holds a copy of a created world's data only while it is used there. A
 * world created on A is known on B at once (listed, with its counts) but loaded there by its first
 * request; a copy idle past SANDBOX_HOSTED_COPY_IDLE_SECONDS is dropped, and the world's next
 * request loads it again with every write made meanwhile, on either instance; a listing of a world
 * without a copy here tells its data as it stands; a reset reads the start from PostgreSQL; and
 * the copy a real-time simulator runs on is kept.
 */
import t from 'tap'
import { controlCall, hostedInstances, sleep, withoutPostgres } from '../helpers/hosted.js'
import { createClientBody } from '../helpers/writes.js'

const AGENCY = 1001
const JSON_BODY = { 'content-type': 'application/json' }
/** A copy dropped: what the world's database takes on an instance without one (an empty database of the schema). */
const STAND_IN_MAX_BYTES = 256 * 1024

interface World { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
interface Described { id: string, bytes: number, integrations: string[], counts: { clients: number, writes: unknown } }

t.setTimeout(240_000)

const skip = withoutPostgres
{
  const cluster = hostedInstances(t)
  const control = controlCall
  const basic = (world: World) => ({ authorization: 'Basic ' + Buffer.from(`${world.integrations[0].clientId}:${world.integrations[0].clientSecret}`).toString('base64') })
  const createClient = async (url: string, world: World) => {
    const answer = await fetch(`${url}/vendor/agency/${AGENCY}/client?version=4.0`, { method: 'POST', headers: { ...basic(world), ...JSON_BODY }, body: JSON.stringify(createClientBody()) })
    if (answer.status !== 200) throw new Error(`create client: ${answer.status} ${await answer.text()}`)
    return (await answer.json() as { clientNumber: number }).clientNumber
  }
  const clientAnswer = async (url: string, world: World, n: number) => (await fetch(`${url}/vendor/agency/${AGENCY}/client/${n}?version=4.0`, { headers: basic(world) })).status
  /** The world as the instance's listing tells it (no request to the world itself). */
  const listed = async (url: string, id: string) => {
    const { json } = await control<{ worlds: Described[] }>(url, 'GET', '/worlds')
    const found = json.worlds.find((w) => w.id === id)
    if (found === undefined) throw new Error(`world ${id} not listed by ${url}`)
    return found
  }
  /** Waits until the instance holds no copy of the world (its idle time of 1 s and a sweep each second), at most 10 s: the bytes it lists then. */
  const untilDropped = async (url: string, id: string) => {
    let bytes = (await listed(url, id)).bytes
    for (let waited = 0; bytes > STAND_IN_MAX_BYTES && waited < 10_000; waited += 250) {
      await sleep(250)
      bytes = (await listed(url, id)).bytes
    }
    return bytes
  }

  t.test('copies of a world, loaded by use and dropped when idle', { timeout: 200_000, skip }, async (t) => {
    const [a, b] = await Promise.all([cluster.start({ SANDBOX_HOSTED_COPY_IDLE_SECONDS: '1' }), cluster.start({ SANDBOX_HOSTED_COPY_IDLE_SECONDS: '1' })])
    // B learns of it from the catalogue, before its next answer, without its data
    const created = await control<World>(a.url, 'POST', '/worlds', { name: 'copied', ttlSeconds: 0 })
    t.equal(created.status, 201, 'created on A')
    const world = created.json

    let clients = 0
    await t.test('known on B without a copy: listed with its data as it stands', async (t) => {
      const onA = await listed(a.url, world.id)
      const onB = await listed(b.url, world.id)
      clients = onA.counts.clients
      t.ok(onA.bytes > 4 * STAND_IN_MAX_BYTES, `A holds its copy (${onA.bytes} bytes)`)
      t.ok(onB.bytes <= STAND_IN_MAX_BYTES, `B holds none (${onB.bytes} bytes)`)
      t.same(onB.counts, onA.counts, 'B counts what A holds')
      t.same(onB.integrations, onA.integrations, 'B lists its Client Ids')
    })

    let written = 0
    await t.test('its first request on B loads it, with what A wrote', async (t) => {
      written = await createClient(a.url, world)
      t.equal(await clientAnswer(b.url, world, written), 200, 'B answers the client A created')
      t.ok((await listed(b.url, world.id)).bytes > 4 * STAND_IN_MAX_BYTES, 'B holds a copy now')
    })

    await t.test('an idle copy is dropped, and loaded again with every write since', async (t) => {
      const dropped = await untilDropped(b.url, world.id)
      t.ok(dropped <= STAND_IN_MAX_BYTES, `B dropped its copy (${dropped} bytes)`)
      t.equal((await listed(b.url, world.id)).counts.clients, clients + 1, 'what it held is still listed')
      t.ok(await untilDropped(a.url, world.id) <= STAND_IN_MAX_BYTES, 'so did A, its creator')
      // written on A while neither holds a copy: A loads it to write, B lists it as it now stands
      const later = await createClient(a.url, world)
      const listedOnB = await listed(b.url, world.id)
      t.equal(listedOnB.counts.clients, clients + 2, 'B lists the write made since it dropped its copy')
      t.ok(listedOnB.bytes <= STAND_IN_MAX_BYTES, 'and keeps no copy for the listing')
      t.equal(await clientAnswer(b.url, world, later), 200, 'B answers the client written since')
      t.equal(await clientAnswer(b.url, world, written), 200, 'and the one before')
    })

    await t.test('a reset reads the start from PostgreSQL, on an instance without a copy', async (t) => {
      t.ok(await untilDropped(b.url, world.id) <= STAND_IN_MAX_BYTES, 'no copy on B')
      t.equal((await control(b.url, 'POST', `/worlds/${world.id}/reset`)).status, 200, 'reset on B')
      t.equal((await listed(a.url, world.id)).counts.clients, clients, 'back to its start on A')
      t.equal(await clientAnswer(a.url, world, written), 404, 'A no longer has the client written after the start')
    })

    await t.test('the copy a real-time simulator runs on is kept', async (t) => {
      t.equal((await control(a.url, 'POST', `/worlds/${world.id}/simulator`, { ratePerMinute: 6, seed: 3 })).status, 200, 'started on A')
      // past the idle time and two sweeps
      await sleep(3000)
      t.ok((await listed(a.url, world.id)).bytes > 4 * STAND_IN_MAX_BYTES, 'A keeps its copy while the simulator runs')
      t.equal((await control(a.url, 'DELETE', `/worlds/${world.id}/simulator`)).status, 200, 'stopped')
      t.ok(await untilDropped(a.url, world.id) <= STAND_IN_MAX_BYTES, 'and drops it once it stopped')
    })

    await t.test('a world deleted on A answers 401 on B, copy or not', async (t) => {
      t.equal((await control(a.url, 'DELETE', `/worlds/${world.id}`)).status, 204, 'deleted on A')
      t.equal(await clientAnswer(b.url, world, written), 401, 'its credentials fail on B')
    })
  })
}
