import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { generateFixture } from '../../src/fixture/generate.js'
import { NO_DATE } from '../../src/schemas/client.js'
import { AGENCY, build, demoFixture } from '../helpers/app.js'
import { vendor } from '../helpers/fidelity.js'
import { typedProblems } from '../helpers/typed-answers.js'
import { createClientBody } from '../helpers/writes.js'

/**
 * Facts of the public record that typed clients depend on (sandbox contract, section A): a
 * production C# sync (System.Text.Json) and a Go client generated from an OpenAPI document fixed
 * against the live service throw on every read that carries a JSON number where they declare a
 * string, or lacks a field the client model marks non-optional. Every read of every version
 * (get, batch, search; 4.0, 3.0 and 1) is walked field by field (test/helpers/typed-answers.ts),
 * over the demo data, a generated fixture, a created client and clients the agency side changes.
 */

const VALUE_TYPES = '[A: Value types that typed clients depend on]'
const NON_OPTIONAL = '[A: The client model page marks these policy fields non-optional]'
const V1_SAMPLE = '[A: The one raw live answer in the record (version 1, 2021)]'
const ALL_GROUPS = 'include=Details,People,Contacts,Claims,Policies,Invoices'

interface Walked { problems: string[]; clients: number; policies: number; drivers: number }

/** Reads the clients every way each version allows and walks every answer. */
async function readEveryWay (app: FastifyInstance, agencyId: number, numbers: number[], policyNumbers: string[], singles = 25): Promise<Walked> {
  const walked: Walked = { problems: [], clients: 0, policies: 0, drivers: 0 }
  const walk = (answer: unknown, version: '4.0' | '3.0' | '1', where: string) => {
    for (const client of Array.isArray(answer) ? answer : [answer]) {
      walked.clients++
      walked.policies += (client.policies ?? []).length
      if (version === '1') walked.drivers += (client.policies ?? []).reduce((n: number, p: any) => n + (p.linesOfBusiness?.[0]?.drivers?.length ?? 0), 0)
      walked.problems.push(...typedProblems(client, version).map((p) => `${where}: ${p}`))
    }
  }
  for (const version of ['4.0', '3.0', '1'] as const) {
    const query = version === '1' ? '' : `version=${version}&${ALL_GROUPS}`
    for (const n of numbers.slice(0, singles)) {
      const res = await vendor(app, 'GET', `${agencyId}/client/${n}`, query)
      t.equal(res.statusCode, 200)
      walk(res.json(), version, `get ${version}`)
    }
    for (let i = 0; i < numbers.length; i += 200) {
      const chunk = numbers.slice(i, i + 200)
      const res = await vendor(app, 'POST', `${agencyId}/clients`, query, version === '1' ? chunk : { clientNumbers: chunk })
      t.equal(res.statusCode, 200)
      walk(res.json(), version, `batch ${version}`)
    }
    if (version === '1') continue
    for (const policyNumber of policyNumbers) {
      const res = await vendor(app, 'GET', `${agencyId}/clients/search`, `${query}&policyNumber=${encodeURIComponent(policyNumber)}`)
      walk(res.json(), version, `search ${version}`)
    }
  }
  return walked
}

const liveNumbers = (app: FastifyInstance, agencyId: number) =>
  vendor(app, 'GET', `${agencyId}/clients`, 'version=4.0').then((res) => res.json() as number[])

t.test(`${VALUE_TYPES} ${NON_OPTIONAL} ${V1_SAMPLE} every read of the demo data in every version`, async (t) => {
  const app = await build(t)
  for (const agency of demoFixture().agencies.filter((a) => [AGENCY.main, AGENCY.limited].includes(a.agencyId as 1001))) {
    const numbers = await liveNumbers(app, agency.agencyId)
    const policyNumbers = agency.clients.filter((c) => !c.deleted).slice(0, 10).flatMap((c) => (c.policies ?? []).map((p) => p.policyNumber))
    const walked = await readEveryWay(app, agency.agencyId, numbers, policyNumbers)
    t.same(walked.problems.slice(0, 20), [], `agency ${agency.agencyId}: ${walked.clients} answers, ${walked.policies} policies`)
    t.ok(walked.policies > 100 && walked.drivers > 0, 'policies with drivers among them')
  }
})

t.test(`${VALUE_TYPES} ${NON_OPTIONAL} every read of a generated fixture, and of clients the agency side changes`, async (t) => {
  const fixture = generateFixture({ agencies: 1, clients: 60, seed: 11 })
  const app = await build(t, { fixture })
  const agencyId = fixture.agencies[0].agencyId
  // the simulator adds policies and clients of its own
  await app.inject({ method: 'PUT', url: '/_sandbox/clock', payload: { now: '2026-11-01T00:00:00Z', frozen: true } })
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/simulator', payload: { ratePerMinute: 60, seed: 3, clockTime: true } })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/_sandbox/clock/advance', payload: { seconds: 3600 } })).statusCode, 200)
  const numbers = await liveNumbers(app, agencyId)
  const policyNumbers = fixture.agencies[0].clients.slice(0, 10).flatMap((c) => (c.policies ?? []).map((p) => p.policyNumber))
  const walked = await readEveryWay(app, agencyId, numbers, policyNumbers, numbers.length)
  t.same(walked.problems.slice(0, 20), [], `${walked.clients} answers, ${walked.policies} policies`)
  t.ok(numbers.length > 60, `the simulator added clients (${numbers.length})`)
})

t.test(`${VALUE_TYPES} ${NON_OPTIONAL} a created client and its policy shell, in every version`, async (t) => {
  const app = await build(t)
  const made: number[] = []
  for (const Policy of [
    { PolicyNumber: 'NEW-POL-0001', LOBs: ['AUTOP', 'HOME'], EffectiveDate: '2026-12-01', State: 'ME', ApplicationType: 'Personal' },
    { LOBs: [] }
  ]) {
    const res = await vendor(app, 'POST', `${AGENCY.main}/client`, 'version=4.0', createClientBody({ Policy }))
    t.equal(res.statusCode, 200, res.body)
    made.push(res.json().clientNumber)
  }
  const walked = await readEveryWay(app, AGENCY.main, made, ['NEW-POL-0001'])
  t.same(walked.problems, [], `${walked.clients} answers`)

  const [withPolicy, bare] = await Promise.all(made.map(async (n) => (await vendor(app, 'GET', `${AGENCY.main}/client/${n}`, 'version=4.0')).json()))
  t.match(withPolicy.details, { agencyNum: String(AGENCY.main) }, 'agencyNum is the agency number as a string')
  t.match(withPolicy.policies[0], {
    title: '',
    type: '',
    applicationType: 'Personal',
    statusDate: NO_DATE,
    paymentPlan: '',
    premiumMode: '',
    numberOfTerms: 0,
    program: '',
    raterCode: 0,
    boats: [],
    boatOperators: [],
    locationReferences: [],
    effectiveDate: '2026-12-01T00:00:00'
  })
  t.equal(bare.policies[0].applicationType, 'Undefined', "a shell without ApplicationType reads as the enum's empty member")
  const v1 = (await vendor(app, 'GET', `${AGENCY.main}/client/${made[0]}`, '')).json()
  t.same(v1.policies[0].linesOfBusiness.map((l: { code: string; drivers: unknown[] }) => [l.code, l.drivers]), [['AUTOP', []], ['HOME', []]])
  t.match(v1.policies[0], { policyNumber: 'NEW-POL-0001', state: 'ME', currentPremium: 0, soldDate: NO_DATE, term: '', officeId: withPolicy.details.officeId })

  // the agency side writes a policy without the new fields (read-model form of the control API)
  const put = await app.inject({
    method: 'PATCH',
    url: `/_sandbox/agencies/${AGENCY.main}/clients/${made[1]}`,
    payload: { details: { agencyNum: 1001 }, policies: [{ id: '6f1c3f0e-8e0b-4a57-9d7e-2f7f9f6b1a01', modified: '2026-11-20T10:00:00Z', policyNumber: 'OLD-1', term: 6, additionalInterests: [{ name: 'Bank' }] }] }
  })
  t.equal(put.statusCode, 200, put.body)
  const after = await readEveryWay(app, AGENCY.main, [made[1]], ['OLD-1'])
  t.same(after.problems, [], 'a policy written in the earlier form reads complete')
  const patched = (await vendor(app, 'GET', `${AGENCY.main}/client/${made[1]}`, 'version=4.0')).json()
  t.match(patched, { details: { agencyNum: '1001' }, policies: [{ term: '6M', title: '', additionalInterests: [{ isPayor: false, parentType: 'Policy', rank: 1, parentId: '6f1c3f0e-8e0b-4a57-9d7e-2f7f9f6b1a01' }] }] })
})

t.test(`${V1_SAMPLE} the public version 1 caller reads policies[0].linesOfBusiness[0].drivers and .vehicles`, async (t) => {
  const app = await build(t)
  const c = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients
    .find((x) => !x.deleted && x.policies?.[0]?.loBs?.[0]?.code === 'AUTOP' && (x.policies[0].drivers ?? []).length > 0)!
  const body = (await vendor(app, 'GET', `${AGENCY.main}/client/${c.clientNumber}`, '')).json()
  const line = body.policies[0].linesOfBusiness[0]
  const stored = c.policies![0]
  t.equal(line.code, 'AUTOP')
  t.equal(line.drivers.length, stored.drivers!.length, 'the policy drivers')
  t.equal(line.vehicles.length, stored.autos!.length, 'the policy autos, as vehicles')
  const person = c.people!.find((p) => p.id === (stored.drivers![0] as { personId: string }).personId)!
  t.match(line.drivers[0], { companyDriverNumber: 1, firstName: person.firstName, lastName: person.lastName, dateOfBirth: person.dateOfBirth, personalProfileId: person.legacyId })
  t.match(line.vehicles[0], { companyVehicleNumber: 1, make: (stored.autos![0] as { make: string }).make, year: String((stored.autos![0] as { year: number }).year) })
  t.match(body.policies[0], { id: stored.legacyId, term: stored.term, state: stored.policyState, currentPremium: stored.premium, typeName: stored.type, displayOrder: 0, isArchived: false, rater: 0 })
  t.notOk('modified' in body.policies[0])
})

const DRIVERS = '[A: Drivers]'
const V1_VEHICLES = '[A: v1 vehicles]'

t.test(`${DRIVERS} a production v4 mapper finds the named insured among an auto policy's drivers by relationship, status and name`, async (t) => {
  const app = await build(t)
  const numbers = await liveNumbers(app, AGENCY.main)
  const clients = (await vendor(app, 'POST', `${AGENCY.main}/clients`, 'version=4.0', { clientNumbers: numbers.slice(0, 200) })).json() as any[]
  let autoPolicies = 0
  let found = 0
  for (const c of clients) {
    const insured = (c.people ?? []).find((p: any) => p.relationship === 'Insured')
    for (const p of c.policies ?? []) {
      if (p.title !== 'AUTOP' || insured?.driverLicenseNumber === undefined) continue
      autoPolicies++
      const named = (p.drivers ?? []).find((d: any) => d.relationship === 'Insured' && d.personalInfo?.status !== 'Excluded')
      if (named?.firstName === insured.firstName && named?.lastName === insured.lastName && named?.personId === insured.id) found++
    }
  }
  t.ok(autoPolicies > 20, `${autoPolicies} personal auto policies whose insured holds a licence`)
  t.equal(found, autoPolicies, 'the named insured is among the drivers of each')
  const statuses = new Set(clients.flatMap((c) => (c.policies ?? []).flatMap((p: any) => (p.drivers ?? []).map((d: any) => d.personalInfo.status))))
  t.ok(statuses.has('Principal') && statuses.has('Occasional'), `operator statuses: ${[...statuses].join(', ')}`)
})

t.test(`${DRIVERS} a fixture driver that names its person reads with that person's name and relationship, in 4.0 and version 1`, async (t) => {
  const fixture = demoFixture()
  const client = fixture.agencies.find((a) => a.agencyId === AGENCY.main)!.clients.find((c) => !c.deleted && (c.people ?? []).length > 1)!
  const [first, second] = client.people!
  const policy = client.policies![0]
  // a fixture of the earlier form: the person named, a null left over, no status
  policy.drivers = [{ personId: first.id }, { personId: second.id.toUpperCase(), firstName: 'Nick', licenseNumber: null } as never, { firstName: 'Pat', licenseState: 'MA' }]
  const app = await build(t, { fixture })
  const v4 = (await vendor(app, 'GET', `${AGENCY.main}/client/${client.clientNumber}`, 'version=4.0')).json()
  t.same(v4.policies[0].drivers[0], {
    personId: first.id,
    firstName: first.firstName,
    lastName: first.lastName,
    relationship: first.relationship,
    personalInfo: { status: 'Principal' },
    ...(first.driverLicenseNumber === undefined ? {} : { licenseNumber: first.driverLicenseNumber })
  }, 'the person\'s name, relationship and licence; Principal when no status is given')
  t.match(v4.policies[0].drivers[1], { firstName: 'Nick', lastName: second.lastName, relationship: second.relationship }, 'what the driver gives is kept')
  t.notOk('licenseNumber' in v4.policies[0].drivers[1] && v4.policies[0].drivers[1].licenseNumber === null, 'no null')
  t.same(v4.policies[0].drivers[2], { firstName: 'Pat', personalInfo: { status: 'Principal' }, licenseState: 'MA' }, 'a driver naming no person keeps what it gives')
  const v1 = (await vendor(app, 'GET', `${AGENCY.main}/client/${client.clientNumber}`, '')).json()
  if (v1.policies[0].linesOfBusiness.length > 0) {
    t.match(v1.policies[0].linesOfBusiness[0].drivers[0], { firstName: first.firstName, relationship: first.relationship, operatorStatus: 'Principal', personalProfileId: first.legacyId })
  }
})

t.test(`${V1_VEHICLES} ${V1_SAMPLE} version 1 vehicles carry the auto policy's coverages (BI, PD, PIP, UM, UMPD, COMP, COLL), premiums shared among them`, async (t) => {
  const app = await build(t)
  const clients = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients.filter((c) => !c.deleted)
  const autos = clients.flatMap((c) => (c.policies ?? []).map((p, i) => ({ c, p, i }))).filter(({ p }) => p.title === 'AUTOP' && (p.autos ?? []).length > 0)
  t.ok(autos.length > 20, `${autos.length} auto policies with vehicles`)
  const codes = new Set<string>()
  let vehicles = 0
  for (const { c, p, i } of autos.slice(0, 40)) {
    const v1 = (await vendor(app, 'GET', `${AGENCY.main}/client/${c.clientNumber}`, '')).json().policies[i]
    t.same(v1.coverages, [], 'the auto policy lists no coverages of its own, as in the sample')
    for (const vehicle of v1.linesOfBusiness[0].vehicles) {
      vehicles++
      t.same(vehicle.coverages.map((cv: any) => cv.code), (p.coverages ?? []).map((cv) => cv.code), 'each vehicle carries the policy\'s coverages')
      t.same(vehicle.coverages.map((cv: any) => cv.displayOrder), vehicle.coverages.map((_: unknown, n: number) => n + 1))
      for (const cv of vehicle.coverages) codes.add(cv.code)
    }
    for (const [n, stored] of (p.coverages ?? []).entries()) {
      const shared = v1.linesOfBusiness[0].vehicles.reduce((sum: number, v: any) => sum + Math.round(v.coverages[n].premium * 100), 0)
      t.equal(shared, Math.round(Number(stored.premium) * 100), `${stored.code}: the vehicles' premiums add up to the policy's`)
    }
  }
  t.ok(vehicles > 20, `${vehicles} vehicles`)
  t.same([...codes].sort(), ['BI', 'COLL', 'COMP', 'PD', 'PIP', 'UM', 'UMPD'])
})
