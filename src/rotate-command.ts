import { hostname } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig } from './config.js'
import { rotateSigningKey } from './domain/worlds/agreed-settings.js'
import { migratePostgres } from './db/postgres/migrate.js'
import { openPool } from './db/postgres/world-log.js'

/**
 * `agency-sandbox rotate-signing-key`: the administrator's step that makes another key a hosted
 * programme's signing key. It records the new key's id in PostgreSQL (agreed-settings.ts), where
 * every instance started from then on compares its own; instances still running keep their key
 * until they are restarted with the new one (docs/key-custody.md).
 */

type Values = Record<string, string | boolean | undefined>
type Usage = (message: string) => never

export interface RotateIo {
  stdout: { write(text: string): unknown }
}

export async function rotateCommand (values: Values, io: RotateIo, usage: Usage): Promise<number> {
  const env = { ...process.env }
  if (typeof values.database === 'string') env.SANDBOX_DATABASE_URL = values.database
  if (typeof values['signing-key'] === 'string') env.SANDBOX_SIGNING_KEY = values['signing-key']
  const config = loadConfig(env)
  if (config.databaseUrl === undefined) usage('--database URL is required (or SANDBOX_DATABASE_URL): the hosted sandbox\'s PostgreSQL')
  if (config.signingKey === undefined) usage('--signing-key FILE is required (or SANDBOX_SIGNING_KEY): the new key, an Ed25519 private key (PEM)')
  const pool = openPool({ url: config.databaseUrl!, max: 1 })
  try {
    await migratePostgres(pool, join(config.migrationsDir, 'postgres'))
    const keyId = config.signingKey!.keyId
    const before = await rotateSigningKey(pool, keyId, `rotate-signing-key on ${hostname()}`)
    io.stdout.write(before === keyId
      ? `the programme's signing key is already ${keyId}; nothing changed\n`
      : `the programme's signing key is now ${keyId}${before === undefined ? '' : ` (was ${before})`}. ` +
        'Restart every instance with it (SANDBOX_SIGNING_KEY), the previous public keys in SANDBOX_SIGNING_KEYS_PREVIOUS so that earlier reports still verify\n')
    return 0
  } catch (e) {
    throw new ConfigError(`cannot record the signing key in ${new URL(config.databaseUrl!).host}: ${(e as Error).message}`)
  } finally {
    await pool.end().catch(() => undefined)
  }
}
