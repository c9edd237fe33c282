import type { Config } from './config.js'

/** What the start-up banner tells: where everything is, and what this sandbox holds. */
export interface BannerFacts {
  version: string
  url: string
  config: Config
  /** True when this start seeded the database from the fixture; false: existing data was kept. */
  seededNow: boolean
  /** The documented demo credentials work on this sandbox (the demo fixture, or one that keeps them). */
  demoCredentials: boolean
  /** Set when the database was seeded from another fixture than the configured one. */
  fixtureMismatch?: string
  /** What the fixture held in an earlier format and was converted, one line per field. */
  fixtureWarnings?: readonly string[]
}

export const DEMO_CLIENT_ID = 'abc'
export const DEMO_CLIENT_SECRET = '123'

/** The banner as lines of plain text (printed on a terminal; JSON logs carry the same facts as fields). */
export function bannerLines (facts: BannerFacts): string[] {
  const { url, config } = facts
  const basic = Buffer.from(`${DEMO_CLIENT_ID}:${DEMO_CLIENT_SECRET}`).toString('base64')
  const lines = [
    `agency-sandbox ${facts.version} is ready`,
    `  API        ${url}/vendor  (versions 4.0, 3.0 and 1; HTTP Basic auth)`,
    `  Console    ${url}/_sandbox/ui`,
    `  Docs       ${url}/docs  (OpenAPI: ${url}/openapi/4.0.json)`,
    `  Control    ${url}/_sandbox  (${config.controlToken === undefined ? 'no token set: open to anyone who reaches this port' : 'needs Authorization: Bearer <SANDBOX_CONTROL_TOKEN>'})`
  ]
  if (facts.demoCredentials) lines.push(`  Demo       Client Id ${DEMO_CLIENT_ID}, Client Secret ${DEMO_CLIENT_SECRET}  (Authorization: Basic ${basic})`)
  lines.push(
    `  Database   ${config.db}  (${facts.seededNow ? 'seeded now' : 'existing data kept; POST /_sandbox/reset or --reset-on-start re-seeds'})`,
    `  Fixture    ${config.fixtures}`
  )
  if (facts.fixtureMismatch !== undefined) lines.push('', `  WARNING: ${facts.fixtureMismatch}`)
  if (facts.fixtureWarnings !== undefined && facts.fixtureWarnings.length > 0) {
    lines.push('', `  WARNING: the fixture ${config.fixtures} is written in an earlier format; it was converted as it loaded:`)
    for (const line of facts.fixtureWarnings) lines.push(`    ${line}`)
  }
  return lines
}

/** The same facts as log fields, for JSON logs. */
export function bannerFields (facts: BannerFacts): Record<string, unknown> {
  const { url, config } = facts
  return {
    url,
    console: `${url}/_sandbox/ui`,
    docs: `${url}/docs`,
    db: config.db,
    fixture: config.fixtures,
    seeded: facts.seededNow ? config.fixtures : 'kept existing data',
    controlToken: config.controlToken !== undefined,
    ...(facts.demoCredentials ? { demo: `Client Id ${DEMO_CLIENT_ID}, Client Secret ${DEMO_CLIENT_SECRET}` } : {})
  }
}
