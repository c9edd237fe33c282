import { randomUUID } from 'node:crypto'
import { gzipSync } from 'node:zlib'

export const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')

export const logNote = (over: Record<string, unknown> = {}) => ({
  refId: randomUUID(), ts: '2026-11-20T10:00:00Z', channel: 29, note: '<p>Called about renewal</p>', ...over
})

/** Headers and gzip body of a version 3.0/4.0 attachment. */
export function attachment (content: Buffer, over: Record<string, string | undefined> = {}) {
  const headers: Record<string, string> = {
    'content-type': 'application/octet-stream',
    RefId: randomUUID(),
    TS: '2026-11-20T10:00:00Z',
    Channel: '33',
    Desc: b64('Signed application'),
    FileName: b64('application signée'),
    FileExt: 'pdf',
    LogNote: b64('Application received')
  }
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) delete headers[k]
    else headers[k] = v
  }
  return { headers, payload: gzipSync(content) }
}

/** Headers of a version 1 attachment (suspense headers required; a text file): a fresh RefId each call. */
export const v1AttachmentHeaders = (): Record<string, string> => ({
  'content-type': 'application/octet-stream',
  RefId: randomUUID(),
  TS: '2026-11-20T10:00:00Z',
  Action: '33',
  Desc: b64('d'),
  FileName: b64('scan'),
  FileExt: 'txt',
  LogBody: b64('Scan received'),
  LogDescription: b64('Scan'),
  SuspendedFor: 'Producer',
  SuspendedForInitials: '',
  SuspenseCategory: b64('Docs'),
  SuspenseDueDate: '2026-12-01T00:00:00Z'
})

export const receipt = (over: Record<string, unknown> = {}) => ({
  refId: randomUUID(), ts: '2026-11-20T10:00:00Z', channel: 4, logNote: 'Payment by card', total: 25, ...over
})

/** A valid PascalCase create-client body, as one live caller sends it. */
export const createClientBody = (over: Record<string, unknown> = {}) => ({
  People: [
    {
      FirstName: 'Ada',
      LastName: 'Lovelace',
      MainContactType: 'First',
      DateOfBirth: '1985-12-10',
      Contacts: [{ Type: 'HomeEmail', Value: 'ada@example.com' }]
    },
    { FirstName: 'William', LastName: 'King', MainContactType: 'Second' }
  ],
  Contacts: [{ Type: 'HomePhone', Value: '207-555-0100' }],
  MailingAddress: { Address1: '12 Analytical Way', City: 'Portland', State: 'ME', Zip: '04101' },
  Log: { Channel: 29, Note: 'New client from the partner portal', TS: '2026-11-20T10:00:00Z' },
  Status: 'Prospect',
  Policy: { PolicyNumber: 'NEW-POL-0001', LOBs: ['AUTOP', 'HOME'], EffectiveDate: '2026-12-01', State: 'ME', ApplicationType: 'Personal' },
  Source: 'partner',
  ...over
})

/**
 * Create-client bodies that between them give everything a request may, and as little as it may:
 * a personal client with an auto and home policy, a commercial one whose people hold licences
 * (its AUTOB shell lists them as drivers), and one with a single person and nothing else.
 */
export const createdClientBodies = (): Record<string, unknown>[] => [
  createClientBody(),
  createClientBody({
    People: [
      { MainContactType: 'First', DriverLicenseNumber: 'D1234567', Contacts: [{ Type: 'CellPhone', Value: '207-555-0101' }, { Type: 'HomeEmail', Value: 'x@example.com' }] },
      { FirstName: 'Ray', MainContactType: 'Other', DriverLicenseNumber: 'D7654321' }
    ],
    Contacts: [{ Type: 'WorkPhone', Value: '207-555-0102' }, { Type: 'Fax', Value: '207-555-0103' }],
    MailingAddress: { City: 'Bangor' },
    BusinessDetail: { BusinessType: 'LLC', CompanyName: 'Harbor Lobster LLC', LicenseNum: 'L-1', Naics: '114112' },
    Policy: { LOBs: ['AUTOB'] },
    Source: undefined
  }),
  { People: [{ MainContactType: 'First' }], Log: { Channel: 29, Note: 'n', TS: '2026-11-20T10:00:00Z' } }
]
