export {
  startSandbox, controlClient, ControlError, type StartOptions, type StartedSandbox, type Control, type ResetOptions, type ResetPart, type WriteView,
  type ReportFormat, type Sessions, type Finding, type Mirror, type Report, type ReportSummary, type Session, type SessionStart,
  verifyReport, InvalidKeyError, type ReportSignature, type ReportVerification, type SignedReport, type SigningKeyView, type VerificationFailure,
  createWorld, type SandboxWorld, type WorldOptions, type WorldCreated, type Worlds, type WorldView, type WorldWithSecrets, type TenantCreated, type Tenants, type TenantView
} from './sdk.js'
export { buildApp, type AppOptions } from './app.js'
export { loadConfig, type Config } from './config.js'
export { startServer, type RunningServer } from './server.js'
export { validateFixture } from './fixture/validate.js'
export { generateFixture, generateDemoFixture } from './fixture/generate.js'
export type { Fixture, FixtureClient } from './fixture/schema.js'
