/**
 * Named schemas for the vendor documents. @fastify/swagger writes every route's schema inline,
 * so generators (NSwag, openapi-generator, oapi-codegen, openapi-typescript) would name nothing
 * and type many bodies as `object`. Every schema the sources title (`Client`, `Policy`,
 * `Receipt`, …) becomes `components.schemas[title]`, and each place it was used a `$ref` to it;
 * titled schemas inside it are hoisted the same way. A title names one schema per document: two
 * different schemas under one title stop the document being made (the build fails), instead of
 * one silently taking the other's name.
 */

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Keywords whose value is one schema, and those holding a list or a map of schemas. */
const ONE_SCHEMA = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties']
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems']
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas']

/** A component name: the characters OpenAPI allows in a components key. */
const componentName = (title: string) => title.replace(/[^A-Za-z0-9._-]/g, '_')

class Hoister {
  readonly schemas: Record<string, Json> = {}
  /** The JSON of each hoisted schema, to tell an identical second use from a different schema. */
  private readonly texts = new Map<string, string>()

  constructor (private readonly document: string) {}

  /** The schema with its titled parts (itself included) replaced by references. */
  schema (node: unknown): unknown {
    if (!isObject(node)) return node
    const inner: Json = { ...node }
    for (const key of ONE_SCHEMA) if (isObject(inner[key])) inner[key] = this.schema(inner[key])
    for (const key of SCHEMA_LISTS) if (Array.isArray(inner[key])) inner[key] = (inner[key] as unknown[]).map((s) => this.schema(s))
    for (const key of SCHEMA_MAPS) {
      if (isObject(inner[key])) inner[key] = Object.fromEntries(Object.entries(inner[key]).map(([k, s]) => [k, this.schema(s)]))
    }
    if (typeof inner.title !== 'string' || inner.title === '') return inner
    const name = componentName(inner.title)
    const text = JSON.stringify(inner)
    const known = this.texts.get(name)
    if (known === undefined) {
      this.texts.set(name, text)
      this.schemas[name] = inner
    } else if (known !== text) {
      throw new Error(`two different schemas are titled '${inner.title}' in the ${this.document} document: give one of them another title`)
    }
    return { $ref: `#/components/schemas/${name}` }
  }

  /** `{<media type>: {schema}}` with each schema hoisted. */
  content (content: unknown): unknown {
    if (!isObject(content)) return content
    return Object.fromEntries(Object.entries(content).map(([type, media]) =>
      [type, isObject(media) && media.schema !== undefined ? { ...media, schema: this.schema(media.schema) } : media]))
  }

  operation (op: Json): Json {
    const out: Json = { ...op }
    if (Array.isArray(op.parameters)) {
      out.parameters = op.parameters.map((p: unknown) => (isObject(p) && p.schema !== undefined ? { ...p, schema: this.schema(p.schema) } : p))
    }
    if (isObject(op.requestBody)) out.requestBody = { ...op.requestBody, content: this.content(op.requestBody.content) }
    if (isObject(op.responses)) {
      out.responses = Object.fromEntries(Object.entries(op.responses).map(([status, response]) =>
        [status, isObject(response) && response.content !== undefined ? { ...response, content: this.content(response.content) } : response]))
    }
    return out
  }
}

/** The document with every titled schema in `components.schemas`, referenced where it was used. */
export function hoistNamedSchemas<D extends { paths?: unknown; components?: unknown }> (document: D, name: string): D {
  const hoister = new Hoister(name)
  const paths = isObject(document.paths) ? document.paths : {}
  const hoistedPaths = Object.fromEntries(Object.entries(paths).map(([path, item]) => [
    path,
    isObject(item) ? Object.fromEntries(Object.entries(item).map(([method, op]) => [method, isObject(op) ? hoister.operation(op) : op])) : item
  ]))
  const components = isObject(document.components) ? document.components : {}
  const existing = isObject(components.schemas) ? components.schemas : {}
  const schemas = Object.fromEntries(Object.entries({ ...existing, ...hoister.schemas }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  return { ...document, paths: hoistedPaths, components: { ...components, schemas } }
}
