import t from 'tap'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { CLI } from '../helpers/process.js'

/** The examples start the sandbox the way a partner's suite would; here the built CLI stands in for `npx agency-sandbox`. */
const env = { ...process.env, AGENCY_SANDBOX_CMD: `${process.execPath} ${CLI}`, AGENCY_SANDBOX_URL: '' }

t.test('the Node example suite passes against a real sandbox process', async (t) => {
  const run = spawnSync(process.execPath, ['--test', join(ROOT, 'examples', 'node', 'partner-sync.test.mjs')], { env, encoding: 'utf8', timeout: 90_000 })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /# pass 4/, 'four example tests ran')
  t.match(run.stdout, /# fail 0/)
})

const python = spawnSync('python3', ['--version'], { encoding: 'utf8' })

t.test('the Python example suite passes with the standard library alone', { skip: python.status === 0 ? false : 'python3 is not installed' }, async (t) => {
  const run = spawnSync('python3', ['run_without_pytest.py'], { cwd: join(ROOT, 'examples', 'python'), env, encoding: 'utf8', timeout: 90_000 })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /5 of 5 example tests passed/)
})

const pytest = spawnSync('python3', ['-m', 'pytest', '--version'], { encoding: 'utf8' })

t.test('and with pytest, through conftest.py, where pytest is installed', { skip: pytest.status === 0 ? false : 'pytest is not installed' }, async (t) => {
  const run = spawnSync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: join(ROOT, 'examples', 'python'), env, encoding: 'utf8', timeout: 120_000 })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /5 passed/)
})
