import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServerResponse } from 'node:http'
import { runChild, type ChildRun } from './child-run.js'
import { endless, FakeUpstream, gzipBomb, kindOf, sendJson, trickle, world, worldAnswer, type Asked } from './fake-upstream.js'
import { MAX_ANSWER_BYTES, MAX_ANSWER_VALUES } from '../../src/import/http.js'
import type { PhaseSpec } from './context.js'
import { CLI } from './target.js'

/**
 * The hostile upstream: `agency-sandbox import` reads from a fake instance on 127.0.0.1 that
 * answers one kind of request with something no well-behaved instance sends. Each scenario runs
 * the importer as a child process (bounded in time and memory) and checks that it ends with one
 * line naming the request and the cause, exit 1 (or a fixture that validates, where the answer
 * can be represented in part), its peak RSS under 200 MB, no stack trace, no files left unless
 * the line offers --resume, and nothing from upstream reaching the terminal raw.
 */

const MiB = 1024 * 1024

/** What the importer must end with. */
type Outcome = 'fails' | 'resumable' | 'written'

export interface Scenario {
  name: string
  title: string
  outcome: Outcome
  /** Answers the requests it wants to (true: answered). */
  answer: (a: Asked, res: ServerResponse) => boolean
  /** Options of the import besides the common ones. */
  args?: string[]
  /** Checks of the scenario's own: [name, ok, detail]. */
  checks?: (run: ChildRun, out: string) => Array<[string, boolean, string]>
  /** Left out of the short run (the tap test). */
  fullOnly?: boolean
  /** Made before the importer starts (the bombs), so that the upstream answers at once. */
  prepare?: () => void
  /** The failure is no request's (false: the line need not name one). */
  namesRequest?: false
}

/** Upstream text that would take over a terminal: a window title, a clear screen, a forged line, a clipboard write, an 8-bit CSI, a bidi override. */
export const ESCAPES = '\u001b]0;pwned\u0007\u001b[2J\u001b[H\u001b[1A\u001b[2K\rimport: wrote out.json: finished OK\u001b]52;c;cm0gLXJmIH4=\u0007\u009b2J\u202e'
/** Characters a terminal acts on: C0 (but the line feed), DEL, C1, bidi embeddings, overrides and isolates. */
const ACTS_ON_TERMINAL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/ // eslint-disable-line no-control-regex

let bombs: { small: Buffer; large: Buffer } | undefined
/** Built once: the finding's sizes, 400 MiB (~390 KB of gzip) and 2 GiB (~2 MB). */
const bomb = () => (bombs ??= { small: gzipBomb(400 * MiB), large: gzipBomb(2048 * MiB) })
const sendBomb = (res: ServerResponse, body: Buffer) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) })
  res.end(body)
}
let largestAnswer: string | undefined
/**
 * `["0000000000000","0000000000001",…]`: distinct strings of 13 characters, 16 bytes each, as
 * many as an answer may hold values (one less), in just under MAX_ANSWER_BYTES: the costliest
 * answer the importer parses.
 */
const largest = () => (largestAnswer ??= `[${Array.from({ length: MAX_ANSWER_VALUES - 1 }, (_, i) => `"${i.toString(36).padStart(13, '0')}"`).join(',')}]`)
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
const batchWith = (a: Asked, change: (client: Record<string, unknown>, i: number) => void) =>
  (worldAnswer(a).body as Array<Record<string, unknown>>).map((c, i) => { change(c, i); return c })

export const SCENARIOS: Scenario[] = [
  {
    name: 'gzip-bomb-448mb',
    title: 'the batch read answers 457 KB of gzip that inflate to 448 MiB',
    outcome: 'fails',
    prepare: bomb,
    answer: (a, res) => kindOf(a) === 'batch' && (sendBomb(res, bomb().small), true)
  },
  {
    name: 'gzip-bomb-2gb',
    title: 'the agencies listing answers 2 MB of gzip that inflate to 2 GiB',
    outcome: 'fails',
    fullOnly: true,
    prepare: bomb,
    answer: (a, res) => kindOf(a) === 'agencies' && (sendBomb(res, bomb().large), true)
  },
  {
    name: 'endless-body',
    title: 'the batch read answers `[0,0,0,…` without end, as fast as it is read',
    outcome: 'fails',
    answer: (a, res) => kindOf(a) === 'batch' && (endless(res), true)
  },
  {
    name: 'trickling-body',
    title: 'the id listing answers two bytes every 100 ms without end',
    outcome: 'resumable',
    answer: (a, res) => kindOf(a) === 'ids' && (trickle(res), true)
  },
  {
    name: 'retry-after-300',
    title: 'every batch read answers 429 with Retry-After: 300',
    outcome: 'resumable',
    answer: (a, res) => kindOf(a) === 'batch' && (sendJson(res, 429, { title: 'Too Many Requests' }, { 'retry-after': '300' }), true)
  },
  {
    name: 'largest-answer',
    title: `the batch read answers just under ${MAX_ANSWER_BYTES / MiB} MiB of JSON: ${(MAX_ANSWER_VALUES - 1).toLocaleString('en-US')} distinct short strings, the most values an answer may hold`,
    outcome: 'written',
    prepare: largest,
    answer: (a, res) => kindOf(a) === 'batch' && (sendJson(res, 200, largest()), true),
    checks: (run) => [['the clients not answered are said', /clients listed but not answered by the batch read: 10 left out/.test(run.stdout), run.stdout.slice(0, 300)]]
  },
  {
    name: 'largest-answers-at-once',
    title: 'the id listing names 1,000 clients, and each of the 5 batch reads (4 at once, the default --concurrency) answers as largest-answer',
    fullOnly: true,
    outcome: 'written',
    prepare: largest,
    answer: (a, res) => {
      if (kindOf(a) === 'ids') return (sendJson(res, 200, Array.from({ length: 1000 }, (_, i) => 5000 + i)), true)
      return kindOf(a) === 'batch' && (sendJson(res, 200, largest()), true)
    },
    checks: (run) => [['the clients not answered are said', /clients listed but not answered by the batch read: 1,000 left out/.test(run.stdout), run.stdout.slice(0, 300)]]
  },
  {
    name: 'nested-10000',
    title: 'the batch read answers an array nested 10,000 deep',
    outcome: 'fails',
    answer: (a, res) => kindOf(a) === 'batch' && (sendJson(res, 200, nested(10_000)), true)
  },
  {
    name: 'nested-5000-anonymize',
    title: 'a client nests a field 5,000 deep, imported with --anonymize',
    outcome: 'fails',
    args: ['--anonymize', '--seed', 'attack'],
    answer: (a, res) => kindOf(a) === 'batch' &&
      (sendJson(res, 200, JSON.stringify(batchWith(a, () => {})).replace('"details":{', `"details":{"deep":${nested(5_000)},`)), true)
  },
  {
    name: 'nested-62-in-a-client',
    title: 'a client nests a field 62 deep: within the answer\'s 64 levels, beyond them in the fixture',
    outcome: 'written',
    answer: (a, res) => kindOf(a) === 'batch' &&
      (sendJson(res, 200, JSON.stringify(batchWith(a, () => {})).replace('"details":{', `"details":{"deep":${nested(60)},`)), true)
  },
  {
    name: 'not-an-array',
    title: 'the agencies listing answers an object',
    outcome: 'fails',
    answer: (a, res) => kindOf(a) === 'agencies' && (sendJson(res, 200, { agencies: world.agencies() }), true)
  },
  {
    name: 'agency-listed-twice',
    title: 'the agencies listing names the agency twice',
    outcome: 'written',
    answer: (a, res) => kindOf(a) === 'agencies' && (sendJson(res, 200, [...(world.agencies() as unknown[]), ...(world.agencies() as unknown[])]), true)
  },
  {
    name: 'proto-keys',
    title: 'a client holds a `__proto__` key, another a `constructor` name, imported with --anonymize',
    outcome: 'written',
    args: ['--anonymize', '--seed', 'attack'],
    answer: (a, res) => kindOf(a) === 'batch' &&
      (sendJson(res, 200, JSON.stringify(batchWith(a, (c, i) => {
        if (i === 1) c.details = { ...(c.details as object), constructor: 'Jane Doe' }
      })).replace('"details":{', '"details":{"__proto__":{"polluted":true},')), true),
    checks: (run, out) => {
      const text = existsSync(out) ? readFileSync(out, 'utf8') : ''
      return [
        ['the fixture holds no __proto__ key', !text.includes('"__proto__"'), ''],
        ['the anonymising key does not reach the fixture', !/"k0"|"k1"/.test(text), text.match(/.{60}"k0".{60}/)?.[0] ?? '']
      ]
    }
  },
  {
    name: 'escape-sequences',
    title: 'escape sequences in scope names, an office field and the Denied header of the batch read',
    outcome: 'written',
    answer: (a, res) => {
      const kind = kindOf(a)
      if (kind === 'agencies') return (sendJson(res, 200, [{ agencyId: 1003, scopes: ['client-read', 'user-list', `x${ESCAPES}`] }]), true)
      if (kind === 'offices') return (sendJson(res, 200, world.offices().map((o) => ({ ...o, [`note${ESCAPES}`]: 1 }))), true)
      // a header holds Latin-1 only: the 8-bit CSI
      if (kind === 'batch') res.setHeader('denied', 'Invoices\u009b2J\u009b1;1H')
      return false
    }
  },
  {
    name: 'escape-sequences-in-an-error',
    title: 'the batch read answers 403 with escape sequences in its body',
    outcome: 'fails',
    answer: (a, res) => kindOf(a) === 'batch' && (sendJson(res, 403, `{"title":"${ESCAPES}"}`), true)
  }
]

/** The importer's common options: small --timeout and --retries, so that a request gives up within 4 s. */
const IMPORT_ARGS = ['--client-id', 'abc', '--client-secret', '123', '--timeout', '2', '--retries', '1']

export interface Judged {
  scenario: Scenario
  run: ChildRun
  checks: Array<[string, boolean, string]>
}

export interface RunLimits {
  killAfterMs: number
  killAboveKb: number
  /** Peak RSS the importer must stay under. */
  rssTargetKb: number
}

export const LIMITS: RunLimits = { killAfterMs: 30_000, killAboveKb: 1024 * 1024, rssTargetKb: 200 * 1024 }

/** Runs the importer against the scenario's upstream and checks how it ended. */
export async function runScenario (s: Scenario, limits: RunLimits = LIMITS): Promise<Judged> {
  s.prepare?.()
  const root = mkdtempSync(join(tmpdir(), 'hostile-upstream-'))
  const outDir = join(root, 'out')
  mkdirSync(outDir)
  const upstream = await FakeUpstream.start(s.answer)
  try {
    const out = join(outDir, 'imported.json')
    const run = await runChild(CLI, ['import', '--from', upstream.origin, ...IMPORT_ARGS, '--out', out, ...(s.args ?? [])], root, limits)
    const output = run.stdout + run.stderr
    const lines = run.stderr.split('\n').filter((l) => l !== '')
    const failures = lines.filter((l) => /^import: stopped: /.test(l))
    const left = readdirSync(outDir)
    const checks: Array<[string, boolean, string]> = [
      ['ends by itself within the time limit', run.killed !== 'time', `killed after ${(run.ms / 1000).toFixed(1)} s`],
      [`peak RSS under ${limits.rssTargetKb / 1024} MB`, run.killed !== 'memory' && run.peakKb < limits.rssTargetKb, `${(run.peakKb / 1024).toFixed(0)} MB${run.killed === 'memory' ? ' (killed)' : ''}`],
      ['no stack trace', !/^\s+at .+:\d+:\d+\)?$/m.test(output) && !/node:internal/.test(output), lines.slice(-3).join(' | ')],
      ['nothing from upstream reaches the terminal raw', !ACTS_ON_TERMINAL.test(output), JSON.stringify(output.match(new RegExp(`.{0,40}${ACTS_ON_TERMINAL.source}.{0,40}`))?.[0] ?? '')]
    ]
    if (s.outcome === 'written') {
      const validated = run.code === 0 ? await runChild(CLI, ['validate', out], root, limits) : undefined
      checks.push(
        ['exit 0', run.code === 0, `exit ${run.code}: ${lines.slice(-2).join(' | ')}`],
        ['the fixture written validates', validated?.code === 0, validated === undefined ? 'not written' : validated.stderr.slice(0, 300)],
        ['no file left but the fixture', left.length === 1 && left[0] === 'imported.json', left.join(', ')]
      )
    } else {
      checks.push(
        ['exit 1', run.code === 1, `exit ${run.code ?? run.signal}`],
        ['one line says why', failures.length === 1, `${failures.length} lines: ${lines.slice(-3).join(' | ')}`],
        ...(s.namesRequest === false
          ? []
          : [['the line names the request: method and URL', failures.every((l) => new RegExp(`(GET|POST) ${upstream.origin}/vendor/`).test(l)) && failures.length > 0, failures[0] ?? ''] as [string, boolean, string]]),
        s.outcome === 'resumable'
          ? ['the line says how to carry on (--resume, or again when nothing is written)', failures.some((l) => /--resume|run the same command again/.test(l)), failures[0] ?? '']
          : ['no file left (nothing to resume)', left.length === 0, left.join(', ')]
      )
    }
    checks.push(...(s.checks?.(run, out) ?? []))
    return { scenario: s, run, checks }
  } finally {
    await upstream.stop()
    rmSync(root, { recursive: true, force: true })
  }
}

export const hostileUpstream: PhaseSpec = {
  name: 'hostile-upstream',
  title: 'agency-sandbox import from a hostile upstream: gzip bombs, endless bodies, deep nesting, escape sequences, Retry-After: 300, answers of the wrong shape',
  ownServers: true,
  budgetMs: { short: 0, full: 120_000 },
  async run (run) {
    const p = run.phase
    for (const s of SCENARIOS) {
      if (p.expired) return
      const judged = await runScenario(s)
      p.figure(`${s.name}: importer peak RSS`, `${(judged.run.peakKb / 1024).toFixed(0)} MB${judged.run.killed === 'memory' ? ' (killed)' : ''}, exit ${judged.run.code ?? judged.run.signal}, ${(judged.run.ms / 1000).toFixed(1)} s`)
      for (const [name, ok, detail] of judged.checks) p.check(name, ok, `${s.name}: ${detail}`)
    }
  }
}
