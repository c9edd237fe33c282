import { createHash, randomBytes } from 'node:crypto'
import type { Tenant } from './tenants.js'
import type { World } from './world.js'

/** A new control token (a world's or a tenant's): 144 random bits. */
export const newControlToken = (): string => randomBytes(18).toString('base64url')

/** A token's SHA-256: what tokens are compared and found by, so that no comparison runs over the token itself. */
export const tokenDigest = (token: string): Buffer => createHash('sha256').update(token).digest()

/** Whom a token the sandbox made opens the control plane to. */
export type TokenHolder = { kind: 'world', world: World } | { kind: 'tenant', tenant: Tenant }

/**
 * The holders of the tokens the sandbox made, worlds' and tenants', found by the digest of the
 * token a request presents: one map lookup whatever the number of tokens, never a scan that stops
 * at the first differing character. What a lookup's time could tell depends on the digest, which
 * tells nothing of the token.
 */
export class TokenHolders {
  private readonly byDigest = new Map<string, TokenHolder>()

  /** The key a token is kept under. */
  static keyOf (token: string): string {
    return tokenDigest(token).toString('base64')
  }

  add (key: string, holder: TokenHolder): void {
    this.byDigest.set(key, holder)
  }

  /** Revokes the token kept under this key: it opens nothing from now on. */
  remove (key: string): void {
    this.byDigest.delete(key)
  }

  find (token: string): TokenHolder | undefined {
    return this.byDigest.get(TokenHolders.keyOf(token))
  }
}
