import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { control, importTo, sandbox, tempDir } from '../helpers/import-instances.js'
import { basic, mismatches, readsOf, type Read } from '../helpers/import-reads.js'

/**
 * `import --anonymize`: no name, e-mail, phone or address of the upstream is left in the file,
 * while shapes, ids, statuses, codes and dates (but dates of birth) are kept, and a policy
 * number searched for still finds its client.
 */

type Rec = Record<string, unknown>
interface State {
  agencies: Array<{ agencyId: number; offices: Rec[]; users: Rec[]; clients: Array<Rec & { clientNumber: number; deleted?: boolean; details: Rec }> }>
}

const ABC_AGENCIES = [1001, 1002, 1004]
const PHONE_TYPES = /Phone|Fax|Pager/
const EMAIL_TYPES = /Email/

/** Values that must not survive anonymising: personal and business data of the upstream. */
function personalValues (state: State): Set<string> {
  const out = new Set<string>()
  const add = (v: unknown) => {
    if (typeof v === 'string' && v.length >= 3) out.add(v)
  }
  for (const a of state.agencies.filter((x) => ABC_AGENCIES.includes(x.agencyId))) {
    for (const o of a.offices) [o.addressLine1, o.city, o.subAgencyName].forEach(add)
    // the agency-level office 0 is described by the agency's name: `<agency name> (primary)`
    for (const o of a.offices) if (o.officeId === 0) add(o.officeDescription)
    for (const u of a.users) [u.firstName, u.lastName, u.email, `${String(u.firstName)} ${String(u.lastName)}`].forEach(add)
    for (const c of a.clients) {
      const d = c.details
      ;[d.companyName, d.dbaName, d.feinNum, d.website].forEach(add)
      for (const addr of [d.mailingAddress, d.physicalAddress] as Array<Rec | null | undefined>) if (addr != null) [addr.address1, addr.city, addr.county].forEach(add)
      for (const p of (c.people ?? []) as Rec[]) [p.firstName, p.lastName, `${String(p.firstName)} ${String(p.lastName)}`, p.driverLicenseNumber].forEach(add)
      for (const k of (c.contacts ?? []) as Rec[]) if (PHONE_TYPES.test(String(k.type)) || EMAIL_TYPES.test(String(k.type))) add(k.data)
      for (const p of (c.policies ?? []) as Rec[]) add(p.policyNumber)
    }
  }
  return out
}

/** Strings the upstream holds in fields that are not replaced (a car make `Ford` may also be someone's name). */
function keptValues (v: unknown, key = '', out: Set<string> = new Set()): Set<string> {
  if (typeof v === 'string' && !REPLACED.has(key)) out.add(v)
  else if (Array.isArray(v)) v.forEach((x) => keptValues(x, key, out))
  else if (v !== null && typeof v === 'object') Object.entries(v).forEach(([k, x]) => keptValues(x, k, out))
  return out
}

function strings (v: unknown, out: Set<string> = new Set()): Set<string> {
  if (typeof v === 'string') out.add(v)
  else if (Array.isArray(v)) v.forEach((x) => strings(x, out))
  else if (v !== null && typeof v === 'object') Object.values(v).forEach((x) => strings(x, out))
  return out
}

/** Fields whose values are replaced; everything else must come through unchanged. */
const REPLACED = new Set(['firstName', 'middleName', 'lastName', 'companyName', 'dbaName', 'name', 'address1', 'address2', 'city', 'zip', 'county',
  'dateOfBirth', 'driverLicenseNumber', 'licenseNumber', 'feinNum', 'website', 'data', 'claimNumber', 'policyNumber', 'loanNumber', 'vin', 'email',
  'addressLine1', 'addressLine2', 'zipcode', 'subAgencyName', 'officeDescription'])
/** Replaced where they hold personal data, kept otherwise (a line of business's name, `Main Office`). */
const MAY_STAY = new Set(['name', 'officeDescription'])

/** Walks both values in step: the same keys in the same order, the same types, equal values outside REPLACED. */
function sameShape (a: unknown, b: unknown, path: string, problems: string[]): void {
  if (problems.length > 10) return
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)
  if (kind(a) !== kind(b)) {
    problems.push(`${path}: ${kind(a)} became ${kind(b)}`)
    return
  }
  if (Array.isArray(a)) {
    if (a.length !== (b as unknown[]).length) problems.push(`${path}: ${a.length} items became ${(b as unknown[]).length}`)
    a.forEach((x, i) => sameShape(x, (b as unknown[])[i], `${path}[${i}]`, problems))
  } else if (kind(a) === 'object') {
    const ka = Object.keys(a as Rec)
    if (ka.join() !== Object.keys(b as Rec).join()) {
      problems.push(`${path}: keys ${ka.join()} became ${Object.keys(b as Rec).join()}`)
      return
    }
    for (const k of ka) {
      const x = (a as Rec)[k]
      const y = (b as Rec)[k]
      if (REPLACED.has(k) && typeof x === 'string') {
        if (x.length > 2 && x === y && !MAY_STAY.has(k)) problems.push(`${path}.${k}: kept ${x}`)
        continue
      }
      sameShape(x, y, `${path}.${k}`, problems)
    }
  } else if (a !== b) problems.push(`${path}: ${String(a)} became ${String(b)}`)
}

const ALL = 'Details,People,Contacts,Claims,Policies,Invoices'

t.test('--anonymize replaces personal data consistently and keeps shapes and ids', async (t) => {
  const dir = tempDir(t)
  const upstream = await sandbox(t)
  const out = join(dir, 'anon.json')
  const run = await importTo(upstream.url, out, ['--anonymize', '--seed', 'partner-7'])
  t.match(run.stdout, /anonymised with seed partner-7/)
  const text = readFileSync(out, 'utf8')

  const again = join(dir, 'anon-again.json')
  await importTo(upstream.url, again, ['--anonymize', '--seed', 'partner-7'])
  t.ok(readFileSync(again).equals(readFileSync(out)), 'the same seed gives the same bytes')
  const other = join(dir, 'anon-other.json')
  await importTo(upstream.url, other, ['--anonymize', '--seed', 'partner-8'])
  t.not(readFileSync(other, 'utf8'), text, 'another seed maps differently')

  const state = await control<State>(upstream.url, 'GET', '/state')
  const personal = personalValues(state)
  const kept = keptValues(state.agencies.map((a) => a.clients))
  const left = [...strings(JSON.parse(text))].filter((v) => personal.has(v) && !kept.has(v))
  t.same(left, [], 'no name, e-mail, phone, address, licence or policy number of the upstream is in the file')

  const served = await sandbox(t, out)
  const up = { url: upstream.url, auth: basic('abc', '123') }
  const anon = { url: served.url, auth: basic('abc', run.secret) }
  const get = async (side: typeof up, path: string) => (await fetch(side.url + path, { headers: { authorization: side.auth } })).json() as Promise<unknown>

  const problems: string[] = []
  for (const a of state.agencies.filter((x) => ABC_AGENCIES.includes(x.agencyId))) {
    const numbers = a.clients.filter((c) => c.deleted !== true).map((c) => c.clientNumber)
    for (let i = 0; i < numbers.length; i += 200) {
      const path = `/vendor/agency/${a.agencyId}/clients?version=4.0&include=${ALL}`
      const body = JSON.stringify({ clientNumbers: numbers.slice(i, i + 200) })
      const [x, y] = await Promise.all([up, anon].map(async (side) =>
        (await fetch(side.url + path, { method: 'POST', headers: { authorization: side.auth, 'content-type': 'application/json' }, body })).json()))
      sameShape(x, y, `agency ${a.agencyId}`, problems)
    }
    sameShape(await get(up, `/vendor/agency/${a.agencyId}/offices?version=4.0`), await get(anon, `/vendor/agency/${a.agencyId}/offices?version=4.0`), `offices ${a.agencyId}`, problems)
  }
  t.same(problems, [], 'every client and office: same keys, types, ids, statuses, codes and dates; only personal fields differ')

  // listings of ids answer alike: ids, times and deletions are kept
  const listings: Read[] = state.agencies.filter((x) => ABC_AGENCIES.includes(x.agencyId))
    .flatMap((a) => readsOf({ agencyId: a.agencyId, offices: [], clients: [], asOfs: ['2026-10-01T00:00:00Z'], policyNumbers: [], users: false }))
  t.same(await mismatches(up, anon, listings.filter((r) => !r.path.includes('offices'))), [], 'changed and deleted ids alike')

  // a policy number searched for still finds its client (and the upstream's number finds nothing)
  const upstreamClient = await get(up, '/vendor/agency/1001/client/1000?version=4.0') as { policies: Array<{ policyNumber: string }> }
  const anonClient = await get(anon, '/vendor/agency/1001/client/1000?version=4.0') as { people: Rec[]; policies: Array<{ policyNumber: string }>; claims: Array<{ policyNumber: string }> }
  for (const [i, p] of anonClient.policies.entries()) {
    t.not(p.policyNumber, upstreamClient.policies[i].policyNumber)
    const found = await get(anon, `/vendor/agency/1001/clients/search?version=4.0&policyNumber=${encodeURIComponent(p.policyNumber)}`) as Array<{ clientNumber: number }>
    t.same(found.map((c) => c.clientNumber), [1000], `search ${p.policyNumber} finds client 1000`)
  }
  t.ok(anonClient.claims.every((c) => anonClient.policies.some((p) => p.policyNumber === c.policyNumber)), "claims still name their policy's (new) number")
  t.same(await get(anon, `/vendor/agency/1001/clients/search?version=4.0&policyNumber=${encodeURIComponent(upstreamClient.policies[0].policyNumber)}`), [])

  // dates of birth move, keeping their order within a client and their format
  const upPeople = (await get(up, '/vendor/agency/1001/client/1000?version=4.0') as { people: Rec[] }).people
  const dob = (p: Rec) => Date.parse(String(p.dateOfBirth))
  t.not(anonClient.people[0].dateOfBirth, upPeople[0].dateOfBirth)
  t.equal(String(anonClient.people[0].dateOfBirth).slice(10), String(upPeople[0].dateOfBirth).slice(10), 'the time part (no zone) is kept')
  t.equal(Math.sign(dob(anonClient.people[0]) - dob(anonClient.people[1])), Math.sign(dob(upPeople[0]) - dob(upPeople[1])), 'order of birth kept')
})
