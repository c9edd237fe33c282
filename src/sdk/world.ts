import type { Static } from '@sinclair/typebox'
import type { WorldCreateBody } from '../schemas/worlds.js'
import { controlClient, type Control, type WorldCreated } from './control-client.js'

export type WorldOptions = Static<typeof WorldCreateBody>

/** One world of a sandbox, as a test uses it: its credentials, and a control client of its own. */
export interface SandboxWorld {
  id: string
  name: string
  /** The vendor API's base URL: the same for every world (the credentials choose the world). */
  url: string
  /** The world's integrations; each Client Id ends with `@<world id>`. */
  integrations: WorldCreated['integrations']
  /**
   * The `Authorization` header of one of the world's integrations: the one whose Client Id is
   * `clientId` in this world (`abc` finds `abc@<world id>`), by default the first.
   */
  authorization(clientId?: string): string
  /** Opens the world's control routes when the sandbox has a control token. */
  token: string
  expiresAt: string | null
  /** The control client of this world (reset, clock, faults, sessions... of this world only). */
  control: Control
  /** Deletes the world (its credentials answer 401 from then on). */
  delete(): Promise<void>
}

/**
 * Creates a world on the sandbox at `url` (POST /_sandbox/worlds) and gives it to a test: the
 * way to run tests in parallel against one sandbox, each with its own data, clock and journal.
 */
export async function createWorld (url: string, options: WorldOptions = {}, token?: string): Promise<SandboxWorld> {
  const control = controlClient(url, token)
  const created = await control.worlds.create(options)
  const integrationOf = (clientId?: string) => {
    const found = clientId === undefined
      ? created.integrations[0]
      : created.integrations.find((i) => i.clientId === clientId || i.clientId === `${clientId}@${created.id}`)
    if (found === undefined) throw new Error(`world ${created.id} has no integration ${clientId ?? ''}; it has ${created.integrations.map((i) => i.clientId).join(', ')}`)
    return found
  }
  return {
    id: created.id,
    name: created.name,
    url,
    integrations: created.integrations,
    authorization (clientId) {
      const { clientId: id, clientSecret } = integrationOf(clientId)
      return 'Basic ' + Buffer.from(`${id}:${clientSecret}`).toString('base64')
    },
    token: created.token,
    expiresAt: created.expiresAt,
    control: control.world(created.id, token ?? created.token),
    delete: () => control.worlds.delete(created.id)
  }
}
