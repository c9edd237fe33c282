/**
 * Loaded into the sandbox process under attack with `node --import` (nothing in src/ changes):
 * measures the server's own event-loop delay (its main thread's) and appends, every 250 ms, a line
 * `<epoch ms> <longest delay in that interval, ms>` to the file named by ATTACK_LOOP_FILE. The
 * attack reads it per phase next to the health-probe latency, which also counts time spent
 * queued behind other requests.
 */
import { appendFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { isMainThread } from 'node:worker_threads'

const file = process.env.ATTACK_LOOP_FILE
// --import runs in the sandbox's worker threads too (reports, fixture bodies), whose loops are busy by
// design: only the main thread's, which answers requests, is measured
if (file !== undefined && file !== '' && isMainThread) {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  const timer = setInterval(() => {
    appendFileSync(file, `${Date.now()} ${(delay.max / 1e6).toFixed(1)}\n`)
    delay.reset()
  }, 250)
  timer.unref()
}
