import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { promisify } from 'node:util'
import type { Report, ReportSignature } from '../../schemas/examiner.js'
import { canonicalJson, canonicalJsonInTurns, NotCanonicalizable } from './canonical-json.js'

/**
 * Signed readiness reports. An ended session's report is signed with the instance's Ed25519 key
 * over the canonical JSON of everything it holds but the signature's own `value`: the verdict,
 * the findings, the sync checks, the coverage, the session (its times included) and the
 * signature block (key id, signing time, sandbox version, world id, final). The canonical form is
 * RFC 8785 (JSON Canonicalization Scheme), encoded in UTF-8, so that a partner team can check a
 * report with any JCS implementation and any Ed25519 verifier, without this package.
 */

export const SIGNATURE_ALGORITHM = 'Ed25519'
/** How to make a key, said wherever a key is refused. */
export const MAKE_A_KEY = 'openssl genpkey -algorithm ed25519 -out signing-key.pem'

export interface SigningKey {
  privateKey: KeyObject
  /** SHA-256 of the public key in DER (SubjectPublicKeyInfo), lower-case hex. */
  keyId: string
  /** The public key, PEM (BEGIN PUBLIC KEY). */
  publicKeyPem: string
}

/** A key that cannot sign or verify reports; the message says what it is instead (it reads after the key's name). */
export class InvalidKeyError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'InvalidKeyError'
  }
}

/** `openssl pkey -pubin -in public.pem -outform DER | sha256sum` prints the same. */
export function keyIdOf (publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex')
}

function notEd25519 (key: KeyObject): InvalidKeyError {
  return new InvalidKeyError(`is a key of type ${key.asymmetricKeyType ?? key.type}, not Ed25519; make an Ed25519 key with ${MAKE_A_KEY}`)
}

/** An encrypted PEM private key (PKCS #8, or OpenSSL's traditional form); a passphrase is not asked for. */
const isEncrypted = (pem: string | Buffer, e: unknown) =>
  /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: *4, *ENCRYPTED/.test(String(pem)) || (e as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE'

/** The signing key of a PEM Ed25519 private key (PKCS #8, unencrypted); anything else is an InvalidKeyError. */
export function signingKeyOf (pem: string | Buffer): SigningKey {
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(pem)
  } catch (e) {
    if (isEncrypted(pem, e)) {
      throw new InvalidKeyError('is an encrypted private key; give it unencrypted (openssl pkey -in encrypted.pem -out signing-key.pem)')
    }
    let isPublic = false
    try {
      isPublic = createPublicKey(pem).type === 'public'
    } catch { /* neither */ }
    throw new InvalidKeyError(isPublic
      ? 'is a public key; give the private key reports are signed with (its public key is derived from it)'
      : `is not a PEM private key; make an Ed25519 key with ${MAKE_A_KEY}`)
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw notEd25519(privateKey)
  const publicKey = createPublicKey(privateKey)
  return { privateKey, keyId: keyIdOf(publicKey), publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) as string }
}

/** The key a report is checked with: a public key, or a private key (its public key is derived); PEM text or a KeyObject. */
export function verifyingKeyOf (key: string | Buffer | KeyObject): KeyObject {
  let publicKey: KeyObject
  if (typeof key === 'string' || Buffer.isBuffer(key)) {
    try {
      publicKey = createPublicKey(key)
    } catch (e) {
      throw new InvalidKeyError(isEncrypted(key, e)
        ? 'is an encrypted private key; give the public key (BEGIN PUBLIC KEY) instead'
        : 'is not a PEM public key (BEGIN PUBLIC KEY) nor a PEM private key')
    }
  } else if (key.type === 'secret') {
    throw new InvalidKeyError('is a secret key, not Ed25519')
  } else {
    publicKey = key.type === 'private' ? createPublicKey(key) : key
  }
  if (publicKey.asymmetricKeyType !== 'ed25519') throw notEd25519(publicKey)
  return publicKey
}

/** Lone surrogates: JSON can escape one, but UTF-8 cannot hold it, and RFC 8785 refuses it. */
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * The value with every lone surrogate of its strings replaced by U+FFFD, so that no text a partner
 * sent can make a report unsignable (SQLite already replaces them in what it stores: the session's
 * name, the recorded requests; this holds whatever way text reaches a report).
 */
function wellFormed (value: unknown): unknown {
  if (typeof value === 'string') return value.replace(LONE_SURROGATES, '\uFFFD')
  if (Array.isArray(value)) return value.map(wellFormed)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, member] of Object.entries(value)) Object.defineProperty(out, wellFormed(key) as string, { value: wellFormed(member), enumerable: true, writable: true, configurable: true })
    return out
  }
  return value
}

/** The signed content: the report's members and the signature block without `value`; its bytes are its canonical JSON (RFC 8785) in UTF-8. */
const signedContent = (content: Record<string, unknown>, block: Record<string, unknown>) => ({ ...content, signature: block })

/** Ed25519 in libuv's thread pool: signing a report of megabytes takes tens of milliseconds. */
const signInPool = promisify(sign) as (algorithm: null, data: Buffer, key: KeyObject) => Promise<Buffer>

export interface SignOptions {
  key: SigningKey
  /** The world the session belongs to. */
  worldId: string
  sandboxVersion: string
  /** The signing time, real time in ms (default now). */
  now?: number
}

export type SignedReport = Report & { signature: ReportSignature }

/**
 * The report signed, when it is final: an ended session's, which is kept and never changes. An
 * open session's report is provisional (it grows with every request) and is answered unsigned:
 * undefined here. Written in turns and signed off the event loop, so that a large report does
 * not hold up the requests being answered.
 */
export async function signReport (report: Report, { key, worldId, sandboxVersion, now = Date.now() }: SignOptions): Promise<SignedReport | undefined> {
  if (report.session.endedAt === undefined) return undefined
  const block: Omit<ReportSignature, 'value'> = {
    algorithm: SIGNATURE_ALGORITHM, keyId: key.keyId, signedAt: new Date(now).toISOString(), sandboxVersion, worldId, final: true
  }
  const { signature: _previous, ...unsigned } = report
  let content = unsigned
  let text: string
  try {
    text = await canonicalJsonInTurns(signedContent(content, block))
  } catch (e) {
    if (!(e instanceof NotCanonicalizable)) throw e
    // the rare report with text UTF-8 cannot hold: signed, and answered, with U+FFFD in its place
    content = wellFormed(content) as typeof content
    text = await canonicalJsonInTurns(signedContent(content, block))
  }
  const value = (await signInPool(null, Buffer.from(text, 'utf8'), key.privateKey)).toString('base64')
  return { ...content, signature: { ...block, value } }
}

/** Why a report does not verify. */
export type VerificationFailure = 'not-a-report' | 'unsigned' | 'unknown-algorithm' | 'other-key' | 'tampered'

export type ReportVerification =
  | { valid: true, report: SignedReport, signature: ReportSignature }
  | { valid: false, reason: VerificationFailure, message: string }

const fail = (reason: VerificationFailure, message: string): ReportVerification => ({ valid: false, reason, message })
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)
const shown = (value: unknown): string => (JSON.stringify(value) ?? String(value)).slice(0, 80)
/** 64 bytes in base64, padded. */
const SIGNATURE_VALUE = /^[A-Za-z0-9+/]{85}[AQgw]==$/

/**
 * Checks a signed report (the parsed JSON, as the report route or `control.sessions.report`
 * answers it) with the sandbox's public key (PEM; a private key works too, its public key is
 * derived). Never throws for what the report holds; throws an InvalidKeyError when `key` is not an
 * Ed25519 key. `agency-sandbox verify` runs the same function.
 */
export function verifyReport (report: unknown, key: string | Buffer | KeyObject): ReportVerification {
  let publicKey: KeyObject
  try {
    publicKey = verifyingKeyOf(key)
  } catch (e) {
    throw e instanceof InvalidKeyError ? new InvalidKeyError(`the key given ${e.message}`) : e
  }
  if (typeof report === 'string') return fail('not-a-report', 'a report is checked as the parsed JSON object, not as text: JSON.parse it first')
  if (!isObject(report)) return fail('not-a-report', 'the document is not a JSON object, as a report is')
  const { signature, ...content } = report
  if (signature === undefined) {
    return fail('unsigned', 'the report has no signature: the sandbox signs the reports of ended sessions, when it has a signing key (SANDBOX_SIGNING_KEY)')
  }
  if (!isObject(signature)) return fail('tampered', 'its signature is not an object {algorithm, keyId, signedAt, sandboxVersion, worldId, final, value}')
  const { value, ...block } = signature
  if (block.algorithm !== SIGNATURE_ALGORITHM) return fail('unknown-algorithm', `it is signed with the algorithm ${shown(block.algorithm)}; reports are signed with ${SIGNATURE_ALGORITHM}`)
  const given = keyIdOf(publicKey)
  if (block.keyId !== given) return fail('other-key', `it is signed by the key ${shown(block.keyId)}, not by the key given (${given})`)
  if (typeof value !== 'string' || !SIGNATURE_VALUE.test(value)) return fail('tampered', 'its signature value is not an Ed25519 signature (64 bytes in base64): it was changed')
  let bytes: Buffer
  try {
    bytes = Buffer.from(canonicalJson(signedContent(content, block)), 'utf8')
  } catch (e) {
    if (!(e instanceof NotCanonicalizable)) throw e
    return fail('tampered', 'it holds a value no signed report holds (a lone surrogate, a number out of range): it was changed')
  }
  if (!verify(null, bytes, publicKey, Buffer.from(value, 'base64'))) {
    return fail('tampered', 'the signature does not match the content: the report was changed after it was signed')
  }
  return { valid: true, report: report as SignedReport, signature: signature as ReportSignature }
}
