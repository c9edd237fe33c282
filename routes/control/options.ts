import type { Config } from '../../src/config.js'
import type { WorldRegistry } from '../../src/domain/worlds/registry.js'

/**
 * What every control-plane route file receives. Routes about one world read it from the request
 * (`request.world`: the default world's under /_sandbox, another's under /_sandbox/worlds/{id}).
 */
export interface ControlOptions {
  worlds: WorldRegistry
  config: Config
}
