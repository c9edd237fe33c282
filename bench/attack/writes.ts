import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { ROOT } from '../../src/config.js'
import { keepAlive, text } from './http.js'
import { scale, sleep, type PhaseSpec, type Run } from './context.js'
import { ABC, attachmentHeaders, JSON_TYPE, liveClients, logNote, receipt } from './world.js'

/** Writes under pressure: the same RefId at once, resets during traffic, SIGKILL while writing. */

interface WriteView {
  refId: string
  kind: string
  status: string
}

/** Writes of one kind stored for a client, by lower-cased RefId. */
async function storedRefIds (run: Run, agencyId: number, kind: string, clientNumber: number): Promise<Map<string, number> | undefined> {
  const a = await run.request({ path: `/_sandbox/agencies/${agencyId}/writes?kind=${kind}&clientNumber=${clientNumber}` })
  if (a.status !== 200) return undefined
  const counts = new Map<string, number>()
  for (const w of JSON.parse(text(a)) as WriteView[]) counts.set(w.refId.toLowerCase(), (counts.get(w.refId.toLowerCase()) ?? 0) + 1)
  return counts
}

const sameRefId: PhaseSpec = {
  name: 'same-refid',
  title: 'Concurrent identical writes with one RefId: log notes, attachments, receipts, a disconnected agency',
  budgetMs: { short: 1_500, full: 10_000 },
  async run (run) {
    const p = run.phase
    const agent = keepAlive(20)
    const rounds = scale(run, 2, 12)
    const parallel = scale(run, 10, 20)
    const targets = [
      { agencyId: 1001, client: liveClients(1001)[10].clientNumber, acked: 200 },
      { agencyId: 1004, client: liveClients(1004)[1].clientNumber, acked: 202 }
    ]
    let created = 0
    for (let r = 0; r < rounds && !p.expired; r++) {
      for (const kind of ['log', 'attachment', 'receipt'] as const) {
        const t = targets[r % targets.length]
        const refId = run.rng.uuid()
        const base = `/vendor/agency/${t.agencyId}/client/${t.client}`
        const content = gzipSync(Buffer.from(`%PDF-1.4 same refId ${refId}`))
        const send = () => kind === 'log'
          ? run.request({ method: 'POST', path: `${base}/log?version=4.0`, headers: { ...JSON_TYPE, authorization: ABC }, body: JSON.stringify(logNote(refId, `same ${refId}`)), agent })
          : kind === 'receipt'
            ? run.request({ method: 'POST', path: `${base}/receipts?version=4.0`, headers: { ...JSON_TYPE, authorization: ABC }, body: JSON.stringify([receipt(refId)]), agent })
            : run.request({ method: 'POST', path: `${base}/attachment?version=4.0`, headers: attachmentHeaders(ABC, refId), body: content, agent })
        const answers = await Promise.all(Array.from({ length: parallel }, send))
        const acked = answers.filter((a) => a.status === t.acked).length
        p.check('every identical repeat answers as the first did', acked === parallel, `${kind} to ${t.agencyId}: ${answers.map((a) => a.status).join(' ')}`)
        const stored = (await storedRefIds(run, t.agencyId, kind, t.client))?.get(refId) ?? 0
        if (acked > 0 && stored === 0) p.lost(`${kind} ${refId} to ${t.agencyId} acknowledged ${acked} times, not stored`)
        p.check('exactly one write stored per RefId', stored === 1, `${kind} ${refId} to ${t.agencyId}: stored ${stored} times`)
        created += stored
      }
    }
    agent.destroy()
    p.figure('Rounds × kinds × identical requests at once', `${rounds} × 3 × ${parallel}`)
    p.figure('Writes stored', created)
  }
}

const resetsDuringTraffic: PhaseSpec = {
  name: 'resets-under-traffic',
  title: 'POST /_sandbox/reset while partners read and write',
  budgetMs: { short: 2_500, full: 20_000 },
  async run (run) {
    const p = run.phase
    const agent = keepAlive(6)
    const clients = liveClients(1001).slice(0, 40).map((c) => c.clientNumber)
    const traffic = { stop: false }
    const statuses = new Map<string, number>()
    const tally = (what: string, status: number) => statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1)
    const reader = async () => {
      while (!traffic.stop && !p.expired) {
        const roll = run.rng.int(0, 3)
        const c = run.rng.pick(clients)
        const a = roll === 0
          ? await run.request({ path: `/vendor/agency/1001/client/${c}?version=4.0&include=Details,People,Policies`, headers: { authorization: ABC }, agent })
          : roll === 1
            ? await run.request({ method: 'POST', path: '/vendor/agency/1001/clients?version=4.0', headers: { ...JSON_TYPE, authorization: ABC }, body: JSON.stringify({ clientNumbers: clients.slice(0, 20) }), agent })
            : roll === 2
              ? await run.request({ path: '/vendor/agency/1001/clients?version=4.0', headers: { authorization: ABC }, agent })
              : await run.request({ path: '/vendor/agencies?version=4.0', headers: { authorization: ABC }, agent })
        tally('read', a.status)
        p.check('reads answer 200 across resets', a.status === 200, `${a.status} ${a.error ?? text(a).slice(0, 80)}`)
      }
    }
    const writer = async () => {
      while (!traffic.stop && !p.expired) {
        const a = await run.request({ method: 'POST', path: `/vendor/agency/1001/client/${run.rng.pick(clients)}/log?version=4.0`, headers: { ...JSON_TYPE, authorization: ABC }, body: JSON.stringify(logNote(run.rng.uuid())), agent })
        tally('write', a.status)
        p.check('writes answer 200 across resets', a.status === 200, `${a.status} ${a.error ?? text(a).slice(0, 80)}`)
      }
    }
    const loops = [reader(), reader(), reader(), reader(), writer()]
    const resets = scale(run, 3, 25)
    for (let i = 0; i < resets && !p.expired; i++) {
      await sleep(run.rng.int(100, 400))
      const a = await run.request({ method: 'POST', path: '/_sandbox/reset', timeoutMs: 20_000 })
      tally('reset', a.status)
      p.check('every reset answers 200', a.status === 200, `${a.status} ${text(a).slice(0, 80)}`)
    }
    traffic.stop = true
    await Promise.all(loops)
    agent.destroy()
    p.figure('Answers', [...statuses].map(([k, n]) => `${k}: ${n}`).join(', '))
  }
}

const CRASH_SCRIPT = join(ROOT, 'dist', 'bench', 'crash.js')

const sigkillDuringWrites: PhaseSpec = {
  name: 'sigkill-writes',
  // Left out of the short run: npm test runs bench/crash.js itself (test/reliability/crash.test.ts, 3 rounds).
  title: 'SIGKILL during writes (bench/crash.ts, its own server processes): every acknowledged write is there after the restart',
  budgetMs: { short: 0, full: 70_000 },
  ownServers: true,
  async run (run) {
    const p = run.phase
    const rounds = scale(run, 1, 10)
    // Kills after 1-2.5 s: the first writes of a fresh process wait for its validators to compile.
    const args = [CRASH_SCRIPT, '--rounds', String(rounds), '--seed', String(run.options.seed), '--kill-min-ms', '1000', '--kill-max-ms', '2500', '--no-report']
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      const timer = setTimeout(() => child.kill('SIGKILL'), Math.max(1000, p.timeLeft()))
      child.on('exit', (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
    })
    const m = /crash-safety: (\d+) rounds, (\d+) acknowledged writes checked, (\d+) lost, (\d+) duplicated/.exec(result.stdout)
    const sent = /(\d+) writes sent, (\d+) acknowledged/.exec(result.stdout)
    if (sent !== null) p.tried += Number(sent[1])
    p.check('bench/crash.js ran to its summary and exited 0', result.code === 0 && m !== null, `exit ${result.code}: ${(result.stderr || result.stdout).trim().split('\n').slice(-3).join(' | ').slice(0, 300)}`)
    if (m === null) {
      p.status = 'cut short'
      return
    }
    const lost = Number(m[3])
    p.lostWrites += lost
    if (lost > 0) p.incident(`${lost} acknowledged writes lost after SIGKILL (bench/crash.js --seed ${run.options.seed})`)
    p.check('no acknowledged write duplicated', Number(m[4]) === 0, `${m[4]} duplicated`)
    p.figure('SIGKILLs (rounds)', Number(m[1]))
    p.figure('Writes sent / acknowledged', sent === null ? '?' : `${sent[1]} / ${sent[2]}`)
    p.figure('Acknowledged writes checked after the restarts', Number(m[2]))
    p.figure('Lost / duplicated', `${lost} / ${m[4]}`)
  }
}

export const WRITE_PHASES: PhaseSpec[] = [sameRefId, resetsDuringTraffic, sigkillDuringWrites]
