import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { MAX_JSON_DEPTH, scanJson } from '../../http/json-body.js'
import type { ReportSignature } from '../../schemas/examiner.js'
import { canonicalJson, NotCanonicalizable } from './canonical-json.js'
import { firstDifference, firstDuplicateKey } from './report-text.js'
import { InvalidKeyError, keyIdOf, SIGNATURE_ALGORITHM, signedContent, verifyingKeyOf, type SignedReport } from './signature.js'

/**
 * Checks a signed report strictly: the file as the sandbox served it, byte for byte (its canonical
 * JSON, RFC 8785), with no key repeated anywhere in it, a signature block of the known members
 * and algorithm, and an Ed25519 signature that matches, made by one of the keys given (the
 * current and previous keys a programme publishes: GET /_sandbox/signing-keys). `agency-sandbox
 * verify` runs the same function on the file's bytes.
 */

/** Why a report does not verify. */
export type VerificationFailure = 'not-a-report' | 'duplicate-key' | 'not-canonical' | 'unsigned' | 'unknown-algorithm' | 'other-key' | 'tampered'

export type ReportVerification =
  | { valid: true, report: SignedReport, signature: ReportSignature }
  | { valid: false, reason: VerificationFailure, message: string }

/** The keys a report may be checked with: PEM text (one key or several, public or private), a KeyObject, a list of either, or the key list GET /_sandbox/signing-keys answers. */
export type VerifyingKeys = string | Buffer | KeyObject | ReadonlyArray<string | Buffer | KeyObject> | { keys: ReadonlyArray<{ publicKey: string }> }

const fail = (reason: VerificationFailure, message: string): ReportVerification => ({ valid: false, reason, message })
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)
const shown = (value: unknown): string => (JSON.stringify(value) ?? String(value)).slice(0, 80)
/** 64 bytes in base64, padded. */
const SIGNATURE_VALUE = /^[A-Za-z0-9+/]{85}[AQgw]==$/
const SIGNATURE_MEMBERS = ['algorithm', 'final', 'keyId', 'signedAt', 'value']
const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?-----END [A-Z0-9 ]+-----/g
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Every key given, as Ed25519 public keys; an InvalidKeyError names what is not one. */
export function verifyingKeysOf (keys: VerifyingKeys): KeyObject[] {
  if (Array.isArray(keys)) return (keys as ReadonlyArray<string | Buffer | KeyObject>).flatMap((key) => verifyingKeysOf(key))
  if (isObject(keys) && Array.isArray((keys as { keys?: unknown }).keys)) {
    return (keys as { keys: Array<{ publicKey?: unknown }> }).keys.map((entry) => {
      if (typeof entry?.publicKey !== 'string') throw new InvalidKeyError('is a key list whose entries have no publicKey (PEM)')
      return verifyingKeyOf(entry.publicKey)
    })
  }
  if (typeof keys === 'string' || Buffer.isBuffer(keys)) {
    const text = String(keys)
    if (text.trimStart().startsWith('{')) {
      let list: unknown
      try {
        list = JSON.parse(text)
      } catch {
        throw new InvalidKeyError('is neither PEM nor the JSON key list of GET /_sandbox/signing-keys')
      }
      if (!isObject(list) || !Array.isArray(list.keys)) throw new InvalidKeyError('is JSON, but not the key list of GET /_sandbox/signing-keys ({keys: [{publicKey}]})')
      return verifyingKeysOf(list as { keys: Array<{ publicKey: string }> })
    }
    const blocks = text.match(PEM_BLOCK) ?? []
    if (blocks.length > 1) return blocks.map((block) => verifyingKeyOf(block))
  }
  return [verifyingKeyOf(keys as string | Buffer | KeyObject)]
}

/** The report's text, strictly: UTF-8, JSON, no key repeated, byte for byte its canonical form; or why not. */
function fromText (bytes: Uint8Array): { value: unknown } | ReportVerification {
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    return fail('not-a-report', 'it is not UTF-8 text, as a report is')
  }
  if (scanJson(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), MAX_JSON_DEPTH) !== 'ok') return fail('not-a-report', `it nests deeper than ${MAX_JSON_DEPTH} levels, as no report does`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    return fail('not-a-report', `it is not JSON (${(e as Error).message})`)
  }
  const duplicate = firstDuplicateKey(text)
  if (duplicate !== undefined) return fail('duplicate-key', `the key ${shown(duplicate)} appears twice in one object: readers of the file would disagree on what it says`)
  let canonical: string
  try {
    canonical = canonicalJson(value)
  } catch (e) {
    if (!(e instanceof NotCanonicalizable)) throw e
    return fail('tampered', 'it holds a value no signed report holds (a lone surrogate, a number out of range): it was changed')
  }
  if (canonical !== text) {
    return fail('not-canonical', `byte ${firstDifference(text, canonical)} differs from the report's canonical form (RFC 8785), the form it is served and signed in: ` +
      'check the file as saved from the sandbox (agency-sandbox report --format json --out report.json), unchanged')
  }
  return { value }
}

/**
 * Checks a signed report with the keys given. The report's text (a string, or the file's bytes)
 * is checked strictly, byte for byte; a report already parsed (what `control.sessions.report`
 * answers) is checked for its content alone (no text is left to check). Never throws for what the
 * report holds; throws an InvalidKeyError when a key given is not an Ed25519 key.
 */
export function verifyReport (report: unknown, keys: VerifyingKeys): ReportVerification {
  let publicKeys: KeyObject[]
  try {
    publicKeys = verifyingKeysOf(keys)
  } catch (e) {
    throw e instanceof InvalidKeyError ? new InvalidKeyError(`the key given ${e.message}`) : e
  }
  let parsed = report
  if (typeof report === 'string' || report instanceof Uint8Array) {
    const read = fromText(typeof report === 'string' ? Buffer.from(report, 'utf8') : report)
    if (!('value' in read)) return read
    parsed = read.value
  }
  if (!isObject(parsed)) return fail('not-a-report', 'the document is not a JSON object, as a report is')
  const { signature, ...content } = parsed
  if (signature === undefined) {
    return fail('unsigned', 'the report has no signature: the sandbox signs the reports of ended sessions, when it has a signing key (SANDBOX_SIGNING_KEY)')
  }
  if (!isObject(signature)) return fail('tampered', `its signature is not an object {${SIGNATURE_MEMBERS.join(', ')}}`)
  const { value, ...block } = signature
  if (block.algorithm !== SIGNATURE_ALGORITHM) return fail('unknown-algorithm', `it is signed with the algorithm ${shown(block.algorithm)}; reports are signed with ${SIGNATURE_ALGORITHM}`)
  const unknown = Object.keys(signature).filter((name) => !SIGNATURE_MEMBERS.includes(name))
  if (unknown.length > 0) return fail('tampered', `its signature block holds ${unknown.map(shown).join(', ')}, which no signature holds (${SIGNATURE_MEMBERS.join(', ')})`)
  if (block.final !== true || typeof block.signedAt !== 'string') return fail('tampered', 'its signature block is not a final report\'s (final: true, signedAt)')
  const signer = content.signer
  if (!isObject(signer) || signer.keyId !== block.keyId || typeof signer.name !== 'string') return fail('tampered', 'its signer does not name the key that signed it')
  const key = publicKeys.find((k) => keyIdOf(k) === block.keyId)
  if (key === undefined) {
    const given = publicKeys.map(keyIdOf)
    return fail('other-key', `it is signed by the key ${shown(block.keyId)}, not by the key${given.length === 1 ? '' : 's'} given (${given.join(', ')})`)
  }
  if (typeof value !== 'string' || !SIGNATURE_VALUE.test(value)) return fail('tampered', 'its signature value is not an Ed25519 signature (64 bytes in base64): it was changed')
  let bytes: Buffer
  try {
    bytes = Buffer.from(canonicalJson(signedContent(content, block)), 'utf8')
  } catch (e) {
    if (!(e instanceof NotCanonicalizable)) throw e
    return fail('tampered', 'it holds a value no signed report holds (a lone surrogate, a number out of range): it was changed')
  }
  if (!verify(null, bytes, key, Buffer.from(value, 'base64'))) {
    return fail('tampered', 'the signature does not match the content: the report was changed after it was signed')
  }
  return { valid: true, report: parsed as SignedReport, signature: signature as ReportSignature }
}

/** The public key of a PEM key (public or private) with its id, as a key list names it. */
export function publicKeyEntry (key: KeyObject): { keyId: string, publicKeyPem: string } {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key
  return { keyId: keyIdOf(publicKey), publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) as string }
}
