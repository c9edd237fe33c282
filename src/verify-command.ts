import { FileTooLarge, readFileBounded } from './bounded-file.js'
import { InvalidKeyError } from './domain/examiner/signature.js'
import { verifyingKeysOf, verifyReport, type VerificationFailure } from './domain/examiner/verify-report.js'
import { MAX_ANSWER_BYTES } from './import/http.js'
import { printable } from './printable.js'

/**
 * The `verify` command: checks a signed examiner report offline, byte for byte, with the
 * sandbox's public keys (a PEM file of one key or several, or the key list GET
 * /_sandbox/signing-keys answers; a private key works too, its public key derived), by the same
 * function the SDK exports. It prints one line, whatever the file holds (through printable), and
 * exits 0 for a valid report whose verdict is pass, 2 for a valid report of another verdict, 1
 * for anything else: a report changed, signed by another key, unreadable, or a usage error.
 */

type Values = Record<string, string | boolean | undefined>
type Usage = (message: string) => never

export interface VerifyIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

/** Exit codes of verify: a CI step passes on `pass` alone. */
export const VERIFY_EXIT = { pass: 0, invalid: 1, notPass: 2 } as const

/** A key list of a few PEM Ed25519 keys is a few KiB; past this a file is no key. */
const MAX_KEY_BYTES = 64 * 1024

const LABELS: Record<VerificationFailure, string> = {
  'not-a-report': 'not a report',
  'duplicate-key': 'duplicate key',
  'not-canonical': 'not as signed',
  unsigned: 'unsigned',
  'unknown-algorithm': 'unknown algorithm',
  'other-key': 'another key',
  tampered: 'tampered'
}

function keysOf (file: string, usage: Usage) {
  let pem: Buffer
  try {
    pem = readFileBounded(file, MAX_KEY_BYTES)
  } catch (e) {
    if (e instanceof FileTooLarge) return usage(`--key ${printable(file)} is larger than ${MAX_KEY_BYTES / 1024} KiB, which no PEM key is`)
    return usage(`--key ${printable(file)} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  try {
    return verifyingKeysOf(pem)
  } catch (e) {
    if (!(e instanceof InvalidKeyError)) throw e
    return usage(`--key ${printable(file)} ${e.message}`)
  }
}

/** A member of what the report holds, as text ('?' when it is not there: a report signed by another program). */
function text (value: unknown, ...path: string[]): string {
  let at = value
  for (const name of path) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[name] : undefined
  return typeof at === 'string' || typeof at === 'number' ? String(at) : '?'
}

/** The valid report in one line: verdict, session, world and tenant, times, signer and key, judge. */
function describe (report: unknown): string {
  const clientId = text(report, 'session', 'clientId')
  const tenant = text(report, 'world', 'tenant', 'id')
  return `verdict ${text(report, 'verdict')}, session ${text(report, 'session', 'id')} "${text(report, 'session', 'name')}" ` +
    `(${clientId === '?' ? 'every integration' : `clientId ${clientId}`}), ` +
    `world ${text(report, 'world', 'id')} "${text(report, 'world', 'name')}" ` +
    `(${tenant === '?' ? 'no tenant' : `tenant ${tenant} "${text(report, 'world', 'tenant', 'name')}"`}, start ${text(report, 'world', 'startDigest').slice(0, 12)}…), ` +
    `${text(report, 'session', 'startedAt')} to ${text(report, 'session', 'endedAt')} (ended by ${text(report, 'session', 'endedBy')}), ` +
    `signed ${text(report, 'signature', 'signedAt')} by "${text(report, 'signer', 'name')}" with key ${text(report, 'signature', 'keyId')} ` +
    `(agency-sandbox ${text(report, 'judgedBy', 'version')}, build ${text(report, 'judgedBy', 'build')})`
}

export function verifyCommand (positionals: string[], values: Values, io: VerifyIo, usage: Usage): number {
  if (positionals.length !== 1) usage(positionals.length === 0 ? 'verify takes the report FILE' : `verify takes one FILE, got ${positionals.length}`)
  const keyFile = values.key
  if (typeof keyFile !== 'string' || keyFile === '') usage('--key FILE is required: the sandbox\'s public keys (GET /_sandbox/signing-keys?format=pem)')
  const file = positionals[0]
  const keys = keysOf(keyFile as string, usage)
  const shown = printable(file)
  let bytes: Buffer
  try {
    bytes = readFileBounded(file, MAX_ANSWER_BYTES)
  } catch (e) {
    const problem = e instanceof FileTooLarge
      ? `larger than ${MAX_ANSWER_BYTES / (1024 * 1024)} MiB, more than any report`
      : `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`
    io.stderr.write(`${shown}: invalid, ${problem}\n`)
    return VERIFY_EXIT.invalid
  }
  const result = verifyReport(bytes, keys)
  if (!result.valid) {
    io.stderr.write(`${shown}: invalid, ${LABELS[result.reason]}: ${printable(result.message)}\n`)
    return VERIFY_EXIT.invalid
  }
  io.stdout.write(printable(`${file}: valid: ${describe(result.report)}`) + '\n')
  return result.report.verdict === 'pass' ? VERIFY_EXIT.pass : VERIFY_EXIT.notPass
}
