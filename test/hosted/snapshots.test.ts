/**
 * Hosted mode: a world's owner appends a snapshot (the whole world) once the commits since the last
 * one hold half the world's bytes, not after a count of commits alone: a large world's writes do not
 * wait for a copy of it every few hundred commits, and a load replays at most half a world of them.
 */
import t from 'tap'
import pg from 'pg'
import { postgresBinaries, startScratchPostgres } from '../../scripts/scratch-postgres.js'
import { serveProcess } from '../helpers/process.js'
import { logNote } from '../helpers/writes.js'

const HEADERS = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64'), 'content-type': 'application/json' }
const NOTE_PATH = '/vendor/agency/1001/client/1001/log?version=4.0'

t.setTimeout(180_000)

const skip = postgresBinaries() === undefined ? 'PostgreSQL is not installed (.ci/run installs Debian\'s postgresql)' : false

t.test('a snapshot waits until the commits since the last one hold half the world', { skip }, async (t) => {
  const postgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  const served = await serveProcess({ SANDBOX_DATABASE_URL: postgres.url, SANDBOX_DB: ':memory:' })
  t.teardown(() => { served.child.kill('SIGKILL') })
  const db = new pg.Client({ connectionString: postgres.url })
  await db.connect()
  t.teardown(() => db.end())
  const log = async () => {
    const { rows } = await db.query<{ snapshots: string, commits: string, commitBytes: string, worldBytes: string }>(`
      SELECT count(*) FILTER (WHERE kind = 'snapshot') AS snapshots,
             count(*) FILTER (WHERE kind = 'commit') AS commits,
             coalesce(sum(coalesce(octet_length(body), 0) + coalesce(octet_length(records), 0) + coalesce(octet_length(state), 0)) FILTER (WHERE kind = 'commit'), 0) AS "commitBytes",
             max(octet_length(body)) FILTER (WHERE kind = 'snapshot') AS "worldBytes"
        FROM world_log WHERE world_id = 'default'`)
    return { snapshots: Number(rows[0].snapshots), commits: Number(rows[0].commits), commitBytes: Number(rows[0].commitBytes), worldBytes: Number(rows[0].worldBytes) }
  }
  const write = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const answer = await fetch(`${served.url}${NOTE_PATH}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(logNote()) })
      if (answer.status !== 200) t.fail(`a log note answered ${answer.status}: ${await answer.text()}`)
    }
  }

  await write(1)
  const start = await log()
  t.equal(start.snapshots, 1, 'the world starts from one snapshot')
  // more commits than the count alone asks for (500), fewer bytes than half the world
  await write(600)
  const after = await log()
  t.ok(after.commitBytes < after.worldBytes / 2, `600 notes hold less than half the world (${after.commitBytes} of ${after.worldBytes} bytes)`)
  t.equal(after.snapshots, 1, 'so no snapshot was taken yet')
  t.ok(after.commits >= 600, 'every commit is in the log since the snapshot')

  // once they hold half the world, the next append is a snapshot (and the commits before it go)
  let seen = after
  for (let round = 0; round < 40 && seen.snapshots === 1 && seen.commits > 0; round++) {
    await write(100)
    const now = await log()
    if (now.commits < seen.commits) {
      t.ok(seen.commitBytes + 100 * (seen.commitBytes / seen.commits) >= seen.worldBytes / 2, `a snapshot came once the commits held about half the world (${seen.commitBytes} bytes before the last 100 notes, of ${seen.worldBytes})`)
      seen = now
      break
    }
    seen = now
  }
  t.ok(seen.commits < after.commits, 'a snapshot was taken, and the commits before it were folded into it')
})
