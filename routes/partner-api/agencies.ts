import { grantOf } from '../../src/plugins/vendor.js'
import type { OperationHandlers } from './operation.js'

/** Agencies, offices and users (spec endpoints 1, 2 and 11). */
export const agencyHandlers: OperationHandlers<'agencies' | 'offices' | 'users'> = {
  agencies: ({ sandbox, mapping }) => ({
    handler: (request) => mapping(sandbox.access.listAgencies(request.integrationId))
  }),

  offices: ({ sandbox, mapping }) => ({
    handler: (request) => mapping(sandbox.offices(grantOf(request).agency.agencyId))
  }),

  users: ({ sandbox }) => ({
    handler: (request) =>
      sandbox.activeUsers(grantOf(request).agency.agencyId).map((u) => ({
        userId: u.userId,
        username: u.username,
        ...(u.firstName === null ? {} : { firstName: u.firstName }),
        ...(u.lastName === null ? {} : { lastName: u.lastName }),
        ...(u.email === null ? {} : { email: u.email }),
        ...(u.homeOffice === null ? {} : { homeOffice: u.homeOffice })
      }))
  })
}
