import { faker } from '@faker-js/faker'
import type { FixtureOffice, FixtureUser } from '../fixture/schema.js'
import { Fakes } from './fake.js'
import { KeyedHash } from './keyed-hash.js'

/**
 * Replaces personal and business data of imported clients, offices and users, consistently:
 * the same value and seed always give the same replacement (a policy number searched for still
 * finds its client; a driver's licence in a policy still matches the person's). Shape, ids,
 * GUIDs, statuses, codes, amounts, usernames and every date but dates of birth are kept, so
 * are null and empty values. Fields are recognised by name wherever they sit, fields the
 * sandbox does not know included, and any other string that holds an e-mail address is
 * replaced too.
 */

type Rec = Record<string, unknown>
type Rule = (fakes: Fakes, v: string, parent: Rec, ctx: ClientContext) => string

interface ClientContext {
  /** Days every date of birth of this client moves by. */
  birthShift: number
}

const PHONE_TYPES = new Set(['workphone', 'cellphone', 'homephone', 'otherphone', 'messagephone', 'pager', 'fax'])
const EMAIL_TYPES = new Set(['workemail', 'homeemail', 'otheremail'])
const WEBSITE_TYPES = new Set(['clientwebsite', 'otherwebsite'])
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

const first: Rule = (f, v) => f.firstName(v)
const last: Rule = (f, v) => f.lastName(v)
const company: Rule = (f, v) => f.company(v)
const identifier: Rule = (f, v) => f.identifier(v)
const digits: Rule = (f, v) => f.digits(v)
const street: Rule = (f, v) => f.street(v)
const line2: Rule = (f, v) => f.addressLine2(v)
const text: Rule = (f, v) => f.text(v)

/** By field name, lower case. */
const RULES: Record<string, Rule> = {
  firstname: first,
  givenname: first,
  nickname: first,
  preferredname: first,
  middlename: (f, v) => f.middleName(v),
  lastname: last,
  surname: last,
  familyname: last,
  maidenname: last,
  fullname: (f, v) => `${f.firstName(v)} ${f.lastName(v)}`,
  contactname: (f, v) => `${f.firstName(v)} ${f.lastName(v)}`,
  companyname: company,
  dbaname: company,
  businessname: company,
  legalname: company,
  employer: company,
  subagencyname: company,
  // a `name` beside a `code` is a catalogue entry (a line of business); any other `name` is a party's
  name: (f, v, parent) => ('code' in parent ? v : f.company(v)),
  email: (f, v) => f.email(v),
  emailaddress: (f, v) => f.email(v),
  phone: digits,
  phonenumber: digits,
  fax: digits,
  mobile: digits,
  cellphone: digits,
  homephone: digits,
  workphone: digits,
  address: street,
  address1: street,
  addressline1: street,
  street,
  streetaddress: street,
  line1: street,
  address2: line2,
  address3: line2,
  addressline2: line2,
  line2,
  city: (f, v) => f.city(v),
  town: (f, v) => f.city(v),
  county: (f, v) => f.county(v),
  zip: digits,
  zipcode: digits,
  postalcode: digits,
  postcode: digits,
  dateofbirth: (f, v, _p, ctx) => f.shiftDate(v, ctx.birthShift),
  birthdate: (f, v, _p, ctx) => f.shiftDate(v, ctx.birthShift),
  dob: (f, v, _p, ctx) => f.shiftDate(v, ctx.birthShift),
  feinnum: identifier,
  fein: identifier,
  ssn: identifier,
  taxid: identifier,
  licensenum: identifier,
  licensenumber: identifier,
  driverlicensenumber: identifier,
  vin: identifier,
  loannumber: identifier,
  claimnumber: identifier,
  policynumber: identifier,
  accountnumber: identifier,
  routingnumber: identifier,
  membernumber: identifier,
  website: (f, v) => f.website(v),
  url: (f, v) => f.website(v),
  homepage: (f, v) => f.website(v),
  note: text,
  notes: text,
  comment: text,
  comments: text,
  remarks: text,
  memo: text,
  body: text,
  narrative: text,
  // a contact's value, by its type
  data: (f, v, parent) => {
    const type = typeof parent.type === 'string' ? parent.type.toLowerCase() : ''
    if (PHONE_TYPES.has(type)) return f.digits(v)
    if (EMAIL_TYPES.has(type) || EMAIL.test(v)) return f.email(v)
    if (WEBSITE_TYPES.has(type)) return f.website(v)
    if (type === 'socialmedia') return f.handle(v)
    return /\d{3}/.test(v) ? f.digits(v) : f.text(v)
  }
}

/** Lower-cased names of Faker's catalogues of people and places, which replacements never equal. */
function catalogueNames (): Set<string> {
  const out = new Set<string>()
  const add = (v: unknown): void => {
    if (typeof v === 'string') out.add(v.toLowerCase())
    else if (Array.isArray(v)) v.forEach(add)
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(add)
  }
  add(faker.definitions.person.first_name)
  add(faker.definitions.person.last_name)
  add(faker.definitions.person.middle_name)
  add(faker.definitions.location.city_name)
  add(faker.definitions.location.county)
  add(faker.definitions.location.street_name)
  return out
}

export class Anonymizer {
  private readonly hash: KeyedHash
  private readonly fakes: Fakes

  constructor (readonly seed: string) {
    this.hash = new KeyedHash(seed)
    this.fakes = new Fakes(this.hash, catalogueNames())
  }

  /** A client in read-model form, replaced in place (and returned). */
  client<T extends Rec>(client: T): T {
    const details = client.details as Rec | undefined
    const key = typeof details?.id === 'string' ? details.id : JSON.stringify(client.clientNumber) ?? ''
    const magnitude = 30 + this.hash.int(`birth|${key}`, 336)
    const ctx: ClientContext = { birthShift: this.hash.int(`birth-sign|${key}`, 2) === 0 ? -magnitude : magnitude }
    this.walk(client, ctx)
    return client
  }

  private walk (node: unknown, ctx: ClientContext): void {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i]
        if (typeof v === 'string') {
          if (EMAIL.test(v)) node[i] = this.fakes.email(v)
        } else if (v !== null && typeof v === 'object') this.walk(v, ctx)
      }
      return
    }
    if (node === null || typeof node !== 'object') return
    const rec = node as Rec
    for (const k of Object.keys(rec)) {
      const v = rec[k]
      if (typeof v === 'string') {
        if (v === '') continue
        // own keys only: a field named `constructor` or `__proto__` must not find Object's
        const name = k.toLowerCase()
        const rule = Object.hasOwn(RULES, name) ? RULES[name] : undefined
        if (rule !== undefined) rec[k] = rule(this.fakes, v, rec, ctx)
        else if (EMAIL.test(v)) rec[k] = this.fakes.email(v)
      } else if (v !== null && typeof v === 'object') this.walk(v, ctx)
    }
  }

  /**
   * An office: its address and sub-agency replaced, its description's mention of the city too;
   * the agency-level office 0 is described by the agency's name (`<agency name> (primary)`), a
   * company name replaced like any other.
   */
  office (o: FixtureOffice): FixtureOffice {
    const city = o.city === '' ? '' : this.fakes.city(o.city)
    const agencyLevel = o.officeId === 0 ? /^(.+) \(primary\)$/.exec(o.officeDescription) : null
    const described = agencyLevel !== null
      ? `${this.fakes.company(agencyLevel[1])} (primary)`
      : o.city === '' ? o.officeDescription : o.officeDescription.split(o.city).join(city)
    return {
      ...o,
      officeDescription: described,
      subAgencyName: o.subAgencyName === '' ? '' : this.fakes.company(o.subAgencyName),
      addressLine1: o.addressLine1 === '' ? '' : this.fakes.street(o.addressLine1),
      addressLine2: o.addressLine2 === '' ? '' : this.fakes.addressLine2(o.addressLine2),
      city,
      zipcode: o.zipcode === '' ? '' : this.fakes.digits(o.zipcode)
    }
  }

  /** A user: names and e-mail replaced; the username (a 3-letter code other records refer to) kept. */
  user (u: FixtureUser): FixtureUser {
    const out: FixtureUser = { ...u }
    if (u.firstName !== undefined && u.firstName !== '') out.firstName = this.fakes.firstName(u.firstName)
    if (u.lastName !== undefined && u.lastName !== '') out.lastName = this.fakes.lastName(u.lastName)
    if (u.email !== undefined && u.email !== '') out.email = this.fakes.email(u.email)
    return out
  }
}
