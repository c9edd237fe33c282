/**
 * Answers shaped as the contract's section A says, and one mistake at a time in them: the
 * decoders must take the first and refuse each of the others at its JSON path. This is what
 * shows that the decoders are strict, independently of what the sandbox answers today.
 */

type Json = Record<string, unknown>

const GUID = (n: number) => `3f2504e0-4f89-11d3-9a0c-${String(n).padStart(12, '0')}`

export function contractClient (): Json {
  const personId = GUID(2)
  const policyId = GUID(5)
  return {
    clientNumber: 1000,
    details: {
      id: GUID(1),
      modified: '2026-10-24T08:48:24.008Z',
      clientType: 'Customer',
      status: 'Active',
      isPersonal: true,
      isCommercial: false,
      businessType: null,
      agencyNum: '1001',
      officeId: 1,
      clientSince: '2013-02-08T00:00:00',
      allowCrossSell: true,
      mainContacts: [personId],
      mailingAddress: { address1: '1 Main St', city: 'Cambridge', state: 'MA', zip: '02139' }
    },
    people: [{ id: personId, modified: '2026-01-14T15:50:09Z', firstName: 'Ann', mainContactType: 'First', dateOfBirth: '1951-01-01T00:00:00' }],
    contacts: [
      { id: GUID(3), modified: '2024-09-01T16:02:22.540Z', type: 'HomePhone', data: '(617) 309-1406', personId: null, priority: 1 },
      // absent, the non-nullable members take their default (0, false)
      { id: GUID(8), modified: '2024-09-01T16:02:22.540Z', type: 'HomeEmail', data: 'ann@example.com', personId, isBillingContact: true }
    ],
    claims: [{ id: GUID(4), modified: '2025-12-03T17:34:02.706Z', claimNumber: 'C-1', lossDate: '2025-07-24T00:00:00', lossAmount: 18888.12 }],
    policies: [{
      id: policyId,
      modified: '2026-10-02T09:51:57.127Z',
      policyNumber: 'HIG-1000-01',
      policyIndex: 0,
      status: 'Active',
      statusDate: '2026-09-30T00:00:00',
      type: 'Home',
      title: 'HOME',
      applicationType: 'Personal',
      effectiveDate: '2026-09-30T00:00:00',
      expirationDate: '2027-09-30T00:00:00',
      term: '12M',
      premium: 2125.89,
      quotedPremium: 0,
      paymentPlan: 'Monthly',
      premiumMode: 'Annualize',
      numberOfTerms: 1,
      program: '',
      raterCode: 0,
      officeId: 1,
      loBs: [{ code: 'HOME', name: 'Homeowners' }],
      coverages: [{ code: 'DWELL', description: 'Dwelling', limits: '325000', deductibles: '2500', premium: '1822.19' }],
      drivers: [{ personId, firstName: 'Ann', lastName: 'Lee', relationship: 'Insured', personalInfo: { status: 'Principal' }, licenseNumber: 'I09078056', licenseState: 'MA' }],
      autos: [],
      additionalInterests: [{ id: GUID(6), isPayor: false, parentId: policyId, parentType: 'Policy', rank: 1, type: 'Mortgagee', name: 'PNC Bank NA', loanNumber: '8716442317' }],
      locations: [],
      boats: [],
      boatOperators: [],
      locationReferences: []
    }],
    invoices: [{ id: GUID(7), policyId, invoiceNumber: 'INV-1', date: '2026-10-01', dueDate: '2026-10-31', total: 100, balance: 100 }]
  }
}

export function contractClientV1 (): Json {
  return {
    id: 1000,
    allowCrossSell: true,
    clientType: 'Customer',
    details: { modified: '2026-10-24T08:48:24.008Z', status: 'Active', isPersonal: true, isCommercial: false, agencyNum: '', officeId: 1, mainContacts: [100001] },
    people: [{ id: 100001, firstName: 'Ann', mainContactType: 'First', dateOfBirth: '1951-01-01T00:00:00' }],
    contacts: [{ id: 100003, type: 'HomePhone', data: '(617) 309-1406', personId: null, priority: 1, allowMassEmail: false }],
    claims: [{ id: 100012, claimNumber: 'C-1' }],
    policies: [{
      id: 3656,
      policyNumber: 'HIG-1000-01',
      applicationType: 'Personal',
      carrier: 'Foremost',
      currentPremium: 0,
      effectiveDate: '2021-03-18T00:00:00',
      state: 'OR',
      statusDate: '2021-03-18T00:00:00',
      term: '6M',
      title: 'AUTOP',
      typeName: 'Auto',
      displayOrder: 0,
      isArchived: false,
      rater: 0,
      officeId: -1,
      coverages: [],
      linesOfBusiness: [{
        id: 4315,
        code: 'AUTOP',
        status: 'Unknown',
        coverages: [],
        drivers: [{ id: 14010, firstName: 'Arnold', lastName: 'Thomas', relationship: 'Insured', operatorStatus: 'Principal', licenseNumber: '', licenseState: 'OR' }],
        vehicles: [{ id: 4365, year: '2006', make: 'HOND', coverages: [{ id: 6719, code: 'BI', description: 'Bodily Injury', displayOrder: 1, limits: '100000/300000', deductibles: '', premium: 0, percent: 0 }] }],
        locations: []
      }],
      locations: []
    }]
  }
}

export interface Sample {
  label: string
  operation: string
  version: string
  body: unknown
  /** Where each decoder must report the mistake (undefined: it must decode). */
  path?: string
}

/** Sets `value` at a dotted path (`policies.0.term`); undefined deletes the key. */
function edit (body: Json, path: string, value: unknown): Json {
  const copy = structuredClone(body)
  const keys = path.split('.')
  let at: Record<string, unknown> = copy
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>
  const last = keys[keys.length - 1]
  if (value === undefined) delete at[last]
  else at[last] = value
  return copy
}

const client = (label: string, path: string, value: unknown, reported = `$.${path.replace(/\.(\d+)/g, '[$1]')}`): Sample =>
  ({ label, operation: 'getClient', version: '4.0', body: edit(contractClient(), path, value), path: reported })
const clientV1 = (label: string, path: string, value: unknown, reported = `$.${path.replace(/\.(\d+)/g, '[$1]')}`): Sample =>
  ({ label, operation: 'getClient', version: '1', body: edit(contractClientV1(), path, value), path: reported })

export const SAMPLES: Sample[] = [
  { label: 'contract client 4.0', operation: 'getClient', version: '4.0', body: contractClient() },
  { label: 'contract client 3.0 in a batch', operation: 'batchClients', version: '3.0', body: [contractClient(), { clientNumber: 1001 }] },
  { label: 'contract client 1', operation: 'batchClients', version: '1', body: [contractClientV1()] },
  { label: 'contract agencies', operation: 'agencies', version: '4.0', body: [{ agencyId: 1001, scopes: ['client-read'] }] },
  { label: 'contract users', operation: 'users', version: '4.0', body: [{ userId: 1, username: 'JDS', homeOffice: 1 }] },
  client('agencyNum a number', 'details.agencyNum', 1001),
  client('term a number', 'policies.0.term', 12),
  client('coverage premium a number', 'policies.0.coverages.0.premium', 1822.19),
  client('policy premium a string', 'policies.0.premium', '2125.89'),
  client('clientNumber a numeric string', 'clientNumber', '1000'),
  client('officeId a fraction', 'details.officeId', 1.5),
  client('raterCode past 32 bits', 'policies.0.raterCode', 2147483648),
  client('isPersonal a number', 'details.isPersonal', 1),
  client('record id not a GUID', 'people.0.id', 'b5f6b105'),
  client('modified without its zone', 'contacts.0.modified', '2024-09-01T16:02:22.540'),
  client('policy date with a zone', 'policies.0.effectiveDate', '2026-09-30T00:00:00Z'),
  client('policy date not on the calendar', 'policies.0.expirationDate', '2027-02-30T00:00:00'),
  client('invoice date with a time', 'invoices.0.dueDate', '2026-10-31T00:00:00'),
  client('status not a ClientStatus', 'details.status', 'Dormant'),
  client('policy title missing', 'policies.0.title', undefined),
  client('policy numberOfTerms null', 'policies.0.numberOfTerms', null),
  client('policy boats missing', 'policies.0.boats', undefined),
  client('additional interest rank missing', 'policies.0.additionalInterests.0.rank', undefined),
  client('details id missing', 'details.id', undefined),
  client('a driver that is not an object', 'policies.0.drivers', ['Arnold'], '$.policies[0].drivers[0]'),
  // [A: Nulls] non-nullable members: null fails where absent does not
  client('contact priority null', 'contacts.0.priority', null),
  client('contact priority a fraction', 'contacts.0.priority', 1.5),
  client('contact allowMassEmail null', 'contacts.1.allowMassEmail', null),
  client('contact isBillingContact null', 'contacts.1.isBillingContact', null),
  // [A: Drivers]
  client('driver firstName null', 'policies.0.drivers.0.firstName', null),
  client('driver relationship null', 'policies.0.drivers.0.relationship', null),
  client('driver status null', 'policies.0.drivers.0.personalInfo.status', null),
  client('driver personId not a GUID', 'policies.0.drivers.0.personId', 'b5f6b105'),
  client('driver licenseNumber a number', 'policies.0.drivers.0.licenseNumber', 9078056),
  clientV1('version 1 contact priority null', 'contacts.0.priority', null),
  clientV1('version 1 contact allowMassEmail null', 'contacts.0.allowMassEmail', null),
  clientV1('version 1 driver without operatorStatus', 'policies.0.linesOfBusiness.0.drivers.0.operatorStatus', undefined),
  clientV1('version 1 driver without relationship', 'policies.0.linesOfBusiness.0.drivers.0.relationship', undefined),
  // [A: v1 vehicles]
  clientV1('version 1 vehicle without coverages', 'policies.0.linesOfBusiness.0.vehicles.0.coverages', undefined),
  clientV1('version 1 vehicle coverage premium a string', 'policies.0.linesOfBusiness.0.vehicles.0.coverages.0.premium', '0.00'),
  clientV1('version 1 policy with modified', 'policies.0.modified', '2026-10-02T09:51:57.127Z'),
  clientV1('version 1 policy without linesOfBusiness', 'policies.0.linesOfBusiness', undefined),
  clientV1('version 1 line of business without vehicles', 'policies.0.linesOfBusiness.0.vehicles', undefined),
  clientV1('version 1 sub-record with a GUID id', 'people.0.id', GUID(2)),
  clientV1('version 1 allowCrossSell missing', 'allowCrossSell', undefined),
  { label: 'username of 4 characters', operation: 'users', version: '4.0', body: [{ userId: 1, username: 'JDSX' }], path: '$[0].username' },
  { label: 'agency without scopes', operation: 'agencies', version: '4.0', body: [{ agencyId: 1001 }], path: '$[0].scopes' },
  { label: 'changed clients with a null id', operation: 'changedClients', version: '3.0', body: [1000, null], path: '$[1]' }
]
