/**
 * Isolation matrix (issue 8): every integration x every agency of the demo fixture (plus an
 * unknown one) x every vendor endpoint of version 4.0, and the reads of versions 3.0 and 1.
 *
 * Access is allowed exactly when the integration is subscribed, has not been opted out, the
 * agency is active, and the subscription has the endpoint's scope. Otherwise: 403 with the
 * documented plain sentence when the agency is unavailable (never saying why), 403 problem body
 * naming the scope when only the scope is missing, and 401 for bad credentials, whatever else is
 * wrong with the request. No answer to one integration contains another agency's data: every
 * string value of an answer that belongs to exactly one fixture agency (GUIDs, policy numbers,
 * emails, names…) must belong to the agency that was asked for.
 */
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { AGENCY, DEMO, NORTHWIND, basic, build } from '../helpers/app.js'
import { AGENCY_IDS, INTEGRATIONS, access, agencyOf, foreignStrings, liveClients, ownedStrings } from '../../bench/attack/world.js'
import { attachment, createClientBody, logNote, receipt, v1AttachmentHeaders } from '../helpers/writes.js'

const UNAUTHORIZED = 'The provided credentials are invalid'
const UNAVAILABLE = 'The requested agency is not available to the vendor'

// Who may see what, and which strings belong to which agency: the attack script's model of the demo world.
const liveClient = (id: number) => liveClients(id)[0]

// ------------------------------------------------------------------------------------------------
// Endpoints
// ------------------------------------------------------------------------------------------------

type Version = '4.0' | '3.0' | '1'
interface Request {
  method: 'GET' | 'POST'
  url: string
  headers?: Record<string, string>
  payload?: string | Buffer | object
}
interface Op {
  name: string
  version: Version
  /** Scope the endpoint needs beyond the subscription. */
  scope?: string
  write?: boolean
  /** A valid request for the agency. */
  valid: (agencyId: number) => Request
  /**
   * The same request with something else wrong (bad body, unknown client, bad query): must not change
   * the 401/403 answer. Where the endpoint has nothing to get wrong (offices, users), it is a noisy but valid request.
   */
  invalid: (agencyId: number) => Request
}

const q = (v: Version) => (v === '1' ? '' : `?version=${v}`)
const qa = (v: Version) => (v === '1' ? '?' : `?version=${v}&`)
const client = (a: number) => liveClient(a)?.clientNumber ?? 1000
const policyNumber = (a: number) => liveClient(a)?.policies?.[0]?.policyNumber ?? 'NONE-1'
const v1Attachment = v1AttachmentHeaders

function readOps (v: Version): Op[] {
  const ops: Op[] = [
    {
      name: 'offices',
      version: v,
      valid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/offices${q(v)}` }),
      invalid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/offices${qa(v)}asOf=garbage&include=Nope` })
    },
    {
      name: 'changed clients',
      version: v,
      scope: 'client-read',
      valid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/clients${q(v)}` }),
      invalid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/clients${qa(v)}asOf=not-a-date` })
    },
    {
      name: 'deleted clients',
      version: v,
      scope: 'client-read',
      valid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/clients${qa(v)}deleted=true&asOf=2020-01-01` }),
      invalid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/clients${qa(v)}deleted=maybe` })
    },
    {
      name: 'get client',
      version: v,
      scope: 'client-read',
      valid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/client/${client(a)}${q(v)}` }),
      invalid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/client/999999${v === '1' ? '' : `${qa(v)}include=Bogus`}` })
    },
    {
      name: 'batch read',
      version: v,
      scope: 'client-read',
      valid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/clients${q(v)}`, payload: v === '1' ? [client(a), 1001, 1002] : { clientNumbers: [client(a), 1001, 1002] } }),
      invalid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/clients${q(v)}`, payload: { clientNumbers: Array.from({ length: 201 }, (_, i) => i + 1) } })
    }
  ]
  if (v === '1') {
    ops.push({
      name: 'get client (all groups)',
      version: v,
      scope: 'client-read',
      valid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/client/${client(a) + 1}` }),
      invalid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/client/0` })
    })
  } else {
    ops.push({
      name: 'search',
      version: v,
      scope: 'client-read',
      valid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/clients/search${qa(v)}policyNumber=${policyNumber(a)}` }),
      invalid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/clients/search${q(v)}` })
    })
    ops.push({
      name: 'get client with invoices',
      version: v,
      scope: 'client-read',
      valid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/client/${client(a)}${qa(v)}include=Details,Policies,Invoices` }),
      invalid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/client/${client(a)}${qa(v)}include=Details,Nope` })
    })
  }
  return ops
}

const OPS: Op[] = [
  ...readOps('4.0'),
  ...readOps('3.0'),
  ...readOps('1'),
  {
    name: 'users',
    version: '4.0',
    scope: 'user-list',
    valid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/users?version=4.0` }),
    invalid: (a) => ({ method: 'GET', url: `/vendor/agency/${a}/users?version=4.0&x=1` })
  },
  {
    name: 'log note',
    version: '4.0',
    scope: 'create-log-attachment-task',
    write: true,
    valid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}/log?version=4.0`, payload: logNote() }),
    invalid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}/log?version=4.0`, payload: { refId: 'nope', channel: 999 } })
  },
  {
    name: 'attachment',
    version: '4.0',
    scope: 'create-log-attachment-task',
    write: true,
    valid: (a) => {
      const f = attachment(Buffer.from('%PDF-1.4 isolation'))
      return { method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}/attachment?version=4.0`, headers: f.headers, payload: f.payload }
    },
    invalid: (a) => {
      const f = attachment(Buffer.from('x'), { Desc: '***', RefId: undefined })
      return { method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}/attachment?version=4.0`, headers: f.headers, payload: Buffer.from('not gzip') }
    }
  },
  {
    name: 'receipts',
    version: '4.0',
    scope: 'create-log-attachment-task',
    write: true,
    valid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}/receipts?version=4.0`, payload: [receipt()] }),
    invalid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/client/999999/receipts?version=4.0`, payload: { not: 'an array' } })
  },
  {
    name: 'create client',
    version: '4.0',
    scope: 'client-create',
    write: true,
    valid: () => ({ method: 'POST', url: '', payload: createClientBody() }),
    invalid: () => ({ method: 'POST', url: '', payload: { People: [] } })
  },
  {
    name: 'v1 log note',
    version: '1',
    scope: 'create-log-attachment-task',
    write: true,
    valid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}`, payload: { Action: 1, Body: 'b', Description: 'd', RefId: randomUUID(), TS: '2026-11-20T10:00:00Z' } }),
    invalid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}`, payload: { Action: 1, Body: 'b', Description: 'd', RefId: randomUUID(), TS: '2026-11-20T10:00:00Z', PolicyIndex: 99 } })
  },
  {
    name: 'v1 attachment',
    version: '1',
    scope: 'create-log-attachment-task',
    write: true,
    valid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}/attachment`, headers: v1Attachment(), payload: attachment(Buffer.from('scan')).payload }),
    invalid: (a) => ({ method: 'POST', url: `/vendor/agency/${a}/client/${client(a)}/attachment`, headers: { ...v1Attachment(), PolicyIndex: '99' }, payload: Buffer.from('x') })
  }
]
// create client has no client in its path.
for (const op of OPS.filter((o) => o.name === 'create client')) {
  const { valid, invalid } = op
  op.valid = (a) => ({ ...valid(a), url: `/vendor/agency/${a}/client?version=4.0` })
  op.invalid = (a) => ({ ...invalid(a), url: `/vendor/agency/${a}/client?version=4.0` })
}

async function send (app: FastifyInstance, req: Request, auth: string | undefined) {
  const headers: Record<string, string> = { ...(req.headers ?? {}) }
  if (auth !== undefined) headers.authorization = auth
  return app.inject({ method: req.method, url: req.url, headers, payload: req.payload as string })
}

// ------------------------------------------------------------------------------------------------
// The matrix
// ------------------------------------------------------------------------------------------------

t.test('the fixture is the world the README describes', async (t) => {
  const allowed = (clientId: string) => AGENCY_IDS.filter((a) => access(clientId, a).available)
  t.same(allowed('abc'), [AGENCY.main, AGENCY.limited, AGENCY.disconnected])
  t.same(allowed('northwind-crm'), [AGENCY.main, AGENCY.northwindOnly])
  t.same(allowed('idle-vendor'), [])
  t.same([...access('northwind-crm', AGENCY.main).scopes], ['client-read'])
  t.notOk(access('abc', AGENCY.limited).scopes.has('client-create'))
  t.notOk(access('abc', AGENCY.limited).scopes.has('user-list'))
  t.ok(ownedStrings() > 1000, `${ownedStrings()} strings belong to exactly one agency`)
  // The leak check itself: another agency's client is seen, the asked agency's own is not.
  t.ok(foreignStrings(liveClient(AGENCY.northwindOnly), AGENCY.main).length > 10, 'a 2001 client in an answer about 1001 is flagged')
  t.same(foreignStrings(liveClient(AGENCY.main), AGENCY.main), [], 'a 1001 client in an answer about 1001 is not')
  t.ok(foreignStrings(agencyOf(AGENCY.limited)!.users, AGENCY.main).length > 0, "1002's users in an answer about 1001 are flagged")
})

t.test('agency list: exactly the available agencies, with their scopes, in every version', async (t) => {
  const app = await build(t)
  for (const { clientId, auth } of INTEGRATIONS) {
    const expected = AGENCY_IDS.filter((a) => access(clientId, a).available)
    for (const v of ['4.0', '3.0', '1'] as const) {
      const res = await app.inject({ url: `/vendor/agencies${q(v)}`, headers: { authorization: auth } })
      t.equal(res.statusCode, 200, `${clientId} ${v}`)
      // 4.0 lists {agencyId, scopes}; 3.0 and 1 list bare ids.
      const body = (res.json() as ({ agencyId: number; scopes: string[] } | number)[]).map((a) => (typeof a === 'number' ? { agencyId: a } : a))
      t.same(body.map((a) => a.agencyId).sort(), expected, `${clientId} ${v}: lists ${expected.join(', ') || 'nothing'}`)
      for (const a of body) {
        if ('scopes' in a) t.same([...a.scopes].sort(), [...access(clientId, a.agencyId).scopes].sort(), `${clientId} ${v}: scopes of ${a.agencyId}`)
      }
      t.same(foreignStrings(body, null), [], `${clientId} ${v}: no agency data in the list`)
    }
  }
  for (const bad of [undefined, basic('abc', 'wrong'), basic('northwind-crm', '123'), basic('idle-vendor', 'nw-sandbox-secret'), basic('nobody', 'x'), 'Bearer 123']) {
    const res = await app.inject({ url: '/vendor/agencies?version=4.0', headers: bad === undefined ? {} : { authorization: bad } })
    t.equal(res.statusCode, 401, `credentials ${bad ?? '(none)'}: 401`)
    t.equal(res.body, UNAUTHORIZED)
  }
})

t.test('matrix: integration x agency x endpoint', async (t) => {
  const app = await build(t)
  let cells = 0
  const allowedCells: string[] = []
  for (const { clientId, auth } of INTEGRATIONS) {
    for (const agencyId of AGENCY_IDS) {
      const { available, scopes } = access(clientId, agencyId)
      const disconnected = agencyOf(agencyId)?.connected === false
      for (const op of OPS) {
        const cell = `${clientId} x ${agencyId} x ${op.name} ${op.version}`
        const scopeMissing = available && op.scope !== undefined && !scopes.has(op.scope)
        cells++
        for (const [variant, req] of [['valid', op.valid(agencyId)], ['invalid', op.invalid(agencyId)]] as const) {
          const res = await send(app, req, auth)
          const what = `${cell} (${variant} request): ${res.statusCode} ${res.body.slice(0, 140)}`
          if (!available) {
            t.equal(res.statusCode, 403, what)
            t.equal(res.body, UNAVAILABLE, `${cell} (${variant}): the documented sentence, never why`)
            t.match(res.headers['content-type'], /^text\/plain/)
          } else if (scopeMissing) {
            t.equal(res.statusCode, 403, what)
            t.match(res.headers['content-type'], /^application\/problem\+json/, `${cell} (${variant}): a problem body`)
            t.match(res.json().detail, op.scope!, `${cell} (${variant}): names the ${op.scope} scope`)
          } else if (variant === 'valid') {
            const expected = op.write && disconnected && op.name !== 'create client' ? 202 : 200
            t.equal(res.statusCode, expected, what)
            if (res.statusCode === expected) allowedCells.push(cell)
          } else {
            // Allowed, with a wrong request: a request error (or, where nothing could be wrong, an answer), never 401/403/5xx.
            t.ok(res.statusCode < 500 && res.statusCode !== 401 && res.statusCode !== 403, `${cell} (invalid, allowed): ${res.statusCode}`)
          }
          // No answer shows data of another agency, whatever the status.
          let parsed: unknown = res.body
          try {
            parsed = JSON.parse(res.body)
          } catch {
            // text answers are checked as one string
          }
          const foreign = foreignStrings(parsed, agencyId)
          if (foreign.length > 0) t.fail(`${cell} (${variant}): answer holds another agency's data: ${foreign.slice(0, 3).join('; ')}`)
          // The same request with bad credentials: 401 before anything else.
          if (variant === 'valid') {
            const res401 = await send(app, op.valid(agencyId), basic(clientId, 'not-the-secret'))
            if (res401.statusCode !== 401 || res401.body !== UNAUTHORIZED) t.fail(`${cell} with a wrong secret: ${res401.statusCode} ${res401.body.slice(0, 80)}`)
          }
        }
      }
    }
  }
  t.comment(`${cells} cells, ${allowedCells.length} allowed`)
  // abc: 1001 every scope; 1002 no client-create/user-list; 1004 every scope. northwind: 1001 client-read, 2001 every scope.
  const expectedAllowed = INTEGRATIONS.flatMap(({ clientId }) => AGENCY_IDS.flatMap((a) => {
    const { available, scopes } = access(clientId, a)
    return available ? OPS.filter((op) => op.scope === undefined || scopes.has(op.scope)).map((op) => `${clientId} x ${a} x ${op.name} ${op.version}`) : []
  }))
  t.same(allowedCells.sort(), expectedAllowed.sort(), 'exactly the expected cells were allowed')
})

t.test('agency 2001 data never reaches abc, agency 1002 data never reaches northwind', async (t) => {
  const app = await build(t)
  const guids = (id: number) => new Set([...JSON.stringify(agencyOf(id)!.clients).matchAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi)].map((m) => m[0].toLowerCase()))
  const cases = [{ auth: DEMO, who: 'abc', foreign: AGENCY.northwindOnly }, { auth: NORTHWIND, who: 'northwind-crm', foreign: AGENCY.limited }]
  for (const { auth, who, foreign } of cases) {
    const forbidden = guids(foreign)
    t.ok(forbidden.size > 50, `${forbidden.size} GUIDs of agency ${foreign}`)
    let answers = 0
    for (const agencyId of AGENCY_IDS) {
      for (const v of ['4.0', '3.0', '1'] as const) {
        const ids = await app.inject({ url: `/vendor/agency/${agencyId}/clients${q(v)}`, headers: { authorization: auth } })
        const numbers = ids.statusCode === 200 ? (ids.json() as number[]) : Array.from({ length: 40 }, (_, i) => 1000 + i)
        for (let i = 0; i < numbers.length; i += 200) {
          const batch = numbers.slice(i, i + 200)
          for (const url of [`/vendor/agency/${agencyId}/clients${v === '1' ? '' : `?version=${v}&include=Details,People,Contacts,Claims,Policies,Invoices`}`]) {
            const res = await app.inject({ method: 'POST', url, headers: { authorization: auth }, payload: v === '1' ? batch : { clientNumbers: batch } })
            answers++
            const leaked = [...res.body.matchAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi)].map((m) => m[0].toLowerCase()).filter((g) => forbidden.has(g))
            if (leaked.length > 0) t.fail(`${who} reading agency ${agencyId} (${v}) got ${leaked.length} GUIDs of agency ${foreign}, e.g. ${leaked[0]}`)
          }
        }
        for (const url of [`/vendor/agency/${agencyId}/client/1000${q(v)}`, `/vendor/agency/${agencyId}/users?version=4.0`, `/vendor/agency/${agencyId}/offices${q(v)}`]) {
          const res = await app.inject({ url, headers: { authorization: auth } })
          answers++
          const leaked = [...res.body.matchAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi)].filter((m) => forbidden.has(m[0].toLowerCase()))
          if (leaked.length > 0) t.fail(`${who} ${url} got GUIDs of agency ${foreign}`)
        }
      }
      const search = await app.inject({ url: `/vendor/agency/${agencyId}/clients/search?version=4.0&policyNumber=${policyNumber(foreign)}`, headers: { authorization: auth } })
      answers++
      t.notMatch(search.body, policyNumber(foreign), `${who}: searching agency ${agencyId} for a policy number of ${foreign} finds nothing`)
    }
    t.pass(`${who}: ${answers} answers, none with a GUID of agency ${foreign}`)
  }
})

t.test('writes of one integration are recorded under its Client Id only', async (t) => {
  const app = await build(t)
  const a = await send(app, { method: 'POST', url: `/vendor/agency/${AGENCY.main}/client/${client(AGENCY.main)}/log?version=4.0`, payload: logNote() }, DEMO)
  const n = await send(app, { method: 'POST', url: `/vendor/agency/${AGENCY.northwindOnly}/client/${client(AGENCY.northwindOnly)}/log?version=4.0`, payload: logNote() }, NORTHWIND)
  t.equal(a.statusCode, 200)
  t.equal(n.statusCode, 200)
  const list = async (id: number) => (await app.inject({ url: `/_sandbox/agencies/${id}/writes` })).json() as { integration: string }[]
  t.same((await list(AGENCY.main)).map((w) => w.integration), ['abc'])
  t.same((await list(AGENCY.northwindOnly)).map((w) => w.integration), ['northwind-crm'])
})

t.test('regression (found while fuzzing): an agency id such as "+2001" must not let version 1 writes read another agency\'s clients', async (t) => {
  // Was: routes/partner-api/writes.ts called sandbox.writes.policyIdAt(agencyId, clientId, …) for the version 1 log note and
  // attachment before grantOf(request), and the pipeline (src/plugins/vendor.ts) skipped the grant for "+2001" (not
  // /^\d{1,10}$/) while the schema coerced it to 2001: an integration without access learned whether a client existed
  // (404 vs 400 "no policy at index 99") and whether it had a policy (500). Now any answer is the same for every client.
  const app = await build(t)
  const existing = client(AGENCY.northwindOnly)
  for (const { clientId, auth } of INTEGRATIONS.filter((i) => !access(i.clientId, AGENCY.northwindOnly).available)) {
    for (const segment of [`+${AGENCY.northwindOnly}`, `%20${AGENCY.northwindOnly}`, `${AGENCY.northwindOnly}.0`, `0${AGENCY.northwindOnly}`]) {
      const answers: string[] = []
      for (const [clientNumber, index] of [[existing, 99], [999_999, 99], [existing, 0]] as const) {
        const body = { Action: 1, Body: 'b', Description: 'd', RefId: '0e7b2c52-6a55-4d1e-9a49-1d1b2b3c4d5e', TS: '2026-11-20T10:00:00Z', PolicyIndex: index }
        const res = await send(app, { method: 'POST', url: `/vendor/agency/${segment}/client/${clientNumber}`, payload: body }, auth)
        t.ok(res.statusCode === 400 || res.statusCode === 403, `${clientId}, /vendor/agency/${segment}/client/${clientNumber}, PolicyIndex ${index}: ${res.statusCode} ${res.body.slice(0, 100)}`)
        answers.push(`${res.statusCode} ${res.body.replace(String(clientNumber), 'N')}`)
      }
      t.equal(new Set(answers).size, 1, `${clientId} ${segment}: the answers do not depend on agency ${AGENCY.northwindOnly}'s clients (${answers.join(' | ').slice(0, 300)})`)
      const f = attachment(Buffer.from('x'))
      const res = await send(app, {
        method: 'POST', url: `/vendor/agency/${segment}/client/${existing}/attachment`, headers: { ...v1Attachment(), PolicyIndex: '99' }, payload: f.payload
      }, auth)
      t.ok(res.statusCode === 400 || res.statusCode === 403, `${clientId} ${segment}, v1 attachment with PolicyIndex: ${res.statusCode} ${res.body.slice(0, 100)}`)
      t.notMatch(res.body, /policy at index|does not exist/, 'says nothing about the client')
    }
  }
})
