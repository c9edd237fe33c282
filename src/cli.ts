#!/usr/bin/env node
import { createWriteStream } from 'node:fs'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { bannerFields, bannerLines, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, type BannerFacts } from './banner.js'
import { HELP } from './cli-help.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { DEFAULT_HEAP_GROWTH_PERCENT, limitHeapGrowth } from './heap-growth.js'
import { readyLine, ReadyFileError, writeReadyFile } from './ready.js'

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

class UsageError extends Error {}

/**
 * `--name VALUE` as `--name=VALUE` when VALUE starts with a dash and names no option: parseArgs
 * calls such a value ambiguous, and a token or a secret may begin with one (a base64url token
 * does once in 64). A missing value before the next option stays an error.
 */
function dashedValues (args: string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const namesOption = (arg: string) => arg === '-h' || arg === '--' || (/^--[a-z][a-z-]*(=|$)/.test(arg) && Object.hasOwn(options, arg.slice(2).split('=')[0]))
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') return out.concat(args.slice(i))
    const name = /^--([a-z][a-z-]*)$/.exec(args[i])?.[1]
    const value = args[i + 1]
    if (name !== undefined && options[name]?.type === 'string' && value !== undefined && value.startsWith('-') && !namesOption(value)) {
      out.push(`--${name}=${value}`)
      i++
    } else {
      out.push(args[i])
    }
  }
  return out
}

function parse (args: string[], options: ParseArgsConfig['options']): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const all = { ...options, help: { type: 'boolean', short: 'h' } } satisfies ParseArgsConfig['options']
    const { values, positionals } = parseArgs({ args: dashedValues(args, all), options: all, allowPositionals: true, strict: true })
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

/** `serve` options that set an environment setting of the same meaning. */
const SERVE_OPTION_SETTINGS = {
  port: 'PORT',
  host: 'HOST',
  db: 'SANDBOX_DB',
  fixtures: 'SANDBOX_FIXTURES',
  'log-level': 'LOG_LEVEL',
  'control-token': 'SANDBOX_CONTROL_TOKEN',
  'allowed-hosts': 'SANDBOX_ALLOWED_HOSTS',
  'journal-size': 'SANDBOX_JOURNAL_SIZE',
  'journal-bytes': 'SANDBOX_JOURNAL_BYTES',
  'signing-key': 'SANDBOX_SIGNING_KEY',
  database: 'SANDBOX_DATABASE_URL'
} as const

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
    'signing-key': { type: 'string' },
    database: { type: 'string' },
    'ready-file': { type: 'string' },
    'exit-on-stdin-close': { type: 'boolean' }
  })
  if (values.help === true) return help('serve')
  const readyFile = values['ready-file']
  if (readyFile === '') throw new UsageError('--ready-file needs a path, e.g. --ready-file /tmp/sandbox-ready.json')
  const env = { ...process.env }
  for (const [option, name] of Object.entries(SERVE_OPTION_SETTINGS)) {
    const value = values[option as keyof typeof values]
    if (typeof value === 'string') env[name] = value
  }
  if (values['reset-on-start'] === true) env.SANDBOX_RESET_ON_START = 'true'
  const config: Config = loadConfig(env)
  // loaded here, not at the top: the other commands need none of the server
  const { closeOnSignals, startServer } = await import('./server.js')
  // This process is the sandbox's own, so its process-wide memory settings are the sandbox's to
  // choose; an app built inside someone else's process (startSandbox, buildApp) leaves them alone.
  limitHeapGrowth(config.heapGrowthPercent)
  const server = await startServer(config, { collectBodyBuffers: true, processMetrics: true })
  const { worlds } = server.app
  // A program that started the sandbox learns where it listens: a line on stdout that is not a
  // terminal (or that asked for a free port), and the file it named.
  const ready = { url: server.url, pid: process.pid }
  // The file first: a program that reads the stdout line may look for the file next.
  let removeReadyFile = () => {}
  if (typeof readyFile === 'string') {
    try {
      removeReadyFile = writeReadyFile(readyFile, ready)
    } catch (e) {
      await server.close()
      throw e
    }
  }
  if (config.port === 0 || process.stdout.isTTY !== true) process.stdout.write(readyLine(ready))
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
  const stop = closeOnSignals(server, (code) => {
    removeReadyFile()
    process.exit(code)
  }, config.drainSeconds)
  if (values['exit-on-stdin-close'] === true) {
    // the end of the pipe the starting program holds: it stopped, however it stopped (SIGKILL too)
    process.stdin.once('end', () => stop('stdin closed')).once('error', () => stop('stdin closed')).resume()
  }
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
  url: { type: 'string' }, session: { type: 'string' }, world: { type: 'string' }, format: { type: 'string' }, 'fail-on': { type: 'string' }, token: { type: 'string' }, out: { type: 'string' }
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

/** `rotate-signing-key` lives in src/rotate-command.ts (loaded only when run). */
async function rotate (args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { database: { type: 'string' }, 'signing-key': { type: 'string' } })
  if (values.help === true) return help('rotate-signing-key')
  if (positionals.length > 0) throw new UsageError(`rotate-signing-key takes no positional arguments, got '${positionals[0]}'`)
  return await (await import('./rotate-command.js')).rotateCommand(values, process, usage)
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
      case 'rotate-signing-key':
        return await rotate(rest)
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
      // verify's 2 says a valid report of another verdict than pass: a report it could not check is a 1
      return command === 'verify' ? EXIT.failed : EXIT.usage
    }
    // FixtureError and StartupError by name: their modules are loaded only when a fixture is read or a start refused
    if (e instanceof ConfigError || e instanceof ReadyFileError || (e instanceof Error && (e.name === 'FixtureError' || e.name === 'StartupError'))) {
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
