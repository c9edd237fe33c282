import { grantOf } from '../../src/plugins/vendor.js'
import type { OperationHandlers } from './operation.js'

/** Agencies, offices and users (spec endpoints 1, 2 and 11). */
export const agencyHandlers: OperationHandlers<'agencies' | 'offices' | 'users'> = {
  agencies: ({ mapping }) => ({
    handler: (request) => mapping(request.world.access.listAgencies(request.integrationId))
  }),

  offices: ({ mapping }) => ({
    handler: (request) => mapping(request.world.offices(grantOf(request).agency.agencyId))
  }),

  users: () => ({
    handler: (request) =>
      request.world.activeUsers(grantOf(request).agency.agencyId).map((u) => ({
        userId: u.userId,
        username: u.username,
        ...(u.firstName === null ? {} : { firstName: u.firstName }),
        ...(u.lastName === null ? {} : { lastName: u.lastName }),
        ...(u.email === null ? {} : { email: u.email }),
        ...(u.homeOffice === null ? {} : { homeOffice: u.homeOffice })
      }))
  })
}
