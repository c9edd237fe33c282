import { count, queryIsTrue, queryValue, succeeded, Tally, type RecordedRequest, type RuleOutcomes } from './records.js'

/**
 * The traffic rules: how the integration behaved request by request (retries, RefIds, reads,
 * limits, credentials). The sync rules are in sync.ts, the checklist in coverage.ts.
 */

/** A request repeated this much before its Retry-After has passed still counts as waiting (timer and clock granularity). */
const RETRY_AFTER_SLACK_MS = 20
/** Single-client reads of one agency within READ_WINDOW_MS that make a batch read the better call. */
export const N_PLUS_ONE_READS = 20
const READ_WINDOW_MS = 60_000
export const BATCH_LIMIT = 200
const WRITE_OPERATIONS = new Set(['logNote', 'attachment', 'receipts', 'createClient'])

const who = (r: RecordedRequest) => r.clientId ?? '(no Client Id)'
const seconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)} s`

function retryAfterIgnored (requests: readonly RecordedRequest[]) {
  const tally = new Tally()
  /** Per integration and request (method and path): until when its 429 asked it to wait. */
  const waits = new Map<string, { answeredMs: number, untilMs: number, seconds: number, journalId: number }>()
  for (const r of requests) {
    const key = `${who(r)}\n${r.method}\n${r.path}`
    const wait = waits.get(key)
    if (wait !== undefined && r.realMs < wait.untilMs - RETRY_AFTER_SLACK_MS) {
      tally.add(r, `sent ${seconds(r.realMs - wait.answeredMs)} after the 429 of request ${wait.journalId} asking for ${wait.seconds} s`)
    }
    if (r.status === 429 && r.retryAfterS !== undefined) {
      const answeredMs = r.realMs + r.elapsedMs
      waits.set(key, { answeredMs, untilMs: answeredMs + r.retryAfterS * 1000, seconds: r.retryAfterS, journalId: r.journalId })
    } else if (wait !== undefined) {
      waits.delete(key)
    }
  }
  return { tally, message: `${count(tally.count, 'request')} repeated before the Retry-After of a 429 had passed` }
}

interface WriteItem { request: RecordedRequest, refId: string, fingerprint: string }

/** How a write was answered, as its partner saw it: an answer that never arrived says so. */
function outcome (r: RecordedRequest): string {
  if (r.answerLost === 'dropped') return `handled with ${r.status}, its answer dropped by fault rule ${r.faultId ?? ''}`.trimEnd()
  if (r.answerLost === 'abandoned') return `handled with ${r.status} after the client closed the connection`
  return `answered ${r.status}`
}

/** Writes whose outcome a partner must assume happened: applied (200), saved (202), or unknown (dropped, 5xx). */
const mayHaveHappened = (status: number) => status === 200 || status === 202 || status === 0 || status >= 500

function writeRules (requests: readonly RecordedRequest[]): RuleOutcomes {
  const resent = new Tally()
  const retried = new Tally()
  const conflicts = new Tally()
  /** By operation, agency and RefId: the first write that may have happened with it. */
  const byRefId = new Map<string, WriteItem>()
  /** By operation, path and content: the latest write with that content. */
  const byContent = new Map<string, WriteItem>()
  for (const request of requests) {
    if (request.writes === undefined || request.operation === undefined || !WRITE_OPERATIONS.has(request.operation)) continue
    for (const [refId, fingerprint] of request.writes) {
      const item = { request, refId: refId.toLowerCase(), fingerprint }
      const refKey = `${request.operation}\n${request.agencyId ?? ''}\n${item.refId}`
      const first = byRefId.get(refKey)
      if (first !== undefined && first.fingerprint !== fingerprint) {
        conflicts.add(request, `RefId ${refId} was first sent in request ${first.request.journalId} with a different body`)
      }
      const contentKey = `${request.operation}\n${request.path}\n${fingerprint}`
      const before = byContent.get(contentKey)
      if (before !== undefined && before.refId !== item.refId) {
        const detail = `the same content as request ${before.request.journalId} (${outcome(before.request)}) under a new RefId ${refId}`
        if (before.request.status === 202) resent.add(request, detail)
        else if (mayHaveHappened(before.request.status)) retried.add(request, detail)
      }
      if (mayHaveHappened(request.status)) {
        if (first === undefined) byRefId.set(refKey, item)
        byContent.set(contentKey, item)
      }
    }
  }
  return new Map([
    ['write-resent-after-202', { tally: resent, message: `${count(resent.count, 'write')} answered 202 sent again under a new RefId (the agency gets duplicates)` }],
    ['write-retried-new-refid', { tally: retried, message: `${count(retried.count, 'write')} re-sent with the same content under a new RefId` }],
    ['refid-conflict', { tally: conflicts, message: `${count(conflicts.count, 'RefId')} reused with a different body` }]
  ])
}

function nPlusOneReads (requests: readonly RecordedRequest[]) {
  const tally = new Tally()
  /** Per integration and agency: the real times of its recent single-client reads. */
  const recent = new Map<string, { times: number[], start: number, inBurst: boolean }>()
  for (const r of requests) {
    if (r.operation !== 'getClient' || r.agencyId === undefined || r.status === 401) continue
    const key = `${who(r)}\n${r.agencyId}`
    let reads = recent.get(key)
    if (reads === undefined) recent.set(key, (reads = { times: [], start: 0, inBurst: false }))
    reads.times.push(r.realMs)
    while (r.realMs - reads.times[reads.start] > READ_WINDOW_MS) reads.start++
    if (reads.start > 1024) {
      reads.times = reads.times.slice(reads.start)
      reads.start = 0
    }
    const inWindow = reads.times.length - reads.start
    if (inWindow >= N_PLUS_ONE_READS) {
      if (!reads.inBurst) {
        tally.add(r, `${N_PLUS_ONE_READS} single-client reads of agency ${r.agencyId} within a minute`)
        tally.name(r.agencyId)
      }
      reads.inBurst = true
    } else {
      reads.inBurst = false
    }
  }
  return { tally, message: `${count(tally.count, 'run')} of ${N_PLUS_ONE_READS} or more single-client reads within a minute (agencies ${tally.list()}); one batch read answers 200` }
}

function simpleRules (requests: readonly RecordedRequest[]): RuleOutcomes {
  const batch = new Tally()
  const fullSync = new Tally()
  const createRate = new Tally()
  const auth = new Tally()
  const fullyListed = new Set<string>()
  for (const r of requests) {
    if (r.status === 401) {
      auth.add(r)
      auth.name(who(r))
    }
    if (r.operation === 'batchClients' && r.batchSize !== undefined && r.batchSize > BATCH_LIMIT) {
      batch.add(r, `${r.batchSize} client numbers`)
    }
    if (r.operation === 'createClient' && r.status === 429 && r.faultId === undefined) createRate.add(r)
    if (r.operation === 'changedClients' && r.status === 200 && queryValue(r, 'asOf') === undefined && !queryIsTrue(r, 'deleted')) {
      const key = `${who(r)}\n${r.agencyId}\n${queryValue(r, 'officeId') ?? ''}`
      if (fullyListed.has(key)) {
        fullSync.add(r, `agency ${r.agencyId} was already listed in full in this session`)
        fullSync.name(r.agencyId ?? '?')
      }
      fullyListed.add(key)
    }
  }
  return new Map([
    ['batch-over-limit', { tally: batch, message: `${count(batch.count, 'batch read')} asked for more than ${BATCH_LIMIT} clients (answered 400)` }],
    ['full-sync-repeated', { tally: fullSync, message: `${count(fullSync.count, 'full listing')} without asOf repeated (agencies ${fullSync.list()})` }],
    ['create-rate-exceeded', { tally: createRate, message: `${count(createRate.count, 'create-client call')} refused for exceeding the creation rate` }],
    ['auth-failed', { tally: auth, message: `${count(auth.count, 'request')} refused with 401 (Client Ids: ${auth.list()})` }]
  ])
}

function agencyNotListed (requests: readonly RecordedRequest[]) {
  const tally = new Tally()
  const listed = new Map<string, Set<number>>()
  for (const r of requests) {
    if (r.operation === 'agencies' && succeeded(r) && r.listedAgencies !== undefined) {
      let agencies = listed.get(who(r))
      if (agencies === undefined) listed.set(who(r), (agencies = new Set()))
      for (const id of r.listedAgencies) agencies.add(id)
    }
  }
  for (const r of requests) {
    if (r.agencyId === undefined || r.status === 401 || listed.get(who(r))?.has(r.agencyId) === true) continue
    tally.add(r, `agency ${r.agencyId} was not in any agencies answer of this session`)
    tally.name(r.agencyId)
  }
  return { tally, message: `${count(tally.count, 'request')} to agencies never listed by GET /vendor/agencies (${tally.list()})` }
}

/** What the sandbox ignored in one request (its warnings): unknown body keys and query parameters. */
function ignoredNames (r: RecordedRequest): string[] {
  const names: string[] = []
  for (const warning of r.warnings ?? []) {
    const parameter = /^ignored unknown query parameter (.+)$/.exec(warning)
    if (parameter !== null) names.push(`query ${parameter[1]}`)
    const unknown = /^ignored unknown key (.+)$/.exec(warning)
    if (unknown !== null) names.push(`key ${unknown[1]}`)
    const duplicate = /^ignored duplicate key (\S+)/.exec(warning)
    if (duplicate !== null) names.push(`duplicate key ${duplicate[1]}`)
  }
  return names
}

function unknownFields (requests: readonly RecordedRequest[]) {
  const tally = new Tally()
  for (const r of requests) {
    const names = ignoredNames(r)
    if (names.length === 0) continue
    tally.add(r, `ignored: ${names.slice(0, 10).join(', ')}`)
    tally.name(...names.map((n) => `${r.operation ?? r.path} ${n}`))
  }
  return { tally, message: `${count(tally.count, 'request')} sent keys or parameters the service ignores: ${tally.list(20)}` }
}

/** Every traffic rule's outcome, by rule id. */
export function trafficRules (requests: readonly RecordedRequest[]): RuleOutcomes {
  return new Map([
    ['retry-after-ignored', retryAfterIgnored(requests)],
    ...writeRules(requests),
    ['n-plus-one-reads', nPlusOneReads(requests)],
    ...simpleRules(requests),
    ['agency-not-listed', agencyNotListed(requests)],
    ['unknown-fields', unknownFields(requests)]
  ])
}
