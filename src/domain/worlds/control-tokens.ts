import { createHash, randomBytes } from 'node:crypto'

/** A new control token (a world's or a tenant's): 144 random bits. */
export const newControlToken = (): string => randomBytes(18).toString('base64url')

/** A token's SHA-256: what tokens are compared and found by, so that no comparison runs over the token itself. */
export const tokenDigest = (token: string): Buffer => createHash('sha256').update(token).digest()

/**
 * The holders of the tokens the sandbox made, worlds' and tenants', found by the digest of the
 * token a request presents: one map lookup whatever the number of tokens, never a scan that stops
 * at the first differing character. What a lookup's time could tell depends on the digest, which
 * tells nothing of the token. `H`: whom a token opens the control plane to (TokenHolder, tenants.ts).
 */
export class TokenHolders<H> {
  private readonly byDigest = new Map<string, H>()

  /** The key a token is kept under. */
  static keyOf (token: string): string {
    return tokenDigest(token).toString('base64')
  }

  add (key: string, holder: H): void {
    this.byDigest.set(key, holder)
  }

  /** Revokes the token kept under this key: it opens nothing from now on. */
  remove (key: string): void {
    this.byDigest.delete(key)
  }

  find (token: string): H | undefined {
    return this.byDigest.get(TokenHolders.keyOf(token))
  }
}
