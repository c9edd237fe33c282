import { keepAlive, text } from './http.js'
import { mb, median, scale, sleep, type PhaseSpec } from './context.js'
import { ABC, IDLE, JSON_TYPE } from './world.js'

/** The request journal: memory taken by bodies, and the CPU of path globs over it. */

/** About 64 KB of `[{},{},…]`: 21,800 objects for the parser, 2 bytes each on the wire. */
const EMPTY_OBJECTS = '[' + Array.from({ length: 21_800 }, () => '{}').join(',') + ']'

const journalAmplification: PhaseSpec = {
  name: 'journal-memory',
  title: 'Journal memory: 64 KB `[{},{},…]` bodies from an integration answered 403, then the journal cleared',
  budgetMs: { short: 4_000, full: 35_000 },
  async run (run) {
    const p = run.phase
    const agent = keepAlive(4)
    await run.request({ method: 'DELETE', path: '/_sandbox/requests' })
    await sleep(500)
    const before = run.target.rssKb() ?? 0
    const forbidden = scale(run, 100, 1000)
    const statuses = new Map<number, number>()
    await run.pool(forbidden, 4, async () => {
      // idle-vendor sees no agency: every request is a 403, after its body was read.
      const a = await run.request({ method: 'POST', path: '/vendor/agency/1001/clients?version=4.0', headers: { ...JSON_TYPE, authorization: IDLE }, body: EMPTY_OBJECTS, agent })
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
      p.check('403 for an integration without the agency', a.status === 403, `${a.status} ${text(a).slice(0, 80)}`)
    })
    // The same bodies from an integration that may see the agency: a 400 (not client numbers), journaled.
    const allowed = scale(run, 5, 250)
    await run.pool(allowed, 4, async () => {
      const a = await run.request({ method: 'POST', path: '/vendor/agency/1001/clients?version=4.0', headers: { ...JSON_TYPE, authorization: ABC }, body: EMPTY_OBJECTS, agent })
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
      p.check('400 for a batch read of objects', a.status === 400, `${a.status} ${text(a).slice(0, 80)}`)
    })
    const afterPosts = run.target.rssKb() ?? 0
    const info = await run.request({ path: '/_sandbox/info' })
    const journal = info.status === 200 ? (JSON.parse(text(info)) as { counts?: { journal?: number } }).counts?.journal : undefined
    const cleared = await run.request({ method: 'DELETE', path: '/_sandbox/requests' })
    p.check('DELETE /_sandbox/requests answers 2xx', cleared.status >= 200 && cleared.status < 300, `${cleared.status}`)
    await sleep(scale(run, 1500, 3000))
    const afterClear = run.target.rssKb() ?? 0
    agent.destroy()
    p.figure('Bodies sent (64 KB each): 403 / authenticated 400', `${forbidden} / ${allowed}`)
    p.figure('Answers', [...statuses].map(([s, n]) => `${n}×${s}`).join(', '))
    p.figure('Journal entries after the posts', journal ?? '?')
    p.figure('Server RSS before / after the posts / after clearing (MB)', `${mb(before).toFixed(0)} / ${mb(afterPosts).toFixed(0)} / ${mb(afterClear).toFixed(0)}`)
    p.check('RSS grew by less than 64 MB over the posts', afterPosts - before < 64 * 1024, `${mb(before).toFixed(0)} MB -> ${mb(afterPosts).toFixed(0)} MB`)
    // V8 gives freed pages back when it next collects, not at once: the bound after clearing is looser.
    p.check('RSS after clearing the journal is within 64 MB of before', afterClear - before < 64 * 1024, `${mb(before).toFixed(0)} MB -> ${mb(afterClear).toFixed(0)} MB after DELETE`)
  }
}

/** A path of about 15 KB: 300 segments of 50 characters under an agency. */
const LONG_PATH = '/vendor/agency/1001/client/' + Array.from({ length: 300 }, () => 'a'.repeat(49)).join('/')

/** A 511-character glob that never matches a long path: every token is tried against all of it. */
function longGlob (length: number): string {
  let g = '/vendor/**/'
  while (g.length + 2 <= length - 1) g += 'a*'
  return (g + 'z').slice(0, length)
}

const globCpu: PhaseSpec = {
  name: 'glob-cpu',
  title: 'Glob CPU: the journal full of 15 KB paths, 511-character journal queries and fault globs',
  budgetMs: { short: 2_500, full: 35_000 },
  async run (run) {
    const p = run.phase
    const agent = keepAlive(4)
    await run.request({ method: 'DELETE', path: '/_sandbox/requests' })
    const fill = scale(run, 150, 1000)
    await run.pool(fill, 4, async () => {
      const a = await run.request({ path: LONG_PATH, headers: { authorization: ABC }, agent })
      p.check('a 4xx for a 15 KB vendor path', a.status >= 400 && a.status < 500, `${a.status}`)
    })
    p.figure('Vendor requests with 15 KB paths', fill)
    const glob = longGlob(511)
    const queryMs: number[] = []
    const queries = scale(run, 3, 10)
    for (let i = 0; i < queries && !p.expired; i++) {
      const path = `/_sandbox/requests?path=${encodeURIComponent(i % 2 === 0 ? glob : glob.replaceAll('a*', '*a'))}&limit=5`
      const a = await run.request({ path, agent })
      queryMs.push(a.ms)
      // How long it takes is the server's business as long as others get their turn: the probe measures that.
      p.check('journal query with a 511-character glob: 200 or 400', a.status === 200 || a.status === 400, `${a.status} in ${a.ms.toFixed(0)} ms`)
    }
    p.figure('511-character glob queries: slowest answer (ms)', Math.max(0, ...queryMs))

    // The same long paths with and without a fault rule whose glob never matches them.
    const timed = async (n: number) => {
      const ms: number[] = []
      // median() of nothing is 0: the comparison below is then left out (the phase is cut short).
      for (let i = 0; i < n && !p.expired; i++) ms.push((await run.request({ path: LONG_PATH, headers: { authorization: ABC }, agent })).ms)
      return median(ms)
    }
    const n = scale(run, 15, 100)
    const without = await timed(n)
    const rule = await run.request({ method: 'POST', path: '/_sandbox/faults', headers: JSON_TYPE, body: JSON.stringify({ match: { path: glob }, effect: { status: 418 } }), agent })
    p.check('fault rule with a 511-character glob: stored (2xx) or refused (400)', (rule.status >= 200 && rule.status < 300) || rule.status === 400, `${rule.status} ${text(rule).slice(0, 100)}`)
    const withRule = await timed(n)
    await run.request({ method: 'DELETE', path: '/_sandbox/faults', agent })
    if (without > 0 && withRule > 0) {
      p.figure('15 KB vendor path, median ms without / with the fault glob', `${without.toFixed(2)} / ${withRule.toFixed(2)}`)
      p.check('a long fault glob slows long-path requests by less than 3× (or 2 ms)', withRule < 3 * without || withRule - without < 2, `${without.toFixed(2)} ms -> ${withRule.toFixed(2)} ms`)
    }
    await run.request({ method: 'DELETE', path: '/_sandbox/requests', agent })
    agent.destroy()
  }
}

export const JOURNAL_PHASES: PhaseSpec[] = [journalAmplification, globCpu]
