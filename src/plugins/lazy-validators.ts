import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { loadPrecompiled, validatorKey } from './precompiled-validators.js'

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

/** A validator the app made: its Ajv options and route part (what the build precompiles). */
export interface ValidatorUse {
  customOptions: unknown
  route: { schema?: unknown; method?: string; url?: string; httpPart?: string }
}

/** When set, every validator made is listed here (scripts/precompile-validators.ts). */
let listing: ValidatorUse[] | undefined
export function listValidatorsMade (list: ValidatorUse[] | undefined): void {
  listing = list
}

const customOptionsOf = (options: unknown) => (options as { customOptions?: unknown } | undefined)?.customOptions

/** Ajv's compiler, but a validator the build precompiled for the same schema and options is loaded instead. */
const ajvOrPrecompiled = (ajv: Factory<Validate>): Factory<Validate> => (externalSchemas, options) => {
  // Ajv itself is made only when a schema has no precompiled validator: its making is a few
  // hundredths of a second of start-up, and most runs never need it
  let compile: ((route: unknown) => Validate) | undefined
  return (route) => {
    const precompiled = loadPrecompiled(validatorKey(customOptionsOf(options), route as ValidatorUse['route']))
    if (precompiled !== undefined) {
      validatorsReady.loaded++
      return precompiled
    }
    validatorsReady.compiled++
    compile ??= ajv(externalSchemas, options)
    return compile(route)
  }
}

/** How the validators used so far came to be: loaded from the build, or compiled on first use. */
export const validatorsReady = { loaded: 0, compiled: 0 }

const standInValidator = (compiled: () => Validate): Validate => {
  const validate: Validate = (data) => {
    const check = compiled()
    const ok = check(data)
    validate.errors = check.errors // Fastify reads the errors off the function it was given
    return ok
  }
  return validate
}

export const lazyValidatorFactory = (): Factory<Validate> => {
  const firstUse = compiledOnFirstUse(ajvOrPrecompiled(AjvCompiler() as unknown as Factory<Validate>), standInValidator)
  return (externalSchemas, options) => {
    const make = firstUse(externalSchemas, options)
    return (route) => {
      listing?.push({ customOptions: customOptionsOf(options), route: route as ValidatorUse['route'] })
      return make(route)
    }
  }
}

export const lazySerializerFactory = (): Factory<Serialize> =>
  compiledOnFirstUse(SerializerSelector() as unknown as Factory<Serialize>, (compiled) => (data) => compiled()(data))
