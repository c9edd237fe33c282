/**
 * The event-loop probe, in a worker thread so the attack's own work cannot delay it: GET
 * /_sandbox/health on one keep-alive connection of its own, the next one ~50 ms after the last
 * answer. Each answer's latency is posted to the main thread; a health check the server takes
 * 300 ms to answer means its event loop was blocked for about that long.
 */
import { Agent, get } from 'node:http'
import { performance } from 'node:perf_hooks'
import { parentPort } from 'node:worker_threads'

export type ProbeCommand = { type: 'origin'; origin: string | null } | { type: 'stop' }
/** `ok` false: no answer (the server is down or restarting); `ms` is then how long the failure took. */
export type ProbeSample = { type: 'sample'; at: number; ms: number; ok: boolean }

const EVERY_MS = 50
const TIMEOUT_MS = 60_000

let origin: string | null = null
/** Cleared by the main thread's stop message. */
const state = { running: true }
let agent = new Agent({ keepAlive: true, maxSockets: 1 })

function probe (url: string): Promise<{ ok: boolean; ms: number }> {
  const started = performance.now()
  return new Promise((resolve) => {
    const req = get(url, { agent, timeout: TIMEOUT_MS }, (res) => {
      res.resume()
      res.on('end', () => resolve({ ok: res.statusCode === 200, ms: performance.now() - started }))
      res.on('error', () => resolve({ ok: false, ms: performance.now() - started }))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', () => resolve({ ok: false, ms: performance.now() - started }))
  })
}

parentPort!.on('message', (m: ProbeCommand) => {
  if (m.type === 'stop') state.running = false
  else {
    origin = m.origin
    agent.destroy()
    agent = new Agent({ keepAlive: true, maxSockets: 1 })
  }
})

async function loop (): Promise<void> {
  while (state.running) {
    const target = origin
    if (target !== null) {
      const at = Date.now()
      const { ok, ms } = await probe(target + '/_sandbox/health')
      // A sample taken against an origin since replaced (restart) says nothing about the new server.
      if (origin === target) parentPort!.postMessage({ type: 'sample', at, ms, ok } satisfies ProbeSample)
    }
    await new Promise((resolve) => setTimeout(resolve, EVERY_MS))
  }
  agent.destroy()
  parentPort!.close()
}

loop().catch((e: unknown) => {
  console.error('health probe stopped:', e)
})
