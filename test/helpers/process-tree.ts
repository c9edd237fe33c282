import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** State and parent of a process from /proc (Linux); undefined once it is gone. */
function statOf (pid: number): { state: string; ppid: number } | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return undefined
  }
  const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { state, ppid: Number(ppid) }
}

/** Whether the process runs: it exists and is not a zombie (an exited process nobody has reaped yet). */
export function runs (pid: number): boolean {
  const stat = statOf(pid)
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X'
}

/** The process and all its descendants, found by their parent ids. */
export function processTree (root: number): number[] {
  const parents = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const stat = statOf(Number(name))
    if (stat !== undefined) parents.set(Number(name), stat.ppid)
  }
  const tree = [root]
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parents) if (ppid === tree[i] && !tree.includes(pid)) tree.push(pid)
  }
  return tree
}

export function commandLine (pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return ''
  }
}

/** Waits until none of the processes runs, or `ms` have passed; the ones still running. */
export async function stillRunning (pids: number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms
  for (;;) {
    const alive = pids.filter(runs)
    if (alive.length === 0 || Date.now() > deadline) return alive
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * A command that starts the sandbox (the package's bundled bin) and notes the process id of each
 * sandbox it starts: a test gives it as AGENCY_SANDBOX_CMD to count the sandboxes a run started and
 * check that none of them still runs. The sandbox replaces the launcher (exec), keeping its id; the
 * test runner's hooks (NODE_OPTIONS) are left out, as a partner's machine has none.
 */
export function countingLauncher (folder: string, cli: string): { command: string, started: () => number[] } {
  const list = join(folder, 'started-sandboxes')
  const command = join(folder, 'launch-counted-sandbox')
  writeFileSync(command, `#!/bin/sh\nunset NODE_OPTIONS NODE_V8_COVERAGE\necho $$ >> '${list}'\nexec '${process.execPath}' '${cli}' "$@"\n`)
  chmodSync(command, 0o755)
  return {
    command,
    started: () => (existsSync(list) ? readFileSync(list, 'utf8').split('\n').filter(Boolean).map(Number) : [])
  }
}
