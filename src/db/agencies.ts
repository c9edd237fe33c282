import type { Command, UnitOfWork } from './unit-of-work.js'

/** Agencies, their offices and their users. */

export interface AgencyRow {
  agencyId: number
  name: string
  active: boolean
  connected: boolean
  supportsIncludes: boolean
  defaultOfficeId: number
  defaultUsers: Record<string, number>
}

export interface OfficeRow {
  officeId: number
  officeDescription: string
  subAgencyName: string
  primaryOffice: boolean
  addressLine1: string
  addressLine2: string
  city: string
  state: string
  zipcode: string
  /** Still listed, but no new client may be placed in it. */
  archived: boolean
}

export interface UserRow {
  userId: number
  username: string
  firstName: string | null
  lastName: string | null
  email: string | null
  homeOffice: number | null
  active: boolean
}

/** The agency flags a control-plane PATCH sets. */
export type AgencyFlag = 'active' | 'connected' | 'supportsIncludes'

interface RawAgency {
  agency_id: number;
  name: string;
  active: number;
  connected: number;
  supports_includes: number
  default_office_id: number;
  default_users: string
}
interface RawOffice {
  office_id: number;
  office_description: string;
  sub_agency_name: string;
  primary_office: number
  address_line1: string;
  address_line2: string;
  city: string;
  state: string;
  zipcode: string;
  archived: number
}
interface RawUser {
  user_id: number;
  username: string;
  first_name: string | null;
  last_name: string | null
  email: string | null;
  home_office: number | null;
  active: number
}

const toAgency = (r: RawAgency): AgencyRow => ({
  agencyId: r.agency_id,
  name: r.name,
  active: r.active === 1,
  connected: r.connected === 1,
  supportsIncludes: r.supports_includes === 1,
  defaultOfficeId: r.default_office_id,
  defaultUsers: JSON.parse(r.default_users) as Record<string, number>
})
const toOffice = (r: RawOffice): OfficeRow => ({
  officeId: r.office_id,
  officeDescription: r.office_description,
  subAgencyName: r.sub_agency_name,
  primaryOffice: r.primary_office === 1,
  addressLine1: r.address_line1,
  addressLine2: r.address_line2,
  city: r.city,
  state: r.state,
  zipcode: r.zipcode,
  archived: r.archived === 1
})
const toUser = (r: RawUser): UserRow => ({
  userId: r.user_id,
  username: r.username,
  firstName: r.first_name,
  lastName: r.last_name,
  email: r.email,
  homeOffice: r.home_office,
  active: r.active === 1
})
const int = (b: boolean): number => (b ? 1 : 0)

export function createAgencyRepository (sql: UnitOfWork) {
  const agency = sql.query<[number], RawAgency>('SELECT * FROM agencies WHERE agency_id = ?')
  const agencies = sql.query<[], RawAgency>('SELECT * FROM agencies ORDER BY rowid')
  const countAgencies = sql.query<[], { n: number }>('SELECT count(*) AS n FROM agencies')
  const insertAgency = sql.command<[Record<string, unknown>]>(
    `INSERT INTO agencies (agency_id, name, active, connected, supports_includes, default_office_id, default_users)
     VALUES (@agencyId, @name, @active, @connected, @supportsIncludes, @defaultOfficeId, @defaultUsers)`
  )
  const deleteAgency = sql.command<[number]>('DELETE FROM agencies WHERE agency_id = ?')
  const setFlag: Record<AgencyFlag, Command<[number, number]>> = {
    active: sql.command('UPDATE agencies SET active = ? WHERE agency_id = ?'),
    connected: sql.command('UPDATE agencies SET connected = ? WHERE agency_id = ?'),
    supportsIncludes: sql.command('UPDATE agencies SET supports_includes = ? WHERE agency_id = ?')
  }
  const setDefaultOffice = sql.command<[number, number]>('UPDATE agencies SET default_office_id = ? WHERE agency_id = ?')
  const setDefaultUsers = sql.command<[string, number]>('UPDATE agencies SET default_users = ? WHERE agency_id = ?')

  const offices = sql.query<[number], RawOffice>('SELECT * FROM offices WHERE agency_id = ? ORDER BY office_id')
  const insertOffice = sql.command<[Record<string, unknown>]>(
    `INSERT INTO offices (agency_id, office_id, office_description, sub_agency_name, primary_office,
       address_line1, address_line2, city, state, zipcode, archived)
     VALUES (@agencyId, @officeId, @officeDescription, @subAgencyName, @primaryOffice,
       @addressLine1, @addressLine2, @city, @state, @zipcode, @archived)`
  )
  const deleteOffice = sql.command<[number, number]>('DELETE FROM offices WHERE agency_id = ? AND office_id = ?')

  const users = sql.query<[number], RawUser>('SELECT * FROM users WHERE agency_id = ? ORDER BY user_id')
  const activeUsers = sql.query<[number], RawUser>('SELECT * FROM users WHERE agency_id = ? AND active = 1 ORDER BY user_id')
  const insertUser = sql.command<[Record<string, unknown>]>(
    `INSERT INTO users (agency_id, user_id, username, first_name, last_name, email, home_office, active)
     VALUES (@agencyId, @userId, @username, @firstName, @lastName, @email, @homeOffice, @active)`
  )
  const deleteUser = sql.command<[number, number]>('DELETE FROM users WHERE agency_id = ? AND user_id = ?')

  return {
    getAgency (agencyId: number): AgencyRow | undefined {
      const r = agency.get(agencyId)
      return r === undefined ? undefined : toAgency(r)
    },
    listAgencies: (): AgencyRow[] => agencies.all().map(toAgency),
    countAgencies: (): number => countAgencies.get()?.n ?? 0,
    insertAgency (a: AgencyRow): void {
      insertAgency.run({
        agencyId: a.agencyId,
        name: a.name,
        active: int(a.active),
        connected: int(a.connected),
        supportsIncludes: int(a.supportsIncludes),
        defaultOfficeId: a.defaultOfficeId,
        defaultUsers: JSON.stringify(a.defaultUsers)
      })
    },
    deleteAgency: (agencyId: number): boolean => deleteAgency.run(agencyId).changes > 0,
    setAgencyFlag: (agencyId: number, flag: AgencyFlag, value: boolean): void => { setFlag[flag].run(int(value), agencyId) },
    setDefaultOffice: (agencyId: number, officeId: number): void => { setDefaultOffice.run(officeId, agencyId) },
    setDefaultUsers: (agencyId: number, byRole: Record<string, number>): void => { setDefaultUsers.run(JSON.stringify(byRole), agencyId) },

    listOffices: (agencyId: number): OfficeRow[] => offices.all(agencyId).map(toOffice),
    insertOffice (agencyId: number, o: OfficeRow): void {
      insertOffice.run({ agencyId, ...o, primaryOffice: int(o.primaryOffice), archived: int(o.archived === true) })
    },
    deleteOffice: (agencyId: number, officeId: number): boolean => deleteOffice.run(agencyId, officeId).changes > 0,

    listUsers: (agencyId: number): UserRow[] => users.all(agencyId).map(toUser),
    listActiveUsers: (agencyId: number): UserRow[] => activeUsers.all(agencyId).map(toUser),
    insertUser (agencyId: number, u: UserRow): void {
      insertUser.run({ agencyId, ...u, active: int(u.active) })
    },
    deleteUser: (agencyId: number, userId: number): boolean => deleteUser.run(agencyId, userId).changes > 0
  }
}

export type AgencyRepository = ReturnType<typeof createAgencyRepository>
