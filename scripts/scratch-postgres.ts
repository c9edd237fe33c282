import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.js'

/**
 * A throw-away PostgreSQL cluster for tests and benchmarks: Debian's server binaries, a cluster in
 * a temporary folder, listening on 127.0.0.1 on a free port, without durability settings that
 * cost time (fsync off: the cluster is deleted after the run). As root (CI), the server runs as
 * the `postgres` user the package creates, since PostgreSQL refuses to run as root.
 */

export interface ScratchPostgres {
  url: string
  port: number
  /** Stops the server (fast shutdown), keeping the cluster: `start` resumes it. */
  stop(): void
  start(): void
  /**
   * Freezes every process of the server (SIGSTOP): connections stay open and nothing answers, as
   * when a server stalls; `thaw` (SIGCONT) resumes them. `destroy` thaws first.
   */
  freeze(): void
  thaw(): void
  /** Runs one of the server's tools (pg_dump, pg_restore, createdb...) against the cluster; answers its standard output. */
  tool(name: string, args: string[]): string
  /** Stops the server at once and deletes the cluster. */
  destroy(): void
}

/** Debian's PostgreSQL server binaries (the newest installed), or undefined when none is. */
export function postgresBinaries (): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))
  const found = versions.map((v) => join(root, v, 'bin')).find((bin) => existsSync(join(bin, 'initdb')))
  return found
}

/** The cluster's postmaster (its postmaster.pid file) and every process it started (by their parent in /proc). */
function serverProcesses (data: string): number[] {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  const children = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      // the parent is the 4th field, after the command in parentheses (which may hold spaces)
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster ? [Number(name)] : []
    } catch {
      return []
    }
  })
  return [postmaster, ...children]
}

export async function startScratchPostgres (): Promise<ScratchPostgres> {
  const bin = postgresBinaries()
  if (bin === undefined) throw new Error('PostgreSQL is not installed (apt-get install postgresql)')
  const root = process.getuid?.() === 0
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-pg-'))
  const data = join(dir, 'data')
  const owner = root ? Number(execFileSync('id', ['-u', 'postgres']).toString()) : undefined
  if (owner !== undefined) {
    chownSync(dir, owner, owner)
    chmodSync(dir, 0o700)
  }
  const run = (tool: string, args: string[]) => {
    const command = root ? 'runuser' : join(bin, tool)
    const argv = root ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args
    const result = spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 })
    if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr || result.stdout || result.error?.message}`)
  }
  run('initdb', ['-D', data, '-U', 'sandbox', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start'])
  start()
  let frozen: number[] = []
  const thaw = () => {
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT')
      } catch {
        // gone meanwhile
      }
    }
    frozen = []
  }
  return {
    url: `postgres://sandbox@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    freeze () {
      frozen = serverProcesses(data)
      for (const pid of frozen) process.kill(pid, 'SIGSTOP')
    },
    thaw,
    tool (name, args) {
      const command = root ? 'runuser' : join(bin, name)
      const argv = root ? ['-u', 'postgres', '--', join(bin, name), ...args] : args
      const result = spawnSync(command, argv, { encoding: 'buffer', timeout: 120_000, cwd: dir, maxBuffer: 1024 * 1024 * 1024 })
      if (result.status !== 0) throw new Error(`${name} failed: ${result.stderr.toString() || result.error?.message}`)
      return result.stdout.toString('utf8')
    },
    destroy () {
      thaw()
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
