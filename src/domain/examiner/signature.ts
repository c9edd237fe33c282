import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto'
import { promisify } from 'node:util'
import type { Report, ReportSignature } from '../../schemas/examiner.js'
import { canonicalJson, canonicalJsonInTurns, NotCanonicalizable } from './canonical-json.js'

/**
 * Signed readiness reports. An ended session's report is signed with the instance's Ed25519 key
 * over the canonical JSON of everything it holds but the signature's own `value`: the verdict and
 * its evidence, the findings, the sync checks, the coverage, the session (its times included),
 * the judge (version, build, rules and their outcomes), the world and the data it started from,
 * the signer, and the signature block (algorithm, key id, signing time, final). The canonical
 * form is RFC 8785 (JSON Canonicalization Scheme), encoded in UTF-8, and the report is served in
 * that form with the signature's value added, so that the file a partner hands over is checked
 * byte for byte (verify-report.ts), with any JCS implementation and any Ed25519 verifier, or with
 * openssl alone (docs/key-custody.md).
 */

export const SIGNATURE_ALGORITHM = 'Ed25519' as const
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
export const signedContent = (content: Record<string, unknown>, block: Record<string, unknown>) => ({ ...content, signature: block })

/** Ed25519 in libuv's thread pool: signing a report of megabytes takes tens of milliseconds. */
const signInPool = promisify(sign) as (algorithm: null, data: Buffer, key: KeyObject) => Promise<Buffer>

export interface SignOptions {
  key: SigningKey
  /** Who holds the key (SANDBOX_SIGNER_NAME), named in the report. */
  signerName: string
  /** The signing time, real time in ms (default now). */
  now?: number
}

export type SignedReport = Report & { signer: NonNullable<Report['signer']>, signature: ReportSignature }

/** A signed report, and its text as served: the canonical JSON of the whole report, its signature's value included. */
export interface Signed {
  report: SignedReport
  text: string
}

/**
 * The report signed, when it is final: an ended session's, which is kept and never changes. An
 * open session's report is provisional (it grows with every request) and is answered unsigned:
 * undefined here. Written in turns and signed off the event loop, so that a large report does
 * not hold up the requests being answered.
 */
export async function signReport (report: Report, { key, signerName, now = Date.now() }: SignOptions): Promise<Signed | undefined> {
  if (report.session.endedAt === undefined) return undefined
  const block: Omit<ReportSignature, 'value'> = { algorithm: SIGNATURE_ALGORITHM, keyId: key.keyId, signedAt: new Date(now).toISOString(), final: true }
  const { signature: _previous, signer: _signer, ...unsigned } = report
  let content: Omit<SignedReport, 'signature'> = { ...unsigned, signer: { keyId: key.keyId, name: signerName } }
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
  const signature = { ...block, value }
  // the block's text appears once, as the top level's `signature` member: within a string every quote is escaped
  const unsignedBlock = `"signature":${canonicalJson(block)}`
  const at = text.indexOf(unsignedBlock)
  if (at === -1 || text.indexOf(unsignedBlock, at + 1) !== -1) throw new Error('the signature block is not once in the signed text')
  return {
    report: { ...content, signature },
    text: text.slice(0, at) + `"signature":${canonicalJson(signature)}` + text.slice(at + unsignedBlock.length)
  }
}
