import { FileTooLarge, readFileBounded } from './bounded-file.js'
import { InvalidKeyError, verifyingKeyOf, verifyReport, type VerificationFailure } from './domain/examiner/signature.js'
import { ApiError } from './errors.js'
import { parseJsonDocument } from './http/json-body.js'
import { MAX_ANSWER_BYTES, MAX_ANSWER_VALUES } from './import/http.js'
import { printable } from './printable.js'

/**
 * The `verify` command: checks a signed examiner report offline, with the sandbox's public key
 * (or its private key, whose public key is derived), by the same function the SDK exports. The
 * report file is read as the report command reads a report (at most MAX_ANSWER_BYTES, its JSON
 * nesting and values checked before parsing); whatever it holds is printed through printable.
 */

type Values = Record<string, string | boolean | undefined>
type Usage = (message: string) => never

export interface VerifyIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

/** A PEM Ed25519 key is about 120 bytes; past this a file is no key. */
const MAX_KEY_BYTES = 64 * 1024

const LABELS: Record<VerificationFailure, string> = {
  'not-a-report': 'not a report',
  unsigned: 'unsigned',
  'unknown-algorithm': 'unknown algorithm',
  'other-key': 'another key',
  tampered: 'tampered'
}

function keyOf (file: string, usage: Usage) {
  let pem: Buffer
  try {
    pem = readFileBounded(file, MAX_KEY_BYTES)
  } catch (e) {
    if (e instanceof FileTooLarge) return usage(`--key ${printable(file)} is larger than ${MAX_KEY_BYTES / 1024} KiB, which no PEM key is`)
    return usage(`--key ${printable(file)} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  try {
    return verifyingKeyOf(pem)
  } catch (e) {
    if (!(e instanceof InvalidKeyError)) throw e
    return usage(`--key ${printable(file)} ${e.message}`)
  }
}

/** The report file's JSON, or why it cannot be read. */
function readReport (file: string): { value: unknown } | { problem: string } {
  let bytes: Buffer
  try {
    bytes = readFileBounded(file, MAX_ANSWER_BYTES)
  } catch (e) {
    if (e instanceof FileTooLarge) return { problem: `larger than ${MAX_ANSWER_BYTES / (1024 * 1024)} MiB, more than any report` }
    return { problem: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` }
  }
  try {
    return { value: parseJsonDocument(bytes, MAX_ANSWER_VALUES).value }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { problem: `not a JSON report: ${e.detail}` }
  }
}

export function verifyCommand (positionals: string[], values: Values, io: VerifyIo, usage: Usage): number {
  if (positionals.length !== 1) usage(positionals.length === 0 ? 'verify takes the report FILE' : `verify takes one FILE, got ${positionals.length}`)
  const keyFile = values.key
  if (typeof keyFile !== 'string' || keyFile === '') usage('--key FILE is required: the sandbox\'s public key (GET /_sandbox/signing-key?format=pem)')
  const file = positionals[0]
  const key = keyOf(keyFile as string, usage)
  const shown = printable(file)
  const read = readReport(file)
  if ('problem' in read) {
    io.stderr.write(`${shown}: invalid, ${printable(read.problem)}\n`)
    return 1
  }
  const result = verifyReport(read.value, key)
  if (!result.valid) {
    io.stderr.write(`${shown}: invalid, ${LABELS[result.reason]}: ${printable(result.message)}\n`)
    return 1
  }
  const { report, signature } = result
  const { session } = report
  const who = session.clientId === null ? 'every integration' : `clientId ${session.clientId}`
  io.stdout.write(printable(
    `${file}: valid: verdict ${report.verdict}, session ${session.id} "${session.name}" (${who}, world ${signature.worldId}), ` +
    `${session.startedAt} to ${session.endedAt} (ended by ${session.endedBy}), signed ${signature.signedAt} ` +
    `by key ${signature.keyId} (agency-sandbox ${signature.sandboxVersion})`
  ) + '\n')
  return 0
}
