import { Type, type Static } from '@sinclair/typebox'
import { MAX_MAX_WORLDS } from './worlds.js'

/** Schemas of the tenants API (/_sandbox/tenants): a partner programme's teams, each with its own worlds. */

export const TenantCreateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a label for people (the id is made by the sandbox)' })),
    maxWorlds: Type.Optional(Type.Integer({
      minimum: 1,
      maximum: MAX_MAX_WORLDS,
      description: 'worlds the tenant may hold at once, at most SANDBOX_MAX_WORLDS (default 10, or SANDBOX_MAX_WORLDS when lower)'
    }))
  },
  { additionalProperties: false }
)
export type TenantCreateRequest = Static<typeof TenantCreateBody>

export const TenantPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a label for people' })),
    maxWorlds: Type.Optional(Type.Integer({
      minimum: 1,
      maximum: MAX_MAX_WORLDS,
      description: 'worlds the tenant may hold at once, at most SANDBOX_MAX_WORLDS; lower than it holds now, it keeps them and creates no more until it holds fewer'
    }))
  },
  { additionalProperties: false, description: 'name, maxWorlds or both' }
)
export type TenantPatchRequest = Static<typeof TenantPatchBody>

export const TenantIdParams = Type.Object({ tenantId: Type.String({ maxLength: 40 }) })

const TenantFacts = {
  id: Type.String({ description: '`t` and ten letters and digits' }),
  name: Type.String(),
  maxWorlds: Type.Integer({ description: 'its quota: worlds it may hold at once' }),
  worlds: Type.Integer({ description: 'worlds it holds now' }),
  createdAt: Type.String()
}

export const TenantSchema = Type.Object(TenantFacts, { title: 'Tenant' })

export const TenantCreatedSchema = Type.Object({
  ...TenantFacts,
  token: Type.String({ description: "the tenant's control token (given this once): it creates worlds (POST /_sandbox/worlds) and opens theirs alone" })
}, { title: 'TenantCreated' })

export const TenantListSchema = Type.Object({
  tenants: Type.Array(TenantSchema),
  limits: Type.Object({ maxTenants: Type.Integer() })
})

export const TenantTokenSchema = Type.Object({
  ...TenantFacts,
  token: Type.String({ description: "the tenant's new control token (given this once); the previous one opens nothing from now on, on every instance" })
}, { title: 'TenantToken' })
