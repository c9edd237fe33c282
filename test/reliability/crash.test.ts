/**
 * Crash safety, short form: bench/crash.ts (built by pretest) runs 3 rounds of writes of every kind,
 * SIGKILL at a random moment, restart on the same file, and checks that every acknowledged write is
 * there exactly once and nothing is half-written. The long form is `npm run crash-test` (50 rounds).
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'

const SCRIPT = join(ROOT, 'dist', 'bench', 'crash.js')

t.test('crash safety: 3 rounds of SIGKILL while writing lose and duplicate nothing', { timeout: 110_000 }, async (t) => {
  t.ok(existsSync(SCRIPT), `${SCRIPT} is built (npm test builds first)`)
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [SCRIPT, '--rounds', '3', '--seed', '7', '--no-report'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('exit', (exitCode) => resolve({ code: exitCode, stdout, stderr }))
  })
  t.comment(stdout.trim())
  t.equal(code, 0, `exit 0${stderr === '' ? '' : `; stderr:\n${stderr.slice(-2000)}`}`)
  const m = /crash-safety: (\d+) rounds, (\d+) acknowledged writes checked, (\d+) lost, (\d+) duplicated/.exec(stdout)
  t.ok(m, 'prints the summary line')
  if (m !== null) {
    t.equal(Number(m[1]), 3, '3 rounds')
    t.ok(Number(m[2]) > 0, `${m[2]} acknowledged writes were checked`)
    t.equal(Number(m[3]), 0, 'none lost')
    t.equal(Number(m[4]), 0, 'none duplicated')
  }
})
