import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

/**
 * Fastify's own Ajv validators and fast-json-stringify serializers, compiled on a route's first
 * use instead of at start-up: the sandbox has many (version, operation) routes with large
 * schemas, and compiling them all up front tripled the start-up time. Validation and
 * serialization themselves are unchanged.
 */
/** Ajv options of the app's validators: every error at once (one answer names every field), verbose (messages quote the schema's description). */
export const VALIDATOR_OPTIONS = { allErrors: true, verbose: true } as const

type Factory<F> = (externalSchemas: unknown, options: unknown) => (route: unknown) => F
type Validate = ((data: unknown) => boolean) & { errors?: unknown }
type Serialize = (data: unknown) => string

/** Wraps a compiler factory: `stand` makes a function standing in for the compiled one. */
function compiledOnFirstUse<F> (build: Factory<F>, stand: (compiled: () => F) => F): Factory<F> {
  return (externalSchemas, options) => {
    const compileFor = build(externalSchemas, options)
    return (route) => {
      let compiled: F | undefined
      return stand(() => (compiled ??= compileFor(route)))
    }
  }
}

export const lazyValidatorFactory = (): Factory<Validate> =>
  compiledOnFirstUse(AjvCompiler() as unknown as Factory<Validate>, (compiled) => {
    const validate: Validate = (data) => {
      const check = compiled()
      const ok = check(data)
      validate.errors = check.errors // Fastify reads the errors off the function it was given
      return ok
    }
    return validate
  })

export const lazySerializerFactory = (): Factory<Serialize> =>
  compiledOnFirstUse(SerializerSelector() as unknown as Factory<Serialize>, (compiled) => (data) => compiled()(data))
