import { createHmac, randomInt } from 'node:crypto'

/**
 * Names of worlds, and how a partner request finds its world by its Client Id alone: in every
 * world but the default one, each integration's Client Id ends with `@<world id>` (the sandbox adds
 * it where a fixture or a control call leaves it out), so the Basic-auth user name carries the
 * world and two worlds never share a Client Id.
 */

export const DEFAULT_WORLD_ID = 'default'

const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'
const ID_LENGTH = 10
const SUFFIX = new RegExp(`@(w[0-9a-z]{${ID_LENGTH}})$`)

/** A new id: the prefix and ten random letters and digits (about 52 bits). */
export function newId (prefix: string): string {
  let id = prefix
  for (let i = 0; i < ID_LENGTH; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)]
  return id
}

/** A new world id: `w` and ten random letters and digits. */
export const newWorldId = (): string => newId('w')

const AT = 64
const W = 119

/**
 * The world a Client Id names by its suffix, or undefined (the default world's ids have none). Runs
 * on every partner request, hence characters compared rather than a pattern matched; an id that
 * names no world is the registry's to find unknown.
 */
export function worldIdOfClientId (clientId: string): string | undefined {
  const at = clientId.length - ID_LENGTH - 2
  if (at < 0 || clientId.charCodeAt(at) !== AT || clientId.charCodeAt(at + 1) !== W) return undefined
  return clientId.slice(at + 1)
}

/** The Client Id an integration has in a world: its own id without any world suffix, then this world's. */
export function clientIdInWorld (clientId: string, worldId: string): string {
  return clientId.replace(SUFFIX, '') + '@' + worldId
}

/**
 * The Client Secret an integration has in a world of its own secrets: 22 base64url characters
 * (132 bits) of an HMAC of its Client Id under the key of the world's control token (its SHA-256,
 * control-tokens.ts). Every instance of a hosted sandbox, and every reset, makes the same one, and
 * nothing need keep it: whoever holds the world's token may read it anyway (GET /_sandbox/worlds/{id}).
 */
export function ownSecret (tokenKey: string, clientId: string): string {
  return createHmac('sha256', Buffer.from(tokenKey, 'base64')).update(`client secret\u0000${clientId}`).digest('base64url').slice(0, 22)
}
