import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { grantOf, type VendorRouteOptions } from '../../src/plugins/vendor.js'
import { AgencyUserSchema, OfficeSchema } from '../../src/schemas/agency.js'
import { AgencyParams, VersionQuery } from '../../src/schemas/requests.js'
import { agencyListSchema, mapAgencyList } from '../../src/versions/agencies.js'

/** Agencies, offices and users (spec endpoints 1, 2 and 11). */
export default async function agencyRoutes(fastify: FastifyInstance, { sandbox, version }: VendorRouteOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.route({
    method: 'GET',
    url: '/vendor/agencies',
    constraints: { apiVersion: version },
    schema: {
      summary: 'Agencies subscribed to the integration',
      querystring: VersionQuery,
      response: { 200: agencyListSchema[version] }
    },
    handler: (request) => mapAgencyList[version](sandbox.access.listAgencies(request.integrationId))
  })

  app.route({
    method: 'GET',
    url: '/vendor/agency/:agencyId/offices',
    constraints: { apiVersion: version },
    schema: {
      summary: "The agency's offices",
      params: AgencyParams,
      querystring: VersionQuery,
      response: { 200: Type.Array(OfficeSchema) }
    },
    handler: (request) => sandbox.offices(grantOf(request).agency.agencyId)
  })

  if (version !== '4.0') return // users exist in 4.0 only

  app.route({
    method: 'GET',
    url: '/vendor/agency/:agencyId/users',
    constraints: { apiVersion: '4.0' },
    config: { scope: 'user-list' },
    schema: {
      summary: "The agency's active users",
      params: AgencyParams,
      querystring: VersionQuery,
      response: { 200: Type.Array(AgencyUserSchema) }
    },
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
