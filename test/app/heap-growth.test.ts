import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { ConfigError, loadConfig, ROOT } from '../../src/config.js'
import { DEFAULT_HEAP_GROWTH_PERCENT } from '../../src/heap-growth.js'
import { serveProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/temp-dir.js'

const run = promisify(execFile)
const HEAP_GROWTH = pathToFileURL(join(ROOT, 'dist', 'src', 'heap-growth.js')).href

t.test('SANDBOX_HEAP_GROWTH_PERCENT: 30 by default, a whole number from 0 to 300', async (t) => {
  t.equal(DEFAULT_HEAP_GROWTH_PERCENT, 30)
  t.equal(loadConfig({}).heapGrowthPercent, 30)
  t.equal(loadConfig({ SANDBOX_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent, 0)
  t.equal(loadConfig({ SANDBOX_HEAP_GROWTH_PERCENT: '300' }).heapGrowthPercent, 300)
  for (const bad of ['301', '-1', '1.5', 'lots', '']) {
    t.throws(() => loadConfig({ SANDBOX_HEAP_GROWTH_PERCENT: bad }), new ConfigError(`SANDBOX_HEAP_GROWTH_PERCENT=${bad} is not a whole number from 0 to 300`), `refuses '${bad}'`)
  }
})

/**
 * A process that keeps about 40 MB alive while it makes objects that live long enough to reach
 * the old generation and then die: the largest old generation it saw, in MiB.
 */
async function oldGenerationPeak (percent: number): Promise<number> {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8'
    import { limitHeapGrowth } from ${JSON.stringify(HEAP_GROWTH)}
    limitHeapGrowth(${percent})
    const kept = Array.from({ length: 200000 }, (_, i) => ({ i, s: 'kept' + i }))
    const recent = new Array(64)
    let peak = 0
    for (let round = 0; round < 1500; round++) {
      recent[round % recent.length] = Array.from({ length: 10000 }, (_, j) => ({ round, j, s: 'recent' + j }))
      if (round % 50 === 0) peak = Math.max(peak, getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size)
    }
    console.log(JSON.stringify({ peak: peak / 1048576, kept: kept.length }))`
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 })
  return (JSON.parse(stdout) as { peak: number }).peak
}

t.test('limitHeapGrowth keeps the old generation near its live size (V8 alone lets it grow far past)', { timeout: 120_000 }, async (t) => {
  const own = await oldGenerationPeak(0)
  const limited = await oldGenerationPeak(30)
  t.comment(`old generation peak: ${own.toFixed(0)} MiB with V8's own growth, ${limited.toFixed(0)} MiB at 30%`)
  // Measured: 280-315 MiB against 108-113 MiB.
  t.ok(limited < own * 0.6, `limited ${limited.toFixed(0)} MiB is well under V8's own ${own.toFixed(0)} MiB`)
})

t.test('serve sets the memory settings of its own process: heap growth (0 leaves V8 alone) and expose-gc for body buffers', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, 'sandbox-heap-growth-')
  // Reports every V8 flag the process sets, whichever module sets it.
  const spy = join(dir, 'flag-spy.mjs')
  writeFileSync(spy, `
    import { createRequire, syncBuiltinESMExports } from 'node:module'
    const v8 = createRequire(import.meta.url)('node:v8')
    const set = v8.setFlagsFromString
    v8.setFlagsFromString = (flags) => { process.stderr.write('v8 flags: ' + flags + '\\n'); set(flags) }
    syncBuiltinESMExports()
  `)
  const flagsOf = async (env: Record<string, string>) => {
    const served = await serveProcess({ SANDBOX_DB: ':memory:', NODE_OPTIONS: `--import ${pathToFileURL(spy).href}`, ...env })
    served.child.kill('SIGTERM')
    await served.exited
    return served.lines.filter((line) => line.startsWith('v8 flags: '))
  }
  const heapGrowth = (flags: string[]) => flags.filter((line) => line.startsWith('v8 flags: --heap-growing'))
  const byDefault = await flagsOf({})
  t.same(heapGrowth(byDefault), ['v8 flags: --heap-growing-percent=30'], 'the default')
  t.ok(byDefault.includes('v8 flags: --expose-gc'), 'body buffers are collected (src/http/body-buffers.ts)')
  t.same(heapGrowth(await flagsOf({ SANDBOX_HEAP_GROWTH_PERCENT: '50' })), ['v8 flags: --heap-growing-percent=50'], 'a setting')
  t.same(heapGrowth(await flagsOf({ SANDBOX_HEAP_GROWTH_PERCENT: '0' })), [], '0: not set')
})
