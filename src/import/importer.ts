import { createHash, randomBytes, scryptSync } from 'node:crypto'
import { existsSync, rmSync } from 'node:fs'
import type { FixtureAgency, FixtureIntegration } from '../fixture/schema.js'
import { CheckpointedFile, checkpointPath, partialPath, readCheckpoint, type Checkpoint, type Mark, type Plan } from './checkpoint.js'
import { checkClient, dropUnknownKeys } from './client-check.js'
import { deletionTimes } from './deleted.js'
import { GiveUpError, numberIn, VendorClient, type Answer } from './http.js'
import { limiter } from './limit.js'
import type { Reporter } from './progress.js'
import { survey, type AgencySurvey } from './survey.js'

/**
 * `agency-sandbox import`: reads what an integration sees through the vendor API and writes
 * it as a fixture, one client at a time (memory stays bounded whatever the agency's size).
 * The same upstream and options give the same bytes: agencies and clients ascending, each
 * client as the API answered it (fields the sandbox does not know included). What is written
 * is what `validate` and `serve` accept: the agencies, offices, users and integration are
 * checked by the fixture's own validation before the first byte, each client as it is written;
 * what the fixture cannot hold is left out and said.
 */

export interface ImportOptions {
  from: string
  clientId: string
  clientSecret: string
  out: string
  version: '4.0' | '3.0'
  agencies?: number[]
  anonymize: boolean
  seed?: string
  concurrency: number
  resume: boolean
  keepSecret: boolean
  timeoutMs: number
  retries: number
  reporter: Reporter
}

export interface ImportResult {
  agencies: number
  clients: number
  deleted: number
  leftOut: number
  requests: number
  retried: number
  secret: string
  seed?: string
  resumedAt?: number
}

/** The import cannot go on (the upstream refused, a checkpoint does not fit); the message says what to do. */
export class ImportError extends Error {
  override name = 'ImportError'
}

/**
 * A batch answer above this many bytes is followed, once written, by a full collection. Its
 * buffers (the socket's pieces and the body) live outside the JavaScript heap, where V8 collects
 * dead ones only once some 64 MiB more has been allocated, and its parse leaves as much garbage
 * again: four answers of the most values at the 6 MiB limit, in flight at once, peaked at
 * 163-193 MB without it and 146-159 MB with it. A real batch (0.55 MiB on average in a
 * generated agency, 0.91 MiB for its 200 largest clients) never pays for it.
 */
const COLLECT_AFTER_BYTES = 2 * 1024 * 1024

/** Clients per batch read: the API's limit. */
export const BATCH = 200
const GROUPS = 'Details,People,Contacts,Claims,Policies'

type Rec = Record<string, unknown>
/** What a step fetched: a batch read's answer (parsed when written), or an agency's deletion times. */
interface StepData { batch?: { path: string; answer: Answer }; times?: Map<number, number> }
/** One write of the fixture: a batch of live clients, or an agency's deleted clients (written after its live ones). */
interface Step { agency: number; live: number[]; deleted: boolean; first: boolean; last: boolean }

/** Each agency's live clients in batches, ascending, then its deleted clients; an agency without any is one empty step. */
function stepsOf (agencies: AgencySurvey[]): Step[] {
  const steps: Step[] = []
  agencies.forEach((a, agency) => {
    const parts: Array<{ live: number[]; deleted: boolean }> = []
    for (let i = 0; i < a.liveIds.length; i += BATCH) parts.push({ live: a.liveIds.slice(i, i + BATCH), deleted: false })
    if (a.deleted.length > 0) parts.push({ live: [], deleted: true })
    if (parts.length === 0) parts.push({ live: [], deleted: false })
    parts.forEach((part, i) => steps.push({ agency, ...part, first: i === 0, last: i === parts.length - 1 }))
  })
  return steps
}

/** A GUID for a deleted client's placeholder details, the same for the same agency and number. */
function placeholderGuid (agencyId: number, clientNumber: number): string {
  const h = createHash('sha256').update(`deleted|${agencyId}|${clientNumber}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/**
 * The API never answers a deleted client's body: its entry holds what the fixture requires
 * (placeholder details) with the deletion time and office the listings revealed, so the
 * listings with `deleted=true`, `asOf` and `officeId` answer as upstream.
 */
function deletedClient (agencyId: number, clientNumber: number, modifiedMs: number, officeId: number): Rec {
  return {
    clientNumber,
    deleted: true,
    details: {
      id: placeholderGuid(agencyId, clientNumber),
      modified: new Date(modifiedMs).toISOString(),
      status: 'Active',
      isPersonal: true,
      isCommercial: false,
      officeId
    }
  }
}

/**
 * The integration's secret in the fixture: derived from the real one with scrypt (so the same
 * upstream gives the same bytes, and the real secret cannot be read back), unless kept.
 */
function fixtureSecret (o: ImportOptions, origin: string): string {
  if (o.keepSecret) return o.clientSecret
  return scryptSync(o.clientSecret, `agency-sandbox import|${o.clientId}|${origin}`, 18, { N: 1 << 14 }).toString('base64url')
}

function agencyHead (a: AgencySurvey): Omit<FixtureAgency, 'clients'> {
  return {
    agencyId: a.agencyId,
    name: `Agency ${a.agencyId}`,
    active: true,
    connected: true,
    supportsIncludes: a.supportsIncludes,
    defaultOfficeId: a.defaultOfficeId,
    offices: a.offices,
    users: a.users
  }
}

function agencyOpening (a: AgencySurvey): string {
  return JSON.stringify(agencyHead(a)).slice(0, -1) + ',"clients":[\n'
}

/**
 * The fixture without its clients, checked by the fixture's validation (the one `serve`
 * applies): what the survey could not make fit stops the import before anything is written.
 */
async function checkSkeleton (integration: FixtureIntegration, agencies: AgencySurvey[]): Promise<void> {
  const { validateFixture } = await import('../fixture/validate.js')
  const result = validateFixture({ integrations: [integration], agencies: agencies.map((a) => ({ ...agencyHead(a), clients: [] })) })
  if (result.ok) return
  const [first] = result.errors
  const more = result.errors.length > 1 ? ` (and ${result.errors.length - 1} more)` : ''
  throw new ImportError(`the fixture would not validate: ${first.field}: ${first.message}${more}`)
}

async function plan (o: ImportOptions, client: VendorClient, key: string): Promise<Plan> {
  const origin = new URL(o.from).origin
  const seed = o.anonymize ? o.seed ?? randomBytes(12).toString('base64url') : undefined
  let agencies = await survey({
    client,
    version: o.version,
    agencies: o.agencies,
    concurrency: o.concurrency,
    warn: (m) => o.reporter.warn(m),
    leftOut: (kind, m) => o.reporter.leftOut(kind, m),
    note: (m) => o.reporter.note(m)
  })
  if (seed !== undefined) {
    const { Anonymizer } = await import('./anonymize.js')
    const anon = new Anonymizer(seed)
    agencies = agencies.map((a) => ({ ...a, offices: a.offices.map((of) => anon.office(of)), users: a.users.map((u) => anon.user(u)) }))
  }
  const secret = fixtureSecret(o, origin)
  const integration: FixtureIntegration = {
    clientId: o.clientId,
    clientSecret: secret,
    name: `Imported from ${origin}`,
    agencies: agencies.map((a) => ({ agencyId: a.agencyId, scopes: a.scopes }))
  }
  await checkSkeleton(integration, agencies)
  const header = `{\n"integrations":[${JSON.stringify(integration)}],\n"agencies":[\n`
  return { format: 2, key, header, agencies, seed, secret }
}

/** Only what shapes the output: a resume with any of these changed starts over. */
function optionsKey (o: ImportOptions): string {
  const { from, clientId, version, agencies, anonymize, seed, keepSecret } = o
  return createHash('sha256').update(JSON.stringify({ from, clientId, version, agencies, anonymize, seed, keepSecret })).digest('hex')
}

/** The interrupted import --resume carries on, if any (a checkpoint of other options is refused); without --resume, its files go. */
function checkpointToResume (o: ImportOptions, key: string): Checkpoint | undefined {
  const r = o.reporter
  let found = o.resume ? readCheckpoint(o.out) : undefined
  if (o.resume && found === undefined) r.note(`no checkpoint at ${checkpointPath(o.out)}: starting from the beginning`)
  if (found !== undefined && found.plan.key !== key) {
    throw new ImportError(`${checkpointPath(o.out)} belongs to an import with other options (URL, Client Id, version, agencies, anonymising, seed or secret); run without --resume to start over`)
  }
  if (found !== undefined && found.mark === undefined) found = undefined
  if (!o.resume) for (const f of [checkpointPath(o.out), partialPath(o.out)]) if (existsSync(f)) rmSync(f)
  return found
}

/**
 * Stops for good, or for --resume: a give-up (the instance kept failing, or asked to wait
 * beyond the time a request may take) and a file-system error (a full disk) can be carried on
 * from the checkpoint; an answer that cannot be used, or a fixture that would not validate,
 * would stop a resume alike.
 */
export const isResumable = (e: unknown): boolean =>
  e instanceof GiveUpError || (e instanceof Error && /^E[A-Z]+$/.test(String((e as NodeJS.ErrnoException).code)))

export async function runImport (o: ImportOptions): Promise<ImportResult> {
  const client = new VendorClient({
    baseUrl: o.from,
    clientId: o.clientId,
    clientSecret: o.clientSecret,
    timeoutMs: o.timeoutMs,
    retries: o.retries,
    onRetry: (n) => o.reporter.note(`${n.what} ${n.reason}; retry ${n.attempt}/${n.of} in ${(n.waitMs / 1000).toFixed(1)} s`)
  })
  try {
    const key = optionsKey(o)
    const found = checkpointToResume(o, key)
    try {
      return await importAll(o, client, key, found)
    } catch (e) {
      // nothing a resume could use is left behind
      if (!isResumable(e)) for (const f of [checkpointPath(o.out), partialPath(o.out)]) rmSync(f, { force: true })
      throw e
    }
  } finally {
    // requests still under way (other batches, the deletion-time search) end with it
    client.close()
  }
}

async function importAll (o: ImportOptions, client: VendorClient, key: string, found: Checkpoint | undefined): Promise<ImportResult> {
  const r = o.reporter
  const { exposedCollection } = await import('../http/body-buffers.js')
  const collect = exposedCollection('major')
  const thePlan = found?.plan ?? await plan(o, client, key)
  const file = found !== undefined ? CheckpointedFile.resume(o.out, found.mark!) : CheckpointedFile.start(o.out, thePlan)
  let mark: Mark = found?.mark ?? { step: 0, bytes: Buffer.byteLength(thePlan.header), inAgency: 0, done: 0 }
  if (found !== undefined) r.note(`resuming after ${mark.done} clients`)
  const resumedAt = found !== undefined ? mark.done : undefined

  const anon = thePlan.seed === undefined ? undefined : new (await import('./anonymize.js')).Anonymizer(thePlan.seed)
  const agencies = thePlan.agencies
  const steps = stepsOf(agencies)
  const total = agencies.reduce((n, a) => n + a.liveIds.length, 0)
  const invoices = agencies.map((a) => a.scopes.includes('invoice-read'))
  const officeSets = agencies.map((a) => new Set(a.offices.map((of) => of.officeId)))
  let leftOut = 0
  const deniedSeen = new Set<number>()
  const unknownKeysSeen = new Set<string>()
  const unknownKey = (agencyId: number, key: string) => {
    if (unknownKeysSeen.has(`${agencyId}|${key}`)) return
    unknownKeysSeen.add(`${agencyId}|${key}`)
    r.leftOut('top-level client fields outside the fixture\'s client', `agency ${agencyId}: clients' top-level field ${key} left out (not part of the fixture's client)`)
  }

  // deletion times: searched while the clients are read (or found in the checkpoint), each
  // agency's recorded once known; a failed search stops the import at the next step
  const stop = { aborted: false }
  let searchFailed: unknown
  let probes = 0
  const probeLimit = limiter(o.concurrency)
  const times = agencies.map((a, i): Promise<Map<number, number>> | undefined => {
    if (a.deleted.length === 0) return undefined
    const known = found?.times.get(i)
    if (known !== undefined) return Promise.resolve(new Map(known))
    const search = deletionTimes({
      client,
      version: o.version,
      agencyId: a.agencyId,
      limit: probeLimit,
      stop,
      onRequest: () => { if (++probes % 5000 === 0) r.note(`${probes} deletion-time requests`) }
    }, a.deleted.map((d) => d.clientNumber), o.concurrency).then((found) => {
      file.recordTimes({ agency: i, times: [...found] })
      return found
    })
    search.catch((e: unknown) => { searchFailed ??= e })
    return search
  })

  /**
   * A step's data: the batch read of its live clients with every group granted, or its
   * agency's deletion times. The answer is parsed when its turn to be written comes, so only
   * one answer at a time is ever held parsed, whatever --concurrency.
   */
  const fetchStep = async (s: number): Promise<StepData> => {
    const step = steps[s]
    if (step.deleted) return { times: await times[step.agency] }
    if (step.live.length === 0) return {}
    const a = agencies[step.agency]
    const path = VendorClient.path(`/vendor/agency/${a.agencyId}/clients`, o.version, { include: invoices[step.agency] ? `${GROUPS},Invoices` : GROUPS })
    const answer = await client.post(path, { clientNumbers: step.live })
    const denied = answer.headers.get('denied')
    if (denied !== null && !deniedSeen.has(step.agency)) {
      deniedSeen.add(step.agency)
      r.warn(`agency ${a.agencyId}: the batch read answered Denied: ${denied}; those groups are not imported`)
    }
    return { batch: { path, answer } }
  }

  /** A batch read's clients by number. */
  const clientsOf = (data: StepData): Map<number, Rec> | undefined => {
    if (data.batch === undefined) return undefined
    const list = client.expectArray('POST', data.batch.path, data.batch.answer)
    return new Map(list.filter((c): c is Rec => c !== null && typeof c === 'object').map((c) => [numberIn(c.clientNumber), c]))
  }

  /** The clients of a step as fixture text, one JSON each, in order: each checked as written, what the fixture refuses left out and said. */
  const entriesOf = (step: Step, data: StepData): string[] => {
    const a = agencies[step.agency]
    const written = (c: Rec, n: number): string[] => {
      const json = JSON.stringify(c)
      const problems = checkClient(c, json, officeSets[step.agency])
      if (problems.length === 0) return [json]
      leftOut++
      r.leftOut('clients the fixture refuses', `agency ${a.agencyId}: client ${n} left out: the fixture refuses it: ${problems.slice(0, 3).join('; ')}`)
      return []
    }
    if (step.deleted) return a.deleted.flatMap((d) => written(deletedClient(a.agencyId, d.clientNumber, data.times?.get(d.clientNumber) ?? 0, d.officeId), d.clientNumber))
    const clients = clientsOf(data)
    return step.live.flatMap((n) => {
      const got = clients?.get(n)
      if (got === undefined) {
        leftOut++
        r.leftOut('clients listed but not answered by the batch read', `agency ${a.agencyId}: client ${n} was listed but not answered by the batch read (deleted meanwhile?); left out`)
        return []
      }
      dropUnknownKeys(got, (key) => unknownKey(a.agencyId, key))
      return written(anon === undefined ? got : anon.client(got), n)
    })
  }

  // up to `concurrency` steps in flight; written strictly in order
  const inFlight = new Map<number, Promise<StepData>>()
  let next = mark.step
  try {
    for (let s = mark.step; s < steps.length; s++) {
      while (next < steps.length && inFlight.size < o.concurrency) {
        const p = fetchStep(next)
        p.catch(() => {}) // awaited in turn; a failure stops the loop there
        inFlight.set(next++, p)
      }
      const data = await inFlight.get(s)!
      inFlight.delete(s)
      if (searchFailed !== undefined) throw searchFailed
      const step = steps[s]
      let text = step.first ? (step.agency > 0 ? ',\n' : '') + agencyOpening(agencies[step.agency]) : ''
      let inAgency = step.first ? 0 : mark.inAgency
      for (const json of entriesOf(step, data)) text += (inAgency++ > 0 ? ',\n' : '') + json
      if (step.last) text += '\n]}'
      mark = file.write(text, { step: s + 1, bytes: 0, inAgency, done: mark.done + step.live.length })
      if ((data.batch?.answer.body.length ?? 0) > COLLECT_AFTER_BYTES) collect?.()
      r.progress(mark.done, total)
    }
  } catch (e) {
    stop.aborted = true
    file.close()
    r.finish()
    throw e
  }
  file.finish('\n]\n}\n')
  r.finish()
  return {
    agencies: agencies.length,
    clients: total,
    deleted: agencies.reduce((n, a) => n + a.deleted.length, 0),
    leftOut,
    requests: client.requests,
    retried: client.retried,
    secret: thePlan.secret,
    seed: thePlan.seed,
    resumedAt
  }
}
