/** The ceilings' Basic-auth check: decode the header and compare it with the expected credentials. */
export function basicAuthCheck (clientId: string, clientSecret: string): (header: string | undefined) => boolean {
  return (header) => {
    if (header === undefined || header.length < 7 || header.slice(0, 6).toLowerCase() !== 'basic ') return false
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    return colon >= 0 && decoded.slice(0, colon) === clientId && decoded.slice(colon + 1) === clientSecret
  }
}
