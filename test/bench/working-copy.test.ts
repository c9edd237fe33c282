import t from 'tap'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { workingCopy, type BenchData } from '../../bench/data.js'

// The side-by-side comparison (bench/versus.ts) serves two copies at once, one per server: were
// they one file, two processes would write to one database and its write figures would measure
// their waiting on each other's lock.
t.test('each working copy of the benchmark database is a file of its own, removed on its own', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-copy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dbFile = join(dir, 'bench-1k.db')
  writeFileSync(dbFile, 'seeded')
  const data = { dbFile } as BenchData

  const first = workingCopy(data)
  const second = workingCopy(data)
  t.not(first.file, second.file, 'two copies, two files')
  t.equal(readFileSync(first.file, 'utf8'), 'seeded', 'the first holds the seeded database')
  t.equal(readFileSync(second.file, 'utf8'), 'seeded', 'so does the second')

  first.remove()
  t.notOk(existsSync(first.file), 'the first copy is gone')
  t.ok(existsSync(second.file), 'the second is still served')
  second.remove()
})

t.test('a copy left by a process that no longer runs is removed by the next', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-copy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dbFile = join(dir, 'bench-1k.db')
  writeFileSync(dbFile, 'seeded')
  // no process has this id (above Linux's pid_max)
  const left = join(dir, 'work-99999999-1.db')
  writeFileSync(left, 'left')
  writeFileSync(left + '-wal', 'left')
  const copy = workingCopy({ dbFile } as BenchData)
  t.notOk(existsSync(left), 'the copy of a killed run is removed')
  t.notOk(existsSync(left + '-wal'), 'and its log')
  copy.remove()
})
