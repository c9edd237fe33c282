/**
 * Starting an instance, hosted or not, against what it cannot use: PostgreSQL down (it tries
 * again with backoff, a line each time, and starts once PostgreSQL answers; past
 * SANDBOX_PG_START_WAIT_SECONDS it exits 1 with one line), and a schema newer than it knows (a
 * PostgreSQL database or a SQLite file migrated by a newer build: it exits 1 with one line naming
 * both versions). Never a stack trace.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { ROOT } from '../../src/config.js'
import { listMigrations } from '../../src/db/database.js'
import { startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { withoutPostgres } from '../helpers/hosted.js'
import { CLI, runCli, serveProcess } from '../helpers/process.js'

const STACK = /^\s+at .*:\d+:\d+\)?$/m

/** A port nothing listens on (taken, then freed). */
async function closedPort (): Promise<number> {
  return await new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

t.test('PostgreSQL down at start: tries again, then exits 1 with one line', { skip: withoutPostgres }, async (t) => {
  const port = await closedPort()
  const run = await runCli(['serve'], { PORT: '0', SANDBOX_DB: ':memory:', LOG_PRETTY: 'false', SANDBOX_DATABASE_URL: `postgres://sandbox:secret@127.0.0.1:${port}/postgres`, SANDBOX_PG_START_WAIT_SECONDS: '2' })
  t.equal(run.code, 1, 'exit 1')
  const attempts = run.stdout.split('\n').filter((line) => /does not answer/.test(line))
  t.ok(attempts.length >= 2, `a line per attempt (${attempts.length})`)
  t.match(attempts[0], /"level":40.*PostgreSQL at 127\.0\.0\.1:\d+\/postgres does not answer \(.*ECONNREFUSED.*\); attempt 1, trying again in 0\.5 s/)
  t.equal(run.stderr.trim().split('\n').length, 1, 'one line at the end')
  t.match(run.stderr, /^agency-sandbox: PostgreSQL at 127\.0\.0\.1:\d+\/postgres did not answer within 2 s \(.*\); start it, or check SANDBOX_DATABASE_URL/)
  t.notMatch(run.stdout + run.stderr, STACK, 'no stack trace')
  t.notMatch(run.stdout + run.stderr, /secret/, 'no password')
})

t.test('PostgreSQL started while an instance waits: the instance starts', { skip: withoutPostgres }, async (t) => {
  const postgres: ScratchPostgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  postgres.stop()
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, PORT: '0', LOG_PRETTY: 'false', SANDBOX_DB: ':memory:', SANDBOX_DATABASE_URL: postgres.url, SANDBOX_PG_START_WAIT_SECONDS: '60' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => child.kill('SIGKILL'))
  const lines: string[] = []
  const url = await new Promise<string>((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${lines.join('\n')}`)))
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line)
      // PostgreSQL is started once the instance said it waits for it
      if (/does not answer/.test(line) && lines.filter((l) => /does not answer/.test(l)).length === 1) postgres.start()
      const listening = /"url":"(http:[^"]+)".*listening/.exec(line)
      if (listening !== null) resolve(listening[1])
    })
  })
  t.equal((await fetch(`${url}/_sandbox/health`)).status, 200, 'it serves')
  t.ok(lines.some((line) => /PostgreSQL at .* answers \(attempt \d+\)/.test(line)), 'once it said that PostgreSQL answers')
})

t.test('a PostgreSQL schema newer than this build: exit 1, one line naming both versions', { skip: withoutPostgres }, async (t) => {
  const postgres: ScratchPostgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  const served = await serveProcess({ SANDBOX_DB: ':memory:', SANDBOX_DATABASE_URL: postgres.url })
  served.child.kill('SIGTERM')
  await served.exited
  const known = listMigrations(join(ROOT, 'migrations', 'postgres')).at(-1)!.version
  const client = new pg.Client({ connectionString: postgres.url })
  await client.connect()
  await client.query('INSERT INTO sandbox_schema (version) VALUES ($1)', [known + 1])
  await client.end()
  const run = await runCli(['serve'], { PORT: '0', SANDBOX_DB: ':memory:', LOG_PRETTY: 'false', SANDBOX_DATABASE_URL: postgres.url })
  t.equal(run.code, 1)
  t.equal(run.stderr.trim().split('\n').length, 1, 'one line')
  t.match(run.stderr, new RegExp(`the PostgreSQL database is at schema version ${known + 1}, newer than this build knows \\(${known}\\)`))
  t.notMatch(run.stdout + run.stderr, STACK, 'no stack trace')
})

t.test('a SQLite file of a schema newer than this build: exit 1, one line naming both versions', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-newer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'sandbox.db')
  const known = listMigrations(join(ROOT, 'migrations')).at(-1)!.version
  const db = new Database(file)
  db.pragma(`user_version = ${known + 1}`)
  db.close()
  const run = await runCli(['serve'], { PORT: '0', SANDBOX_DB: file, LOG_PRETTY: 'false' })
  t.equal(run.code, 1)
  t.equal(run.stderr.trim().split('\n').length, 1, 'one line')
  t.match(run.stderr, new RegExp(`the SQLite database ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is at schema version ${known + 1}, newer than this build knows \\(${known}\\)`))
  t.notMatch(run.stdout + run.stderr, STACK, 'no stack trace')
})
