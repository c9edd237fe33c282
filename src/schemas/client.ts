import { Type, type Static } from '@sinclair/typebox'
import {
  APPLICATION_TYPES, BUSINESS_TYPES, CLIENT_STATUSES, CONTACT_TYPES, Guid,
  Int32, MAIN_CONTACT_TYPES, Nullable, literalUnion
} from './common.js'
import { LOCAL_DATE_TIME, UTC_DATE_TIME, localDateTime, markFormerValue, nullAsAbsent, numberAsText, textAsInteger, utcDateTime } from './former-values.js'

/**
 * The client read model of versions 3.0 and 4.0, camelCase as the live service answers.
 * Records are open (additionalProperties allowed): the live model has more fields than the
 * public record shows, and partners may add them to their fixtures.
 *
 * The value types are the ones typed clients decode with (a C# sync with System.Text.Json, a Go
 * client generated from an OpenAPI document fixed against the live service): a JSON number
 * where they declare a string makes them throw on every read. A field that a fixture of the
 * earlier format may hold in another type carries a mark saying how it converts
 * (src/schemas/former-values.ts).
 */
const open = { additionalProperties: true }
const Str = Nullable(Type.String())
const Num = Nullable(Type.Number())
const Bool = Type.Boolean()
/** A date as the live service writes it: date-only, or a date-time with or without zone. */
const LooseDate = Nullable(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}' }))
/** `modified`: UTC with `Z`, as the live service writes every record's. */
const Modified = markFormerValue(Type.String({
  pattern: UTC_DATE_TIME.source,
  description: 'the time of the latest change, UTC with Z, e.g. 2026-10-24T08:48:24.008Z',
  examples: ['2026-10-24T08:48:24.008Z']
}), utcDateTime)
/** A policy date: without a zone, as the live service writes them (0001-01-01T00:00:00: none). */
export const PolicyDate = markFormerValue(Type.String({
  pattern: LOCAL_DATE_TIME.source,
  description: 'a date and time without a zone, e.g. 2024-10-08T00:00:00',
  examples: ['2024-10-08T00:00:00']
}), localDateTime)
/** The value a date the agency has no value for reads as (.NET's DateTime.MinValue). */
export const NO_DATE = '0001-01-01T00:00:00'

export const AddressSchema = Type.Object(
  {
    address1: Type.Optional(Str),
    address2: Type.Optional(Str),
    city: Type.Optional(Str),
    state: Type.Optional(Str),
    zip: Type.Optional(Str),
    county: Type.Optional(Str),
    countryCode: Type.Optional(Str)
  },
  { ...open, title: 'Address' }
)

export const ClientDetailsSchema = Type.Object(
  {
    id: Guid,
    modified: Modified,
    clientType: Type.Optional(Str),
    status: literalUnion(CLIENT_STATUSES),
    isPersonal: Bool,
    isCommercial: Bool,
    companyName: Type.Optional(Str),
    dbaName: Type.Optional(Str),
    businessType: Type.Optional(Nullable(literalUnion(BUSINESS_TYPES))),
    feinNum: Type.Optional(Str),
    website: Type.Optional(Str),
    licenseNum: Type.Optional(Type.String({ description: 'the business licence number a created client was given' })),
    naics: Type.Optional(Type.String({ description: 'the NAICS code a created client was given' })),
    agencyNum: Type.Optional(Nullable(Type.String({ description: 'a string (never a JSON number)', examples: ['1001'] }))),
    officeId: Int32(),
    clientSince: Type.Optional(LooseDate),
    allowCrossSell: Type.Optional(Bool),
    source: Type.Optional(Str),
    producer: Type.Optional(Str),
    csr: Type.Optional(Str),
    mainContacts: Type.Optional(Type.Array(Guid)),
    mailingAddress: Type.Optional(Nullable(AddressSchema)),
    physicalAddress: Type.Optional(Nullable(AddressSchema))
  },
  { ...open, title: 'ClientDetails' }
)

const annotatedGuid = (description: string) => Type.String({ pattern: Guid.pattern, description, examples: Guid.examples })

const recordBase = { id: Guid, modified: Modified, legacyId: Type.Optional(Int32({ description: 'the version 1 integer id' })) }

export const PersonSchema = Type.Object(
  {
    ...recordBase,
    title: Type.Optional(Str),
    firstName: Type.Optional(Str),
    middleName: Type.Optional(Str),
    lastName: Type.Optional(Str),
    mainContactType: literalUnion(MAIN_CONTACT_TYPES),
    relationship: Type.Optional(Str),
    dateOfBirth: Type.Optional(LooseDate),
    gender: Type.Optional(Str),
    occupation: Type.Optional(Str),
    maritalStatus: Type.Optional(Str),
    driverLicenseNumber: Type.Optional(Str)
  },
  { ...open, title: 'Person' }
)

export const ContactSchema = Type.Object(
  {
    ...recordBase,
    type: literalUnion(CONTACT_TYPES),
    data: Type.String(),
    personId: Nullable(Guid),
    description: Type.Optional(Str),
    isBillingContact: Type.Optional(Bool),
    allowMassEmail: Type.Optional(Bool),
    // never null: a production C# sync declares int Priority (a former fixture's null is left out)
    priority: Type.Optional(markFormerValue(Int32({ description: 'the order of the contact among its owner\'s, from 1', examples: [1] }), nullAsAbsent()))
  },
  { ...open, title: 'Contact' }
)

export const ClaimSchema = Type.Object(
  {
    ...recordBase,
    claimNumber: Type.Optional(Str),
    claimStatus: Type.Optional(Str),
    lossDate: Type.Optional(LooseDate),
    lossAmount: Type.Optional(Num),
    policyNumber: Type.Optional(Str)
  },
  { ...open, title: 'Claim' }
)

export const LobSchema = Type.Object({ code: Type.String(), name: Str }, { ...open, title: 'LineOfBusiness' })
export const CoverageSchema = Type.Object(
  {
    code: Type.Optional(Str),
    description: Type.Optional(Str),
    limits: Type.Optional(Str),
    deductibles: Type.Optional(Str),
    // a string on the wire, as the live service sends it ("412.00")
    premium: Type.Optional(Nullable(markFormerValue(
      Type.String({ description: 'a decimal amount as a string, e.g. 412.00', examples: ['412.00'] }),
      numberAsText((n) => n.toFixed(2))
    )))
  },
  { ...open, title: 'Coverage' }
)

/** What an additional interest says of itself beyond its place: every field an answer may carry. */
export const additionalInterestDetails = {
  type: Type.Optional(Type.String({ description: 'the kind of interest, e.g. Mortgagee, Lienholder', examples: ['Mortgagee'] })),
  name: Type.Optional(Type.String({ description: 'the interested party, e.g. the lender', examples: ['PNC Bank NA'] })),
  loanNumber: Type.Optional(Type.String({ description: 'the loan the interest secures', examples: ['8716442317'] })),
  vehicleNumber: Type.Optional(Int32({ description: 'the vehicle of the policy (its position in autos, from 1) a lienholder holds', examples: [1] }))
}

export const AdditionalInterestSchema = Type.Object(
  {
    id: Guid,
    isPayor: Bool,
    parentId: Guid,
    parentType: Type.String({ description: 'what the interest is attached to', examples: ['Policy'] }),
    rank: Int32({ description: 'its order among the interests of its parent, from 1', examples: [1] }),
    ...additionalInterestDetails
  },
  { ...open, title: 'AdditionalInterest', description: 'a mortgagee, lienholder or other party with an interest in the policy' }
)

/**
 * A driver of a policy: the person of the client it is (`personId`) and that person's name and
 * relationship, its operator status (`personalInfo.status`), and its licence. Production callers
 * find the named insured among the drivers by relationship, status and name. Every field is
 * absent or of its type, never null; a driver naming a person takes what it lacks from that
 * person when it is stored (src/fixture/complete.ts).
 */
export const DriverSchema = Type.Object(
  {
    personId: Type.Optional(annotatedGuid('the person of the client this driver is (people[].id)')),
    firstName: Type.Optional(Type.String()),
    lastName: Type.Optional(Type.String()),
    relationship: Type.Optional(Type.String({ description: 'to the named insured, e.g. Insured, Spouse, Child', examples: ['Insured'] })),
    personalInfo: Type.Optional(Type.Object(
      { status: Type.Optional(Type.String({ description: 'the operator status, e.g. Principal, Occasional, Excluded', examples: ['Principal'] })) },
      { ...open, title: 'DriverPersonalInfo' }
    )),
    licenseNumber: Type.Optional(Type.String()),
    licenseState: Type.Optional(Type.String({ description: 'state code of the licence', examples: ['MA'] }))
  },
  { ...open, title: 'Driver' }
)

/** A vehicle of an auto policy; its own coverages when the agency rates it per vehicle. */
export const AutoSchema = Type.Object(
  {
    year: Type.Optional(markFormerValue(Int32({ description: 'the model year', examples: [2022] }), textAsInteger)),
    make: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    vin: Type.Optional(Type.String()),
    coverages: Type.Optional(Type.Array(CoverageSchema))
  },
  { ...open, title: 'Auto' }
)

/** A location (premises) of a property or business policy. */
export const LocationSchema = Type.Object(
  {
    number: Type.Optional(markFormerValue(Int32({ description: 'the location number, from 1', examples: [1] }), textAsInteger)),
    address1: Type.Optional(Type.String()),
    address2: Type.Optional(Type.String()),
    city: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    zip: Type.Optional(Type.String())
  },
  { ...open, title: 'Location' }
)

/** `term`: a term descriptor such as 6M or 12M (a former fixture's number of months becomes one). */
const Term = markFormerValue(
  Type.String({ description: 'the term descriptor, e.g. 12M (twelve months) or 6M', examples: ['12M'] }),
  numberAsText((months) => `${months}M`, 'term descriptors')
)

/**
 * The policy fields the client model page marks non-optional, with the value a policy carries
 * when the agency has nothing for it. Every stored policy has each of them.
 */
export const POLICY_EMPTY_VALUES = {
  statusDate: NO_DATE,
  type: '',
  title: '',
  applicationType: 'Undefined',
  paymentPlan: '',
  premiumMode: '',
  numberOfTerms: 0,
  program: '',
  raterCode: 0,
  boats: [] as unknown[],
  boatOperators: [] as unknown[],
  locationReferences: [] as unknown[]
} as const
export type NonOptionalPolicyField = keyof typeof POLICY_EMPTY_VALUES
export const NON_OPTIONAL_POLICY_FIELDS = Object.keys(POLICY_EMPTY_VALUES) as NonOptionalPolicyField[]

/** The policy's own fields of the read model, with the non-optional ones described once for both policy schemas. */
export const policyFields = {
  ...recordBase,
  // "" for the policy shell of a created client sent without a number (it must reset from a state export)
  policyNumber: Type.String(),
  policyIndex: Int32({ description: 'the 0-based position of the policy in the client' }),
  carrier: Type.Optional(Str),
  writingCarrier: Type.Optional(Str),
  naic: Type.Optional(Str),
  status: Type.Optional(Str),
  subStatus: Type.Optional(Str),
  statusDate: PolicyDate,
  type: Type.String({ description: 'the policy type, e.g. Auto; "" when the agency has none', examples: ['Auto'] }),
  title: Type.String({ description: 'the policy title, e.g. its line-of-business code; "" when the agency has none', examples: ['AUTOP'] }),
  applicationType: literalUnion(APPLICATION_TYPES, 'Undefined when the agency has none'),
  policyState: Type.Optional(Str),
  effectiveDate: Type.Optional(Nullable(PolicyDate)),
  expirationDate: Type.Optional(Nullable(PolicyDate)),
  inceptionDate: Type.Optional(Nullable(PolicyDate)),
  soldDate: Type.Optional(Nullable(PolicyDate)),
  term: Type.Optional(Nullable(Term)),
  premium: Type.Optional(Num),
  quotedPremium: Type.Optional(Num),
  paymentPlan: Type.String({ description: '"" when the agency has none', examples: ['Monthly'] }),
  premiumMode: Type.String({ description: 'how the premium is stated, e.g. Annualize; "" when the agency has none', examples: ['Annualize'] }),
  numberOfTerms: Int32({ description: 'terms since inception, the current one included; 0 when unknown' }),
  program: Type.String({ description: '"" when the agency has none' }),
  raterCode: Int32({ description: '0 when the policy was not rated' }),
  billingType: Type.Optional(Str),
  officeId: Type.Optional(Nullable(Int32())),
  agent1: Type.Optional(Str),
  agent2: Type.Optional(Str),
  agent3: Type.Optional(Str),
  loBs: Type.Optional(Type.Array(LobSchema)),
  coverages: Type.Optional(Type.Array(CoverageSchema)),
  drivers: Type.Optional(Type.Array(DriverSchema)),
  autos: Type.Optional(Type.Array(AutoSchema)),
  boats: Type.Array(Type.Unknown()),
  boatOperators: Type.Array(Type.Unknown()),
  additionalInterests: Type.Optional(Type.Array(AdditionalInterestSchema)),
  locations: Type.Optional(Type.Array(LocationSchema)),
  locationReferences: Type.Array(Type.Unknown())
}

export const PolicySchema = Type.Object(policyFields, { ...open, title: 'Policy' })

export const InvoiceSchema = Type.Object(
  {
    id: Guid,
    policyId: Type.Optional(Nullable(Guid)),
    invoiceNumber: Type.Optional(Str),
    date: Type.Optional(LooseDate),
    dueDate: Type.Optional(LooseDate),
    total: Type.Number(),
    balance: Type.Number()
  },
  { ...open, title: 'Invoice' }
)

/** A client as the vendor API answers it in 3.0 and 4.0; groups not requested are absent. */
export const ClientSchema = Type.Object(
  {
    clientNumber: Int32(),
    details: Type.Optional(ClientDetailsSchema),
    people: Type.Optional(Type.Array(PersonSchema)),
    contacts: Type.Optional(Type.Array(ContactSchema)),
    claims: Type.Optional(Type.Array(ClaimSchema)),
    policies: Type.Optional(Type.Array(PolicySchema)),
    invoices: Type.Optional(Type.Array(InvoiceSchema, { description: 'open invoices (needs the agency opt-in, scope invoice-read)' }))
  },
  { title: 'Client', additionalProperties: false }
)

export type ClientDetails = Static<typeof ClientDetailsSchema>
export type Person = Static<typeof PersonSchema>
export type Contact = Static<typeof ContactSchema>
export type Claim = Static<typeof ClaimSchema>
export type Policy = Static<typeof PolicySchema>
export type AdditionalInterest = Static<typeof AdditionalInterestSchema>
export type Driver = Static<typeof DriverSchema>
export type Invoice = Static<typeof InvoiceSchema>
export type Client = Static<typeof ClientSchema>

/**
 * How a version reads `include`: honoured (4.0), a preview honoured only for agencies that support
 * it, every granted group otherwise (3.0), or not at all: the default groups (version 1).
 */
export type IncludeMode = 'honoured' | 'preview' | 'none'

/** The data groups of a client, in the order the service writes them. */
export const CLIENT_GROUPS = ['Details', 'People', 'Contacts', 'Claims', 'Policies', 'Invoices'] as const
export type ClientGroup = (typeof CLIENT_GROUPS)[number]
export const DEFAULT_GROUPS: readonly ClientGroup[] = ['Details', 'People', 'Contacts', 'Claims', 'Policies']
/** JSON key of each group in the read model. */
export const GROUP_KEYS: Readonly<Record<ClientGroup, 'details' | 'people' | 'contacts' | 'claims' | 'policies' | 'invoices'>> = {
  Details: 'details', People: 'people', Contacts: 'contacts', Claims: 'claims', Policies: 'policies', Invoices: 'invoices'
}
