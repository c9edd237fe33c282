import { Kind, type TSchema } from '@sinclair/typebox'

/**
 * Binds a request body to its schema's key names case-insensitively (callers send
 * `People` or `people`), honours per-property `aliases` (e.g. `action` for `channel`), and
 * drops keys the schema does not know, returning them as warnings (`People[0].Nickname`).
 */
export function bindKeys(value: unknown, schema: TSchema, warnings: string[], path = ''): unknown {
  if (Array.isArray(value)) {
    const items = arraySchema(schema)
    return items === undefined ? value : value.map((v, i) => bindKeys(v, items, warnings, `${path}[${i}]`))
  }
  if (value === null || typeof value !== 'object') return value
  const object = objectSchema(schema)
  if (object === undefined) return value
  const props = object.properties as Record<string, TSchema>
  const byName = new Map<string, string>()
  for (const [name, prop] of Object.entries(props)) {
    byName.set(name.toLowerCase(), name)
    for (const alias of (prop.aliases as string[] | undefined) ?? []) byName.set(alias.toLowerCase(), name)
  }
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const name = byName.get(key.toLowerCase())
    const at = path === '' ? key : `${path}.${key}`
    if (name === undefined) {
      if (object.additionalProperties === false) {
        warnings.push(`ignored unknown key ${at}`)
        continue
      }
      out[key] = v
      continue
    }
    if (name in out) {
      warnings.push(`ignored duplicate key ${at} (already bound to ${name})`)
      continue
    }
    out[name] = bindKeys(v, props[name], warnings, path === '' ? name : `${path}.${name}`)
  }
  return out
}

function members(schema: TSchema): TSchema[] {
  if (schema[Kind] === 'Union' || Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[]) ?? []
  return [schema]
}

function objectSchema(schema: TSchema): TSchema | undefined {
  return members(schema).find((s) => s.type === 'object' && s.properties !== undefined)
}

function arraySchema(schema: TSchema): TSchema | undefined {
  return members(schema).find((s) => s.type === 'array')?.items as TSchema | undefined
}
