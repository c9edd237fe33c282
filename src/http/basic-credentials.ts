/**
 * The credentials of an `Authorization: Basic` header, decoded once per request: the Client Id
 * chooses the world, fault rules match it, the journal and the examiner record it, and the
 * vendor pipeline checks the secret. Parsed as RFC 7617 says, leniently where RFC 7230 allows
 * bad whitespace: scheme in any case, base64 token, user id without a colon, no control
 * characters; anything else has no credentials (a 401 where they are needed).
 */
export interface Credentials {
  clientId: string
  secret: string
}

const BASIC = /^[ \t]*basic[ \t]+([\w.~+/-]+=*)[ \t]*$/i
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1F\x7F]/

export function basicCredentials (header: string | string[] | undefined): Credentials | null {
  if (typeof header !== 'string') return null
  // a partner sends the same header with every request: decoded once (the secret is checked every time, by the vendor pipeline)
  const known = decoded.get(header)
  if (known !== undefined) return known
  if (decoded.size >= DECODED_KEPT) decoded.clear()
  const credentials = decode(header)
  decoded.set(header, credentials)
  return credentials
}

const DECODED_KEPT = 1024
const decoded = new Map<string, Credentials | null>()

function decode (header: string): Credentials | null {
  const token = BASIC.exec(header)?.[1]
  if (token === undefined) return null
  const decoded = Buffer.from(token, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon === -1 || CONTROL.test(decoded)) return null
  return { clientId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) }
}
