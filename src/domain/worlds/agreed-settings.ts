import { recordedSettings, recordSetting, type AgreedSetting, type Disagreement } from '../../db/postgres/agreed-settings.js'
import type pg from 'pg'

/**
 * The settings a hosted sandbox's instances agree on (db/postgres/agreed-settings.ts): for now the
 * key its reports are signed with, one per programme, so that every report of the programme is
 * signed by the key it publishes. Rotating it is the administrator's explicit step.
 */

export const SIGNING_KEY_SETTING = 'signing-key-id'

/** The command that rotates the programme's signing key (docs/key-custody.md). */
export const ROTATE_COMMAND = 'agency-sandbox rotate-signing-key --database URL --signing-key new-key.pem'

/** The settings this instance brings: the id of its signing key (none when it signs nothing). */
export const instanceSettings = (signingKeyId: string | undefined): AgreedSetting[] => [{ name: SIGNING_KEY_SETTING, value: signingKeyId }]

/** Why this instance does not start: each setting it disagrees on, its value and the one recorded, and what to do. */
export function disagreementMessage (disagreements: readonly Disagreement[]): string {
  return disagreements.map(({ name, mine, recorded }) => {
    const since = `recorded in PostgreSQL by ${recorded.recordedBy} at ${new Date(recorded.recordedAtMs).toISOString()}`
    if (name === SIGNING_KEY_SETTING) {
      return `SANDBOX_SIGNING_KEY: this instance ${mine === undefined ? 'has no signing key' : `signs with key ${mine}`}, but this programme's reports are signed with key ${recorded.value} (${since}). ` +
        `Start every instance with the programme's key; to make ${mine === undefined ? 'another key' : 'this key'} the programme's, rotate first: ${ROTATE_COMMAND} (docs/key-custody.md)`
    }
    return `${name}: this instance has ${mine ?? '(none)'}, but ${recorded.value} is ${since}`
  }).join('\n')
}

/** The rotation: the new key's id recorded for every instance to come; answers the key id it replaced. */
export async function rotateSigningKey (pool: pg.Pool, keyId: string, by: string): Promise<string | undefined> {
  return (await recordSetting(pool, SIGNING_KEY_SETTING, keyId, by))?.value
}

/** The programme's signing key id as recorded (undefined: none yet). */
export async function programmeSigningKey (pool: pg.Pool): Promise<string | undefined> {
  return (await recordedSettings(pool, [SIGNING_KEY_SETTING])).get(SIGNING_KEY_SETTING)?.value
}
