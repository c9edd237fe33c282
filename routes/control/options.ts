import type { Config } from '../../src/config.js'
import type { Sandbox } from '../../src/domain/sandbox.js'

/** What every control-plane route file receives. */
export interface ControlOptions {
  sandbox: Sandbox
  config: Config
}
