import { Type, type Static } from '@sinclair/typebox'

/** Schemas of the worlds API (/_sandbox/worlds). */

/** The longest idle time a world may be given: 30 days. */
export const MAX_WORLD_TTL_SECONDS = 30 * 24 * 3600
/** The most worlds SANDBOX_MAX_WORLDS may allow at once (the default world not counted). */
export const MAX_MAX_WORLDS = 10_000
/** The largest bound SANDBOX_WORLDS_MAX_BYTES may set on the worlds' memory: 64 GiB. */
export const MAX_WORLDS_BYTES = 64 * 1024 * 1024 * 1024

export const WorldCreateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a label for people (the id is made by the sandbox)' })),
    from: Type.Optional(Type.String({
      minLength: 1, maxLength: 40, description: '`default` or a world id: the new world starts as a copy of that world\'s data as it stands now'
    })),
    fixture: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'a fixture document (fixtures/schema.json): the new world\'s data and starting point' })),
    ttlSeconds: Type.Optional(Type.Integer({
      minimum: 0, maximum: MAX_WORLD_TTL_SECONDS, description: 'idle seconds (no request to the world) after which it is deleted; 0 keeps it (default SANDBOX_WORLD_TTL_SECONDS)'
    })),
    maxBytes: Type.Optional(Type.Integer({
      minimum: 1,
      maximum: MAX_WORLDS_BYTES,
      description: "bytes the world's data may take: a write (or reset) past it answers 507 and applies nothing (default SANDBOX_WORLD_MAX_BYTES; at most SANDBOX_WORLDS_MAX_BYTES)"
    })),
    secrets: Type.Optional(Type.Literal('fixture', {
      description: 'keep the Client Secrets of what the world starts from (the fixture, or the world copied) instead of new random ones; not for a tenant\'s worlds'
    }))
  },
  { additionalProperties: false, description: 'give at most one of from and fixture; neither: the start-up fixture' }
)
export type WorldCreateRequest = Static<typeof WorldCreateBody>

export const WorldIdParams = Type.Object({ worldId: Type.String({ maxLength: 40 }) })

const WorldIntegration = Type.Object({
  clientId: Type.String({ description: 'the Basic-auth user name: ends with @<world id>, which is how partner requests reach the world' }),
  clientSecret: Type.String({ description: "the world's own: 22 random base64url characters (132 bits), or the fixture's with secrets: \"fixture\"" }),
  name: Type.String()
})

const WorldFacts = {
  id: Type.String({ description: '`default`, or `w` and ten letters and digits' }),
  name: Type.String(),
  expiresAt: Type.Union([Type.String(), Type.Null()], { description: 'when the world is deleted unless it is used before (null: kept)' }),
  maxBytes: Type.Union([Type.Integer(), Type.Null()], { description: "bytes the world's data may take (null: unbounded, the default world outside hosted mode)" })
}

export const WorldCreatedSchema = Type.Object({
  ...WorldFacts,
  integrations: Type.Array(WorldIntegration),
  token: Type.String({ description: "opens this world's control routes (/_sandbox/worlds/{id}/...) when the sandbox has a control token" }),
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'what the fixture held in an earlier format and was converted, one line per field' }))
}, { title: 'WorldCreated' })

export const WorldSchema = Type.Object({
  ...WorldFacts,
  source: Type.String({ description: 'what the world started from' }),
  tenant: Type.Union([Type.String(), Type.Null()], { description: 'the tenant that created it and alone controls it besides the sandbox\'s control token (null: none)' }),
  createdAt: Type.String(),
  lastUsedAt: Type.String(),
  ttlSeconds: Type.Integer(),
  bytes: Type.Integer({ description: 'memory its database takes (counted against maxBytes)' }),
  integrations: Type.Array(Type.String(), { description: 'Client Ids of its integrations' }),
  counts: Type.Record(Type.String(), Type.Unknown(), { description: 'integrations, agencies, clients, writes (pending and applied), journal entries, fault rules' })
}, { title: 'World' })

/** One world as its token holder reads it: with its integrations' secrets (a listing never shows them). */
export const WorldWithSecretsSchema = Type.Object({
  ...WorldSchema.properties,
  credentials: Type.Array(WorldIntegration, { description: "the world's integrations with their Client Secrets, as the create answer gave them" })
}, { title: 'WorldWithSecrets' })

export const WorldListSchema = Type.Object({
  worlds: Type.Array(WorldSchema),
  limits: Type.Object({
    maxWorlds: Type.Integer({ description: "worlds at once: the sandbox's (SANDBOX_MAX_WORLDS), or to a tenant its quota" }),
    maxBytes: Type.Integer(),
    bytes: Type.Integer({ description: 'what the created worlds take now (to a tenant, its own)' })
  })
}, { description: 'to a tenant, its own worlds only' })
