import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { NO_DATE } from '../schemas/client.js'

/**
 * The version 1 policy: a shape of its own, as the one raw live answer of the record shows it
 * (version 1, 2021: every key present, "", 0 or 0001-01-01T00:00:00 rather than null; risks
 * under `linesOfBusiness[]`, each with its drivers and vehicles; `state`, `currentPremium`,
 * `typeName`, `displayOrder`, `isArchived`, `rater`; no `modified`; integer ids). Version 1
 * callers read `policies[0].linesOfBusiness[0].drivers`.
 *
 * Each schema lists exactly the keys served, in the sample's order, with the value a key takes
 * when the stored (4.0) policy has nothing for it as its `default`: the mapping reads its keys
 * and empty values from the schema, so the document and the answers cannot drift apart. A
 * pure function of the stored JSON; version 1 is not a hot path.
 */

type Rec = Record<string, unknown>

const Id = (description: string) => Type.Integer({ default: 0, description: `${description} (0: none)` })
const Text = (description?: string) => Type.String({ default: '', ...(description === undefined ? {} : { description }) })
const Zero = (description?: string) => Type.Number({ default: 0, ...(description === undefined ? {} : { description }) })
const Whole = (description?: string) => Type.Integer({ default: 0, ...(description === undefined ? {} : { description }) })
const No = () => Type.Boolean({ default: false })
const DateTime = (description?: string) => Type.String({
  default: NO_DATE,
  description: `${description === undefined ? '' : `${description}; `}a date and time without a zone, ${NO_DATE} when there is none`
})
const List = (items: TSchema = Type.Unknown()) => Type.Array(items, { default: [] })
const closed = (title: string) => ({ additionalProperties: false, title })

export const V1CoverageSchema = Type.Object({
  id: Id('the coverage id'),
  code: Text(),
  description: Text(),
  displayOrder: Whole('position, from 1'),
  limits: Text(),
  deductibles: Text(),
  premium: Zero('a JSON number in version 1'),
  percent: Zero()
}, closed('CoverageV1'))

export const V1DriverSchema = Type.Object({
  id: Id('the driver id'),
  companyDriverNumber: Whole('position, from 1'),
  dateOfBirth: DateTime(),
  yearOfBirth: Whole(),
  educationLevel: Type.String({ default: 'Unknown' }),
  firstName: Text(),
  gender: Text(),
  isArchived: No(),
  lastName: Text(),
  licenseIssueDate: DateTime(),
  licenseNumber: Text(),
  licenseState: Text(),
  maritalStatus: Text(),
  middleName: Text(),
  occupation: Text(),
  personalProfileId: Id("the person's version 1 id"),
  relationship: Text(),
  suffix: Text(),
  type: Type.String({ default: 'PersonalAutoDriver' }),
  canUpdateMVRs: No(),
  impaired: No(),
  operatorStatus: Type.String({ default: 'Principal' }),
  points: Whole(),
  sR22: No(),
  sR22Date: DateTime(),
  sR22Reason: Text(),
  sR22State: Text(),
  mvRs: List()
}, closed('DriverV1'))

export const V1VehicleSchema = Type.Object({
  id: Id('the vehicle id'),
  companyVehicleNumber: Whole('position, from 1'),
  costNew: Zero(),
  isArchived: No(),
  isDeleted: No(),
  isOwnedByInsured: No(),
  lineOfBusinessId: Whole(),
  make: Text(),
  model: Text(),
  territory: Text(),
  totalPremium: Zero(),
  vehicleCoverageType: Type.String({ default: 'Unknown' }),
  vin: Text(),
  year: Text('the model year, as a string'),
  zipCode: Text(),
  type: Type.String({ default: 'PersonalAuto' }),
  coverages: List(V1CoverageSchema),
  airBagType: Type.String({ default: 'None' }),
  assignedDriverId: Whole(),
  autoAntiTheftType: Type.String({ default: 'None' }),
  autoBodyStyle: Text(),
  autoUseType: Type.String({ default: 'Unknown' }),
  collSymbol: Text(),
  compSymbol: Text(),
  driverClass: Text(),
  hasAntiLockBrakes: No(),
  hasAntiLockDiscount: No(),
  hasAntiTheftDiscount: No(),
  hasPassiveRestraintDiscount: No(),
  isInStorage: No(),
  licensePlate: Text(),
  licenseState: Text(),
  symbol: Text(),
  annualMiles: Whole(),
  commuteMiles: Whole(),
  odometerMiles: Whole()
}, closed('VehicleV1'))

export const V1LineOfBusinessSchema = Type.Object({
  id: Id('the line of business id'),
  calculatedPremium: Zero(),
  formType: Text(),
  policyId: Whole(),
  code: Text('the line-of-business code, e.g. AUTOP'),
  status: Type.String({ default: 'Unknown' }),
  coverages: List(V1CoverageSchema),
  drivers: List(V1DriverSchema),
  locations: List(),
  vehicles: List(V1VehicleSchema)
}, closed('LineOfBusinessV1'))

export const V1PolicySchema = Type.Object({
  id: Id("the policy's version 1 id"),
  accountNumber: Text(),
  agentCode: Text(),
  applicationType: Type.String({ default: 'Undefined' }),
  billingPlan: Text(),
  carrier: Text(),
  currentPremium: Zero(),
  daysLapsed: Whole(),
  effectiveDate: DateTime(),
  expirationDate: DateTime(),
  inceptionDate: DateTime(),
  isArchived: No(),
  naic: Text(),
  officeId: Type.Integer({ default: -1, description: 'the office id (-1: none)' }),
  paymentPlan: Text(),
  policyNumber: Text(),
  program: Text(),
  quotedPremium: Zero(),
  rater: Whole(),
  soldDate: DateTime(),
  source: Text(),
  state: Text('the policy state'),
  type: Text(),
  status: Text(),
  statusDate: DateTime(),
  subStatus: Text(),
  term: Text('the term descriptor, e.g. 6M'),
  title: Text(),
  displayOrder: Whole('the 0-based position of the policy'),
  typeName: Text(),
  coverages: List(V1CoverageSchema),
  linesOfBusiness: List(V1LineOfBusinessSchema),
  locations: List(),
  users: List(),
  currentRate: Zero(),
  discountDefensiveDriverAmount: Text(),
  discountMultiCarAmount: Text(),
  discountTransferAmount: Text(),
  discountHomeownerAmount: Text(),
  discountOtherAmount: Text(),
  discountPaidInFullAmount: Text(),
  discountRenewalAmount: Text()
}, closed('PolicyV1'))

const kindOf = (value: unknown) => (Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value)
const SCHEMA_KINDS: Record<string, string> = { string: 'string', integer: 'number', number: 'number', boolean: 'boolean', array: 'array' }

/**
 * A record of `schema`'s keys, in its order: `derived` values first, else the stored record's
 * value of that name when it has the key's JSON type (an integer where one is due), else the
 * key's empty value.
 */
function shaped (schema: TObject, stored: Rec, derived: Rec): Rec {
  const out: Rec = {}
  for (const [key, property] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const given = stored[key]
    const fits = kindOf(given) === SCHEMA_KINDS[String(property.type)] && (property.type !== 'integer' || Number.isInteger(given))
    out[key] = derived[key] !== undefined ? derived[key] : fits ? given : property.type === 'array' ? [] : property.default
  }
  return out
}

const asRecords = (value: unknown): Rec[] =>
  Array.isArray(value) ? value.filter((v): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v)) : []
const legacyOf = (r: Rec | undefined) => (typeof r?.legacyId === 'number' ? r.legacyId : undefined)
const text = (value: unknown) => (typeof value === 'string' ? value : undefined)

/** A coverage: the 4.0 coverage's premium string ("412.00") becomes the number version 1 answers. */
function coverage (c: Rec, position: number): Rec {
  const premium = typeof c.premium === 'string' ? Number(c.premium) : c.premium
  return shaped(V1CoverageSchema, c, {
    id: legacyOf(c),
    displayOrder: position + 1,
    premium: typeof premium === 'number' && Number.isFinite(premium) ? premium : 0
  })
}

/** A driver: the person it names (by GUID) gives its name, birth date and the rest. */
function driver (d: Rec, position: number, people: ReadonlyMap<string, Rec>): Rec {
  const person = typeof d.personId === 'string' ? people.get(d.personId.toLowerCase()) : undefined
  const birth = text(d.dateOfBirth) ?? text(person?.dateOfBirth)
  const fromPerson: Rec = {}
  for (const key of ['firstName', 'middleName', 'lastName', 'gender', 'maritalStatus', 'occupation', 'relationship']) {
    if (text(d[key]) === undefined && text(person?.[key]) !== undefined) fromPerson[key] = person![key]
  }
  const info = d.personalInfo !== null && typeof d.personalInfo === 'object' ? d.personalInfo as Rec : undefined
  return shaped(V1DriverSchema, d, {
    ...fromPerson,
    operatorStatus: text(info?.status),
    id: legacyOf(d),
    companyDriverNumber: position + 1,
    dateOfBirth: birth,
    yearOfBirth: birth === undefined ? undefined : Number(birth.slice(0, 4)),
    personalProfileId: legacyOf(person)
  })
}

/**
 * The policy's coverages as one of its `count` vehicles carries them: each premium shared among
 * the vehicles, in cents, the first vehicle taking what does not divide.
 */
function shareOf (coverages: Rec[], position: number, count: number): Rec[] {
  return coverages.map((c) => {
    const premium = typeof c.premium === 'string' ? Number(c.premium) : c.premium
    if (typeof premium !== 'number' || !Number.isFinite(premium)) return c
    const cents = Math.round(premium * 100)
    const each = Math.trunc(cents / count)
    return { ...c, premium: (each + (position === 0 ? cents - each * count : 0)) / 100 }
  })
}

/** A vehicle with its own coverages, else its share of the policy's (`shared`). */
function vehicle (v: Rec, position: number, shared: Rec[], count: number): Rec {
  const own = asRecords(v.coverages)
  return shaped(V1VehicleSchema, v, {
    id: legacyOf(v),
    companyVehicleNumber: position + 1,
    year: typeof v.year === 'number' ? String(v.year) : undefined,
    coverages: (own.length > 0 ? own : shareOf(shared, position, count)).map(coverage)
  })
}

/**
 * The version 1 policy of a stored (4.0) policy. The risks (drivers and vehicles) go under the
 * first line of business, as the sample has them; the policy's coverages stay on the policy,
 * but an auto policy's go on its vehicles. A driver's operator status is its `personalInfo.status`.
 * `people` are the client's people by lower-case GUID, for the drivers.
 */
export function toV1Policy (p: Rec, people: ReadonlyMap<string, Rec>): Rec {
  const autos = asRecords(p.autos)
  const lines = asRecords(p.loBs)
  // version 1 carries an auto policy's coverages on its vehicles (the live sample's auto policy
  // lists none of its own): a stored auto's own, else each vehicle its share of the policy's
  const onVehicles = lines.length > 0 && autos.length > 0 && autos.every((a) => asRecords(a.coverages).length === 0)
  const policyCoverages = onVehicles ? [] : asRecords(p.coverages)
  const shared = onVehicles ? asRecords(p.coverages) : []
  const v1Lines = lines.map((line, i) => shaped(V1LineOfBusinessSchema, line, {
    id: legacyOf(line),
    coverages: [],
    drivers: i === 0 ? asRecords(p.drivers).map((d, n) => driver(d, n, people)) : [],
    locations: [],
    vehicles: i === 0 ? autos.map((a, n) => vehicle(a, n, shared, autos.length)) : []
  }))
  return shaped(V1PolicySchema, p, {
    id: legacyOf(p),
    agentCode: text(p.agentCode) ?? text(p.agent1),
    currentPremium: typeof p.premium === 'number' ? p.premium : undefined,
    rater: typeof p.raterCode === 'number' ? p.raterCode : undefined,
    state: text(p.policyState),
    displayOrder: typeof p.policyIndex === 'number' ? p.policyIndex : undefined,
    typeName: text(p.typeName) ?? text(p.type),
    coverages: policyCoverages.map(coverage),
    linesOfBusiness: v1Lines,
    locations: asRecords(p.locations)
  })
}
