import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Tenant } from '../../src/domain/worlds/tenants.js'
import { MAX_TENANTS } from '../../src/domain/worlds/tenants.js'
import { badRequest, tenantNotFound } from '../../src/errors.js'
import { TenantCreateBody, TenantCreatedSchema, TenantIdParams, TenantListSchema, TenantPatchBody, TenantSchema, TenantTokenSchema } from '../../src/schemas/tenants.js'
import type { ControlOptions } from './options.js'
import type { ControlTokens } from './tokens.js'

/**
 * The tenants of a partner programme: created, listed, changed (name, quota), given a new token
 * and deleted by its administrator (the sandbox's control token, or anyone on a sandbox without
 * one); each tenant's token creates and controls its own worlds (routes/control/worlds.ts, tokens.ts).
 */
export default async function tenantsControl (fastify: FastifyInstance, { worlds, tokens }: ControlOptions & { tokens: ControlTokens }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { tenants } = worlds
  app.addHook('onRequest', tokens.administratorOnly)

  const describe = (tenant: Tenant) => ({
    id: tenant.id,
    name: tenant.name,
    maxWorlds: tenant.maxWorlds,
    worlds: tenants.worldCount(tenant),
    createdAt: new Date(tenant.createdAtMs).toISOString()
  })
  const found = (id: string) => {
    const tenant = tenants.get(id)
    if (tenant === undefined) throw tenantNotFound(id)
    return tenant
  }

  app.post('/tenants', {
    schema: {
      summary: "Create a tenant: its token creates worlds up to its quota and controls them alone (409 past the sandbox's 1,000 tenants)",
      body: TenantCreateBody,
      response: { 201: TenantCreatedSchema }
    },
    // No body at all is a tenant with a default name and quota.
    preValidation: (request, _reply, done) => {
      request.body ??= {}
      done()
    }
  }, async (request, reply) => {
    const { tenant, token } = await tenants.create(request.body)
    reply.code(201).send({ ...describe(tenant), token })
  })

  app.get('/tenants', {
    schema: { summary: 'Every tenant, oldest first, with the worlds it holds now (no tokens)', response: { 200: TenantListSchema } }
  }, () => ({ tenants: tenants.list().map(describe), limits: { maxTenants: MAX_TENANTS } }))

  app.get('/tenants/:tenantId', {
    schema: { summary: 'One tenant (no token)', params: TenantIdParams, response: { 200: TenantSchema } }
  }, (request) => describe(found(request.params.tenantId)))

  app.patch('/tenants/:tenantId', {
    schema: {
      summary: 'Change a tenant\'s name or quota (maxWorlds); a quota below the worlds it holds keeps them and stops it creating more',
      params: TenantIdParams,
      body: TenantPatchBody,
      response: { 200: TenantSchema }
    }
  }, async (request) => {
    const { name, maxWorlds } = request.body ?? {}
    if (name === undefined && maxWorlds === undefined) {
      throw badRequest('Give name, maxWorlds or both', [{ field: '(body)', message: 'must have name or maxWorlds' }])
    }
    const tenant = await tenants.update(request.params.tenantId, { name, maxWorlds })
    if (tenant === undefined) throw tenantNotFound(request.params.tenantId)
    return describe(tenant)
  })

  app.post('/tenants/:tenantId/token', {
    schema: {
      summary: 'A new token for the tenant, answered this once: its previous token opens nothing from now on, on every instance (its worlds\' own tokens stay)',
      params: TenantIdParams,
      response: { 200: TenantTokenSchema }
    }
  }, async (request) => {
    const changed = await tenants.newToken(request.params.tenantId)
    if (changed === undefined) throw tenantNotFound(request.params.tenantId)
    return { ...describe(changed.tenant), token: changed.token }
  })

  app.delete('/tenants/:tenantId', {
    schema: { summary: 'Delete a tenant: its worlds are deleted (their credentials answer 401) and its token opens nothing', params: TenantIdParams }
  }, async (request, reply) => {
    await tenants.remove(found(request.params.tenantId).id)
    reply.code(204).send()
  })
}
