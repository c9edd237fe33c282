import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { AGENCY, build } from '../helpers/app.js'
import { vendor } from '../helpers/fidelity.js'
import { INCLUDE_SUBSETS } from '../helpers/typed-client-answers.js'
import { createdClientBodies } from '../helpers/writes.js'

/**
 * [A: Nulls] The one raw live answer has no null anywhere, and a production C# sync decodes
 * contacts into non-nullable `int Priority`, `bool AllowMassEmail`, `bool IsBillingContact`: a
 * client the sandbox creates reads back as fixture clients do, each field absent or of its
 * type. The one null the record shows is `contacts[].personId` of a client-level contact.
 * Every answer of created clients is walked: get client, batch and search, in 4.0 and 3.0 with
 * no `include` and each of the 63 combinations of groups, and in version 1.
 */

const NULLS = '[A: Nulls]'

type Rec = Record<string, unknown>

/** Paths of the nulls under `value`, but a client-level contact's personId. */
function nullsOf (value: unknown, at: string, out: string[]): string[] {
  if (value === null) out.push(at)
  else if (Array.isArray(value)) value.forEach((v, i) => nullsOf(v, `${at}[${i}]`, out))
  else if (typeof value === 'object') {
    for (const [key, v] of Object.entries(value as Rec)) {
      if (key === 'personId' && v === null && /\.contacts\[\d+\]$/.test(at)) continue
      nullsOf(v, `${at}.${key}`, out)
    }
  }
  return out
}

async function createAll (app: FastifyInstance): Promise<number[]> {
  const made: number[] = []
  for (const body of createdClientBodies()) {
    const res = await vendor(app, 'POST', `${AGENCY.main}/client`, 'version=4.0', body)
    if (res.statusCode !== 200) throw new Error(`create answered ${res.statusCode}: ${res.body}`)
    made.push(res.json().clientNumber)
  }
  return made
}

/** Every answer of the clients, as `[where, body]`. */
async function everyAnswer (app: FastifyInstance, numbers: number[]): Promise<[string, unknown][]> {
  const answers: [string, unknown][] = []
  const read = async (where: string, method: 'GET' | 'POST', path: string, query: string, body?: object) => {
    const res = await vendor(app, method, `${AGENCY.main}/${path}`, query, body)
    if (res.statusCode !== 200) throw new Error(`${where} answered ${res.statusCode}: ${res.body}`)
    answers.push([where, res.json()])
  }
  for (const version of ['4.0', '3.0'] as const) {
    for (const include of [undefined, ...INCLUDE_SUBSETS]) {
      const query = `version=${version}${include === undefined ? '' : `&include=${include}`}`
      const label = `${version} ${include ?? '(no include)'}`
      for (const n of numbers) await read(`get ${label} ${n}`, 'GET', `client/${n}`, query)
      await read(`batch ${label}`, 'POST', 'clients', query, { clientNumbers: numbers })
      await read(`search ${label}`, 'GET', 'clients/search', `${query}&policyNumber=NEW-POL-0001`)
    }
  }
  for (const n of numbers) await read(`get 1 ${n}`, 'GET', `client/${n}`, '')
  await read('batch 1', 'POST', 'clients', '', numbers)
  return answers
}

t.test(`${NULLS} every answer of a created client, in every version and with every include, has no null but a client-level contact's personId`, async (t) => {
  const app = await build(t)
  const numbers = await createAll(app)
  const answers = await everyAnswer(app, numbers)
  const found = answers.flatMap(([where, body]) => nullsOf(body, where, []))
  t.ok(answers.length > 500, `${answers.length} answers`)
  t.same(found.slice(0, 30), [], `${found.length} nulls`)

  // what is left out is absent, what the request gave is there, and the typed members have their type
  const [full, sparse, bare] = await Promise.all(numbers.map(async (n) =>
    (await vendor(app, 'GET', `${AGENCY.main}/client/${n}`, 'version=4.0&include=Details,People,Contacts,Policies')).json()))
  t.same(full.contacts.map((c: Rec) => [c.type, c.priority, c.isBillingContact, c.allowMassEmail, c.personId === null]),
    [['HomePhone', 1, false, false, true], ['HomeEmail', 1, false, false, false]], 'contacts numbered from 1 per owner, booleans false')
  t.same(sparse.contacts.map((c: Rec) => c.priority), [1, 2, 1, 2], 'the client\'s contacts and each person\'s numbered apart')
  t.notOk('firstName' in sparse.people[0] || 'dateOfBirth' in sparse.people[0] || 'relationship' in sparse.people[0], 'a person\'s fields not given are absent')
  t.same(sparse.details.mailingAddress, { city: 'Bangor', countryCode: 'US' })
  t.notOk('physicalAddress' in sparse.details || 'source' in sparse.details, 'no physical address, no source')
  t.notOk('mailingAddress' in bare.details || 'companyName' in bare.details, 'nothing the request did not give')
  t.same(bare.policies, [])
  t.notOk('status' in full.policies[0], 'the shell has no status')
  t.same(full.policies[0].loBs, [{ code: 'AUTOP', name: 'Private Passenger Automobile' }, { code: 'HOME', name: 'Homeowners' }])
})

t.test(`${NULLS} the created auto shell lists the people with a licence as its drivers, with their person and role`, async (t) => {
  const app = await build(t)
  const [withoutLicence, autob] = (await createAll(app)).slice(0, 2)
  const read = async (n: number, query: string) => (await vendor(app, 'GET', `${AGENCY.main}/client/${n}`, query)).json()
  t.same((await read(withoutLicence, 'version=4.0')).policies[0].drivers, [], 'nobody holds a licence: no driver')
  const client = await read(autob, 'version=4.0')
  const [first, other] = client.people
  t.same(client.policies[0].drivers, [
    { personId: first.id, personalInfo: { status: 'Principal' }, licenseNumber: 'D1234567' },
    { personId: other.id, firstName: 'Ray', personalInfo: { status: 'Principal' }, licenseNumber: 'D7654321' }
  ])
  const v1 = await read(autob, '')
  t.match(v1.policies[0].linesOfBusiness[0].drivers, [
    { personalProfileId: first.legacyId, firstName: '', operatorStatus: 'Principal', licenseNumber: 'D1234567' },
    { personalProfileId: other.legacyId, firstName: 'Ray', operatorStatus: 'Principal', licenseNumber: 'D7654321' }
  ])
})
