#!/usr/bin/env node
import { createWriteStream } from 'node:fs'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { bannerFields, bannerLines, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, type BannerFacts } from './banner.js'
import { ConfigError, loadConfig, SETTINGS, type Config } from './config.js'
import { DEFAULT_HEAP_GROWTH_PERCENT, limitHeapGrowth } from './heap-growth.js'

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

const HELP: Record<string, string> = {
  main: `agency-sandbox: a local sandbox of the Agency Integration API

Usage: agency-sandbox <command> [options]

Commands:
  serve        start the sandbox (default command)
  validate     check a fixture file and print its errors, grouped by rule
  generate     write a generated fixture of any size
  report       print an examiner session's report; exit 1 when a finding reaches --fail-on
  verify       check a signed examiner report with the sandbox's public key; exit 1 when it is not valid
  import       read what an integration sees on a running instance into a fixture
  compare      send the same read-only requests to two instances and report every difference

Run agency-sandbox <command> --help for its options.
Exit codes: 0 success, 1 failure (invalid fixture, start-up error), 2 usage error.`,
  serve: `Usage: agency-sandbox serve [options]

Options (each overrides its environment setting):
  --port N           PORT
  --host ADDRESS     HOST
  --db FILE          SANDBOX_DB (a file, or :memory:)
  --fixtures FILE    SANDBOX_FIXTURES
  --reset-on-start   SANDBOX_RESET_ON_START=true (seed from the fixture even over existing data)
  --log-level LEVEL  LOG_LEVEL
  --control-token T  SANDBOX_CONTROL_TOKEN
  --allowed-hosts H  SANDBOX_ALLOWED_HOSTS (names the control API answers besides localhost and IP addresses)
  --journal-size N   SANDBOX_JOURNAL_SIZE
  --journal-bytes N  SANDBOX_JOURNAL_BYTES
  --signing-key FILE SANDBOX_SIGNING_KEY (an Ed25519 private key, PEM: ended sessions' reports are signed)

Environment settings:
${settingsHelp()}`,
  report: `Usage: agency-sandbox report --url URL --session ID [options]

Fetches the examiner report of a session (GET /_sandbox/sessions/ID/report) from a running
sandbox and prints it: the verdict, each finding with its fix and example requests, the sync
checks and coverage. The exit code fails a CI step when a finding reaches --fail-on.

Options:
  --url URL                        the sandbox, e.g. http://127.0.0.1:8080
  --session ID                     the session (its id is in the answer of POST /_sandbox/sessions)
  --format text|json|junit|html    the form printed (default text); junit: one test case per rule
  --fail-on error|warning          the lowest severity that fails (default error)
  --token T                        the control token, when the sandbox has SANDBOX_CONTROL_TOKEN

Exit codes: 0 no finding at that severity, 1 a finding at it (or the report cannot be read), 2 usage error.`,
  verify: `Usage: agency-sandbox verify FILE --key public.pem

Checks a signed examiner report (JSON, from a sandbox with SANDBOX_SIGNING_KEY) offline and
prints one line: valid (verdict, session, signing time, key id), or why it is not.
  --key FILE   the sandbox's public key, PEM (GET /_sandbox/signing-key?format=pem); its private key works too

Exit codes: 0 valid, 1 not valid (unsigned, unknown algorithm, another key, tampered, not a report), 2 usage error.`,
  validate: `Usage: agency-sandbox validate FILE

Checks a fixture document against the fixture schema and its cross-references.
Prints its errors grouped by rule (what the field must be, an example, the count and the
first paths), and for a fixture of an earlier format what was converted, one line per field.
Exit 0 when valid (converted or not), 1 when not.`,
  generate: `Usage: agency-sandbox generate [options]

Options:
  --agencies N   number of agencies (default 1)
  --clients M    clients per agency (default 1000)
  --seed S       random seed; the same seed gives the same fixture (default 1)
  --out FILE     where to write the fixture (default: standard output)`,
  import: `Usage: agency-sandbox import --from URL --client-id ID --client-secret SECRET --out FILE [options]

Reads everything the integration sees through the vendor API of a running instance (the live
service, staging, or another sandbox): agencies and scopes, offices, users, every client with
every group granted, and the deleted clients; writes it as a fixture for serve --fixtures.

Options:
  --from URL              the instance, e.g. https://staging.example.com or http://127.0.0.1:8080
  --client-id ID          the integration's Client Id (kept in the fixture)
  --client-secret SECRET  its Client Secret (the fixture gets a new one, printed, unless --keep-secret)
  --out FILE              the fixture to write (FILE.partial and FILE.checkpoint while it runs)
  --version 4.0|3.0       the API version to read with (default 4.0; 3.0 infers the scopes)
  --agencies 1001,1002    only these agencies (default: every agency listed)
  --anonymize             replace names, addresses, e-mails, phones, numbers and notes consistently
  --seed S                the anonymising seed: the same seed maps alike (default: drawn at random)
  --concurrency N         batch reads in flight at once (default 4)
  --resume                carry on an interrupted import from FILE.checkpoint
  --keep-secret           copy --client-secret into the fixture
  --timeout S             seconds per request attempt (default 60); a request, retries and waits
                          included, gives up after S x (N + 1) seconds
  --retries N             retries of a dropped connection, timeout, 429 or 5xx (default 6); a 429 or
                          5xx waits its Retry-After, up to 60 s (a longer one gives up at once)

Every answer is read up to 16 MiB (as received and once decompressed) and its JSON up to 64
levels deep; what the fixture cannot hold (an agency listed twice, a client the fixture schema
refuses) is left out and counted. The fixture written always passes validate.

Exit codes: 0 written, 1 stopped (one line says why; after a give-up, --resume carries on), 2 usage error.`,
  compare: `Usage: agency-sandbox compare --from URL --client-id ID --client-secret S --to URL [options]

Sends the same read-only requests to both instances (agencies, offices, users, changed ids,
a sample of clients in versions 4.0, 3.0 and 1, batch reads, a search, and the error answers
of an unknown client, a forbidden agency and bad credentials) and reports every difference in
status, Content-Type and Denied headers, field presence, field type and value format (date
with or without zone, number or string), grouped by endpoint. Values themselves are not compared.

Options:
  --from URL, --client-id ID, --client-secret S   the reference instance (e.g. staging)
  --to URL                                        the instance checked against it (e.g. the sandbox)
  --to-client-id ID, --to-client-secret S         its credentials (default: the same as --from's)
  --agency N                                      the agency to read (default: the first listed)
  --sample N                                      clients read one by one (default 10)
  --format text|json                              the report's form (default text)
  --timeout S                                     seconds per request attempt (default 60)

Exit codes: 0 no difference, 1 differences found (or an instance cannot be read), 2 usage error.`
}

/** The environment settings for `serve --help`, aligned, with their defaults where they have one. */
function settingsHelp (): string {
  const width = Math.max(...SETTINGS.map((s) => s.env.length)) + 2
  return SETTINGS.map((s) => {
    const fallback = s.default.startsWith('(') ? s.default.slice(1, -1) : `default ${s.default}`
    return `  ${s.env.padEnd(width)}${s.meaning} (${fallback})`
  }).join('\n')
}

class UsageError extends Error {}

function parse (args: string[], options: ParseArgsConfig['options']): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
    return { values: values as Record<string, string | boolean | undefined>, positionals }
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}

function intOption (name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${name} must be a whole number >= ${min}, got '${value}'`)
  return Number(value)
}

async function serve (args: string[]): Promise<number> {
  const { values } = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    db: { type: 'string' },
    fixtures: { type: 'string' },
    'reset-on-start': { type: 'boolean' },
    'log-level': { type: 'string' },
    'control-token': { type: 'string' },
    'allowed-hosts': { type: 'string' },
    'journal-size': { type: 'string' },
    'journal-bytes': { type: 'string' },
    'signing-key': { type: 'string' }
  })
  if (values.help === true) return help('serve')
  const env = { ...process.env }
  if (typeof values.port === 'string') env.PORT = values.port
  if (typeof values.host === 'string') env.HOST = values.host
  if (typeof values.db === 'string') env.SANDBOX_DB = values.db
  if (typeof values.fixtures === 'string') env.SANDBOX_FIXTURES = values.fixtures
  if (values['reset-on-start'] === true) env.SANDBOX_RESET_ON_START = 'true'
  if (typeof values['log-level'] === 'string') env.LOG_LEVEL = values['log-level']
  if (typeof values['control-token'] === 'string') env.SANDBOX_CONTROL_TOKEN = values['control-token']
  if (typeof values['allowed-hosts'] === 'string') env.SANDBOX_ALLOWED_HOSTS = values['allowed-hosts']
  if (typeof values['journal-size'] === 'string') env.SANDBOX_JOURNAL_SIZE = values['journal-size']
  if (typeof values['journal-bytes'] === 'string') env.SANDBOX_JOURNAL_BYTES = values['journal-bytes']
  if (typeof values['signing-key'] === 'string') env.SANDBOX_SIGNING_KEY = values['signing-key']
  const config: Config = loadConfig(env)
  // loaded here, not at the top: the other commands need none of the server
  const { closeOnSignals, startServer } = await import('./server.js')
  // This process is the sandbox's own, so its process-wide memory settings are the sandbox's to
  // choose; an app built inside someone else's process (startSandbox, buildApp) leaves them alone.
  limitHeapGrowth(config.heapGrowthPercent)
  const server = await startServer(config, { collectBodyBuffers: true })
  const { worlds } = server.app
  const facts: BannerFacts = {
    version: config.version,
    url: server.url,
    config,
    seededNow: worlds.startUp.seededNow,
    fixtureMismatch: worlds.startUp.fixtureMismatch,
    fixtureWarnings: server.app.fixtureWarnings,
    demoCredentials: worlds.default.access.authenticate(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET) !== undefined
  }
  // JSON logs carry the banner's facts as fields; a terminal gets the banner itself.
  if (config.prettyLogs && config.logLevel !== 'silent') {
    process.stdout.write('\n' + bannerLines(facts).join('\n') + '\n\n')
    server.app.log.info({ url: server.url }, `agency-sandbox ${config.version} listening on ${server.url}`)
  } else {
    server.app.log.info(bannerFields(facts), `agency-sandbox ${config.version} listening on ${server.url}`)
  }
  if (config.signingKey !== undefined) server.app.log.info({ signingKeyId: config.signingKey.keyId }, 'ended sessions\' reports are signed (GET /_sandbox/signing-key)')
  // said in the banner and again as a warning, so that neither a terminal nor a log collector misses it
  if (worlds.startUp.fixtureMismatch !== undefined) server.app.log.warn(`WARNING: ${worlds.startUp.fixtureMismatch}`)
  if (!isLoopback(config.host) && config.controlToken === undefined) {
    server.app.log.warn(
      `WARNING: HOST=${config.host} exposes the control API (/_sandbox: reset, state with secrets, faults) to the network ` +
      'without protection; set SANDBOX_CONTROL_TOKEN to require Authorization: Bearer <token>'
    )
  }
  closeOnSignals(server, (code) => process.exit(code))
  return -1
}

export function isLoopback (host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host)
}

async function validate (args: string[]): Promise<number> {
  const { positionals, values } = parse(args, {})
  if (values.help === true) return help('validate')
  if (positionals.length !== 1) throw new UsageError('validate takes exactly one FILE')
  // loaded here, not at the top: TypeBox's compiler is not needed to serve
  const { FixtureError, readFixtureFile } = await import('./fixture/validate.js')
  const { reportLines } = await import('./fixture/problems.js')
  const { printable } = await import('./printable.js')
  const file = printable(positionals[0])
  try {
    const { warnings } = readFixtureFile(positionals[0])
    if (warnings.length > 0) {
      console.log(`${file}: valid fixture, written in an earlier format (it loads, converted as follows):`)
      for (const line of warnings) console.log(`  ${printable(line)}`)
    } else {
      console.log(`${file}: valid fixture`)
    }
    return EXIT.ok
  } catch (e) {
    if (!(e instanceof FixtureError)) throw e
    // paths and messages quote the fixture (its keys, its text)
    const lines = e.report === undefined ? [`${e.errors.length} error${e.errors.length === 1 ? '' : 's'}`, ...e.errors.map((err) => `  ${err.field}: ${err.message}`)] : reportLines(e.report)
    console.error(`${file}: ${printable(lines[0])}`)
    for (const line of lines.slice(1)) console.error(printable(line))
    return EXIT.failed
  }
}

async function generate (args: string[]): Promise<number> {
  const { values } = parse(args, {
    agencies: { type: 'string' }, clients: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' }
  })
  if (values.help === true) return help('generate')
  const agencies = intOption('agencies', values.agencies as string | undefined, 1, 1)
  const clients = intOption('clients', values.clients as string | undefined, 1000, 0)
  const seed = intOption('seed', values.seed as string | undefined, 1, 0)
  const out = values.out as string | undefined
  const { writeFixture } = await import('./fixture/generate.js')
  const { createProgress, fixtureSize } = await import('./fixture/generate/progress.js')
  const started = Date.now()
  // no bar when the fixture itself goes to the terminal
  const progress = createProgress(process.stderr, agencies * clients, out !== undefined || process.stdout.isTTY !== true)
  try {
    // written as it is generated: one client at a time, waiting on the output
    await writeFixture({ agencies, clients, seed, onProgress: (done) => progress.update(done) },
      out === undefined ? process.stdout : createWriteStream(out), { end: out !== undefined })
  } catch (e) {
    progress.finish()
    // a system error (ENOENT, EACCES, ENOSPC, EPIPE...) is the output's; anything else is a bug
    if (!(e instanceof Error && 'code' in e)) throw e
    console.error(`agency-sandbox: cannot write ${out ?? 'standard output'}: ${e.message}`)
    return EXIT.failed
  }
  progress.finish()
  if (out !== undefined) console.error(`wrote ${out}: ${fixtureSize(agencies, clients)} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return EXIT.ok
}

const IMPORT_OPTIONS: ParseArgsConfig['options'] = {
  from: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  out: { type: 'string' },
  version: { type: 'string' },
  agencies: { type: 'string' },
  anonymize: { type: 'boolean' },
  seed: { type: 'string' },
  concurrency: { type: 'string' },
  resume: { type: 'boolean' },
  'keep-secret': { type: 'boolean' },
  timeout: { type: 'string' },
  retries: { type: 'string' }
}
const COMPARE_OPTIONS: ParseArgsConfig['options'] = {
  from: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  to: { type: 'string' },
  'to-client-id': { type: 'string' },
  'to-client-secret': { type: 'string' },
  agency: { type: 'string' },
  sample: { type: 'string' },
  format: { type: 'string' },
  timeout: { type: 'string' }
}
const usage = (message: string): never => {
  throw new UsageError(message)
}

/** `import` and `compare` live in src/import (loaded only when run). */
async function importOrCompare (command: 'import' | 'compare', args: string[]): Promise<number> {
  const { values, positionals } = parse(args, command === 'import' ? IMPORT_OPTIONS : COMPARE_OPTIONS)
  if (values.help === true) return help(command)
  if (positionals.length > 0) throw new UsageError(`${command} takes no positional arguments, got '${positionals[0]}'`)
  const commands = await import('./import/commands.js')
  // this process is the command's own: its heap follows what it keeps alive (answers parsed one
  // after another leave garbage V8 would otherwise let grow to several times that)
  limitHeapGrowth(DEFAULT_HEAP_GROWTH_PERCENT)
  const io = { stdout: process.stdout, stderr: process.stderr }
  return command === 'import' ? await commands.importCommand(values, io, usage) : await commands.compareCommand(values, io, usage)
}

const REPORT_OPTIONS: ParseArgsConfig['options'] = {
  url: { type: 'string' }, session: { type: 'string' }, format: { type: 'string' }, 'fail-on': { type: 'string' }, token: { type: 'string' }
}

/** `report` lives in src/report-command.ts (loaded only when run). */
async function report (args: string[]): Promise<number> {
  const { values, positionals } = parse(args, REPORT_OPTIONS)
  if (values.help === true) return help('report')
  if (positionals.length > 0) throw new UsageError(`report takes no positional arguments, got '${positionals[0]}'`)
  const { reportCommand } = await import('./report-command.js')
  return await reportCommand(values, { stdout: process.stdout, stderr: process.stderr }, (message) => {
    throw new UsageError(message)
  })
}

/** `verify` lives in src/verify-command.ts (loaded only when run). */
async function verify (args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { key: { type: 'string' } })
  return values.help === true ? help('verify') : (await import('./verify-command.js')).verifyCommand(positionals, values, process, usage)
}

function help (command: string): number {
  console.log(HELP[command] ?? HELP.main)
  return EXIT.ok
}

export async function main (argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  try {
    switch (command) {
      case undefined:
      case 'serve':
        return await serve(rest)
      case '--help':
      case '-h':
      case 'help':
        return help(rest[0] ?? 'main')
      case 'validate':
        return await validate(rest)
      case 'generate':
        return await generate(rest)
      case 'report':
        return await report(rest)
      case 'verify':
        return await verify(rest)
      case 'import':
      case 'compare':
        return await importOrCompare(command, rest)
      default:
        if (command.startsWith('-')) return await serve(argv)
        throw new UsageError(`unknown command '${command}'`)
    }
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`agency-sandbox: ${e.message}\n\n${HELP[command ?? 'main'] ?? HELP.main}`)
      return EXIT.usage
    }
    // FixtureError by name: its module is loaded only when a fixture is read
    if (e instanceof ConfigError || (e instanceof Error && e.name === 'FixtureError')) {
      // a fixture's errors quote its keys and text: each line printed through printable
      const { printable } = await import('./printable.js')
      console.error(`agency-sandbox: ${e.message.split('\n').map((line) => printable(line)).join('\n')}`)
      return EXIT.failed
    }
    const address = e as NodeJS.ErrnoException & { port?: number; address?: string }
    if (address.code === 'EADDRINUSE' || address.code === 'EACCES') {
      const where = `${address.address ?? 'this address'}:${address.port ?? '?'}`
      console.error(address.code === 'EADDRINUSE'
        ? `agency-sandbox: port ${where} is already in use; stop the other process or choose another port with --port N (or PORT=N; 0 picks a free one)`
        : `agency-sandbox: not allowed to listen on ${where}; use a port above 1023 with --port N (or PORT=N)`)
      return EXIT.failed
    }
    console.error('agency-sandbox: failed to start:', e)
    return EXIT.failed
  }
}

const code = await main(process.argv.slice(2))
if (code >= 0) process.exitCode = code
