/**
 * What a typed client (a C# sync with System.Text.Json, a Go client generated from an OpenAPI
 * document fixed against the live service) needs of a client answer, per the sandbox contract,
 * section A: the value types, the fields the client model marks non-optional, and the version 1
 * policy shape of the live version 1 sample. `typedProblems` walks one answered client and
 * lists every departure (none: a typed client decodes it).
 */

type Rec = Record<string, any>

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?$/
const UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?Z$/
const int32 = (v: unknown) => Number.isInteger(v) && (v as number) >= -2147483648 && (v as number) <= 2147483647
const isString = (v: unknown) => typeof v === 'string'

/** What every driver the sandbox serves carries besides its personId and personalInfo.status. */
const DRIVER_FIELDS = ['firstName', 'lastName', 'relationship', 'licenseNumber', 'licenseState']

/** The policy fields the client model page marks non-optional, with the type each must have. */
const NON_OPTIONAL: Record<string, (v: unknown) => boolean> = {
  title: isString,
  type: isString,
  applicationType: isString,
  statusDate: (v) => isString(v) && LOCAL.test(v as string),
  paymentPlan: isString,
  premiumMode: isString,
  numberOfTerms: int32,
  program: isString,
  raterCode: int32,
  boats: Array.isArray,
  boatOperators: Array.isArray,
  locationReferences: Array.isArray
}

function detailsProblems (d: Rec | undefined, at: string, out: string[]): void {
  if (d === undefined) return
  if (!(d.agencyNum === undefined || d.agencyNum === null || typeof d.agencyNum === 'string')) out.push(`${at}.details.agencyNum: ${JSON.stringify(d.agencyNum)} (a string or null is due)`)
  if (!int32(d.officeId)) out.push(`${at}.details.officeId: ${JSON.stringify(d.officeId)}`)
}

/** A 3.0/4.0 client. */
function v4Problems (c: Rec, at: string, out: string[]): void {
  if (!int32(c.clientNumber)) out.push(`${at}.clientNumber`)
  detailsProblems(c.details, at, out)
  if (c.details !== undefined && !UTC.test(c.details.modified)) out.push(`${at}.details.modified: ${String(c.details.modified)} (UTC with Z)`)
  for (const group of ['people', 'contacts', 'claims'] as const) {
    for (const [i, r] of (c[group] ?? []).entries()) if (!UTC.test(r.modified)) out.push(`${at}.${group}[${i}].modified: ${String(r.modified)}`)
  }
  for (const [i, p] of ((c.policies ?? []) as Rec[]).entries()) {
    const pt = `${at}.policies[${i}]`
    for (const [field, ok] of Object.entries(NON_OPTIONAL)) if (!ok(p[field])) out.push(`${pt}.${field}: ${JSON.stringify(p[field])}`)
    if (!(p.term === undefined || p.term === null || (typeof p.term === 'string' && /^\d+M$/.test(p.term)))) out.push(`${pt}.term: ${JSON.stringify(p.term)} (a descriptor such as 12M)`)
    if (!int32(p.policyIndex)) out.push(`${pt}.policyIndex`)
    if (!(p.officeId === undefined || p.officeId === null || int32(p.officeId))) out.push(`${pt}.officeId`)
    for (const money of ['premium', 'quotedPremium']) if (!(p[money] === undefined || p[money] === null || typeof p[money] === 'number')) out.push(`${pt}.${money}`)
    if (!GUID.test(p.id)) out.push(`${pt}.id`)
    if (!UTC.test(p.modified)) out.push(`${pt}.modified: ${String(p.modified)} (UTC with Z)`)
    for (const date of ['effectiveDate', 'expirationDate', 'inceptionDate', 'soldDate']) {
      if (!(p[date] === undefined || p[date] === null || LOCAL.test(p[date]))) out.push(`${pt}.${date}: ${String(p[date])} (no zone)`)
    }
    for (const [k, cv] of ((p.coverages ?? []) as Rec[]).entries()) {
      if (!(cv.premium === undefined || cv.premium === null || typeof cv.premium === 'string')) out.push(`${pt}.coverages[${k}].premium: ${JSON.stringify(cv.premium)}`)
    }
    // [A: Drivers] the person and the role, by which production callers find the named insured
    for (const [k, d] of ((p.drivers ?? []) as Rec[]).entries()) {
      const missing = DRIVER_FIELDS.filter((f) => typeof d[f] !== 'string')
      if (!GUID.test(d.personId) || missing.length > 0 || typeof d.personalInfo?.status !== 'string') out.push(`${pt}.drivers[${k}]: ${JSON.stringify(d)}`)
    }
    for (const [k, a] of ((p.additionalInterests ?? []) as Rec[]).entries()) {
      if (!GUID.test(a.id) || typeof a.isPayor !== 'boolean' || !GUID.test(a.parentId) || typeof a.parentType !== 'string' || !int32(a.rank)) {
        out.push(`${pt}.additionalInterests[${k}]: ${JSON.stringify(a)}`)
      }
    }
  }
}

/** Every key of the live version 1 sample's policy, in its order. */
export const V1_SAMPLE_POLICY_KEYS = [
  'id', 'accountNumber', 'agentCode', 'applicationType', 'billingPlan', 'carrier', 'currentPremium', 'daysLapsed', 'effectiveDate',
  'expirationDate', 'inceptionDate', 'isArchived', 'naic', 'officeId', 'paymentPlan', 'policyNumber', 'program', 'quotedPremium', 'rater',
  'soldDate', 'source', 'state', 'type', 'status', 'statusDate', 'subStatus', 'term', 'title', 'displayOrder', 'typeName', 'coverages',
  'linesOfBusiness', 'locations', 'users', 'currentRate', 'discountDefensiveDriverAmount', 'discountMultiCarAmount', 'discountTransferAmount',
  'discountHomeownerAmount', 'discountOtherAmount', 'discountPaidInFullAmount', 'discountRenewalAmount'
]
const V1_LOB_KEYS = ['id', 'calculatedPremium', 'formType', 'policyId', 'code', 'status', 'coverages', 'drivers', 'locations', 'vehicles']

/** Paths of nulls under a value: the version 1 sample has none ("" , 0 or 0001-01-01T00:00:00 instead). */
function nulls (value: unknown, at: string, out: string[]): void {
  if (value === null) out.push(`${at}: null`)
  else if (Array.isArray(value)) value.forEach((v, i) => nulls(v, `${at}[${i}]`, out))
  else if (typeof value === 'object') for (const [k, v] of Object.entries(value as Rec)) nulls(v, `${at}.${k}`, out)
}

/** A version 1 client. */
function v1Problems (c: Rec, at: string, out: string[]): void {
  if (!int32(c.id)) out.push(`${at}.id`)
  detailsProblems(c.details, at, out)
  for (const [i, p] of ((c.policies ?? []) as Rec[]).entries()) {
    const pt = `${at}.policies[${i}]`
    if (JSON.stringify(Object.keys(p)) !== JSON.stringify(V1_SAMPLE_POLICY_KEYS)) out.push(`${pt}: keys ${Object.keys(p).join(',')}`)
    nulls(p, pt, out)
    if (typeof p.term !== 'string' || typeof p.state !== 'string' || typeof p.typeName !== 'string' || typeof p.currentPremium !== 'number' ||
      !int32(p.displayOrder) || typeof p.isArchived !== 'boolean' || !int32(p.rater) || !int32(p.id) || !int32(p.officeId)) {
      out.push(`${pt}: value types`)
    }
    for (const date of ['effectiveDate', 'expirationDate', 'inceptionDate', 'soldDate', 'statusDate']) if (!LOCAL.test(p[date])) out.push(`${pt}.${date}`)
    if (!Array.isArray(p.linesOfBusiness)) out.push(`${pt}.linesOfBusiness`)
    for (const [k, line] of ((p.linesOfBusiness ?? []) as Rec[]).entries()) {
      if (JSON.stringify(Object.keys(line)) !== JSON.stringify(V1_LOB_KEYS)) out.push(`${pt}.linesOfBusiness[${k}]: keys ${Object.keys(line).join(',')}`)
      for (const list of ['coverages', 'drivers', 'locations', 'vehicles']) if (!Array.isArray(line[list])) out.push(`${pt}.linesOfBusiness[${k}].${list}`)
      for (const [n, d] of ((line.drivers ?? []) as Rec[]).entries()) {
        if (typeof d.relationship !== 'string' || typeof d.operatorStatus !== 'string') out.push(`${pt}.linesOfBusiness[${k}].drivers[${n}]: relationship, operatorStatus`)
      }
      for (const [n, v] of ((line.vehicles ?? []) as Rec[]).entries()) {
        for (const [m, cv] of ((v.coverages ?? []) as Rec[]).entries()) {
          if (typeof cv.premium !== 'number' || !int32(cv.displayOrder)) out.push(`${pt}.linesOfBusiness[${k}].vehicles[${n}].coverages[${m}]`)
        }
      }
    }
    for (const [k, cv] of ((p.coverages ?? []) as Rec[]).entries()) if (typeof cv.premium !== 'number') out.push(`${pt}.coverages[${k}].premium`)
  }
}

/** Every departure of one answered client from what typed clients decode ([] when none). */
export function typedProblems (client: Rec, version: '4.0' | '3.0' | '1', at = `client ${String(client.clientNumber ?? client.id)}`): string[] {
  const out: string[] = []
  if (version === '1') v1Problems(client, at, out)
  else v4Problems(client, at, out)
  return out
}
