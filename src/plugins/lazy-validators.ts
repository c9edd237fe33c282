import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

/**
 * Fastify's own Ajv validators and fast-json-stringify serializers, compiled on a route's first
 * use instead of at start-up: the sandbox has many (version, operation) routes with large
 * schemas, and compiling them all up front tripled the start-up time. Validation and
 * serialization themselves are unchanged.
 */
type Validate = ((data: unknown) => boolean) & { errors?: unknown }
type Build = (externalSchemas: unknown, options: unknown) => (route: unknown) => Validate

export function lazyValidatorFactory(): Build {
  const build = AjvCompiler() as unknown as Build
  return (externalSchemas, options) => {
    const compileFor = build(externalSchemas, options)
    return (route) => {
      let compiled: Validate | undefined
      const validate: Validate = (data) => {
        compiled ??= compileFor(route)
        const ok = compiled(data)
        validate.errors = compiled.errors
        return ok
      }
      return validate
    }
  }
}

type Serialize = (data: unknown) => string
type BuildSerializer = (externalSchemas: unknown, options: unknown) => (route: unknown) => Serialize

export function lazySerializerFactory(): BuildSerializer {
  const build = SerializerSelector() as unknown as BuildSerializer
  return (externalSchemas, options) => {
    const compileFor = build(externalSchemas, options)
    return (route) => {
      let compiled: Serialize | undefined
      return (data) => (compiled ??= compileFor(route))(data)
    }
  }
}
