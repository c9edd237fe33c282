import { Type, type Static } from '@sinclair/typebox'
import {
  APPLICATION_TYPES, BUSINESS_TYPES, CLIENT_STATUSES, CONTACT_TYPES, DateTimeString, Guid,
  Int, MAIN_CONTACT_TYPES, Nullable, literalUnion
} from './common.js'

/**
 * The client read model of versions 3.0 and 4.0, camelCase as the live service answers.
 * Records are open (additionalProperties allowed): the live model has more fields than the
 * public record shows, and partners may add them to their fixtures.
 */
const open = { additionalProperties: true }
const Str = Nullable(Type.String())
const Num = Nullable(Type.Number())
const Bool = Type.Boolean()
/** A date as the live service writes it: date-only, or a date-time with or without zone. */
const LooseDate = Nullable(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}' }))

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
    modified: DateTimeString,
    clientType: Type.Optional(Str),
    status: literalUnion(CLIENT_STATUSES),
    isPersonal: Bool,
    isCommercial: Bool,
    companyName: Type.Optional(Str),
    dbaName: Type.Optional(Str),
    businessType: Type.Optional(Nullable(literalUnion(BUSINESS_TYPES))),
    feinNum: Type.Optional(Str),
    website: Type.Optional(Str),
    agencyNum: Type.Optional(Nullable(Type.Union([Type.String(), Type.Integer()]))),
    officeId: Int,
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

const recordBase = { id: Guid, modified: DateTimeString, legacyId: Type.Optional(Int) }

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
    priority: Type.Optional(Nullable(Int))
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
    // a string on the wire, as the live service sends it ("412.00")
    deductibles: Type.Optional(Str),
    premium: Type.Optional(Str)
  },
  { ...open, title: 'Coverage' }
)

export const PolicySchema = Type.Object(
  {
    ...recordBase,
    // "" for the policy shell of a created client sent without a number (it must reset from a state export)
    policyNumber: Type.String(),
    policyIndex: Type.Optional(Int),
    carrier: Type.Optional(Str),
    writingCarrier: Type.Optional(Str),
    naic: Type.Optional(Str),
    status: Type.Optional(Str),
    subStatus: Type.Optional(Str),
    statusDate: Type.Optional(LooseDate),
    type: Type.Optional(Str),
    title: Type.Optional(Str),
    applicationType: Type.Optional(Nullable(literalUnion(APPLICATION_TYPES))),
    policyState: Type.Optional(Str),
    effectiveDate: Type.Optional(LooseDate),
    expirationDate: Type.Optional(LooseDate),
    inceptionDate: Type.Optional(LooseDate),
    soldDate: Type.Optional(LooseDate),
    term: Type.Optional(Nullable(Type.Union([Type.Integer(), Type.String()]))),
    premium: Type.Optional(Num),
    quotedPremium: Type.Optional(Num),
    paymentPlan: Type.Optional(Str),
    billingType: Type.Optional(Str),
    officeId: Type.Optional(Nullable(Int)),
    agent1: Type.Optional(Str),
    agent2: Type.Optional(Str),
    agent3: Type.Optional(Str),
    loBs: Type.Optional(Type.Array(LobSchema)),
    coverages: Type.Optional(Type.Array(CoverageSchema)),
    drivers: Type.Optional(Type.Array(Type.Unknown())),
    autos: Type.Optional(Type.Array(Type.Unknown())),
    additionalInterests: Type.Optional(Type.Array(Type.Unknown())),
    locations: Type.Optional(Type.Array(Type.Unknown()))
  },
  { ...open, title: 'Policy' }
)

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
    clientNumber: Int,
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
