import { spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'

/** The Go kit: its own module, standard library only. */
export const GO_KIT = join(ROOT, 'examples', 'go')

/** Why Go code cannot be built here, or false when `go` is installed (Debian's golang-go; .ci/run installs it). */
export function goMissing (): string | false {
  return spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0 ? false : 'go is not installed (apt-get install golang-go; .ci/run does)'
}

/**
 * The environment `go` runs in: its build cache and module folder under `dir` (a fresh machine,
 * root or not), no network (no module proxy, no toolchain download), go.mod as it is.
 */
export function goEnv (dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GOCACHE: join(dir, 'go-cache'), GOPATH: join(dir, 'go-path'), GOFLAGS: '-mod=mod', GOPROXY: 'off', GOTOOLCHAIN: 'local', GO111MODULE: 'on' }
  mkdirSync(env.GOCACHE!, { recursive: true })
  delete env.AGENCY_SANDBOX_URL
  return env
}

/** `go test -c` of the package in `folder` into `output`; throws with go's output when it fails. */
export function buildGoTest (folder: string, output: string, env: NodeJS.ProcessEnv): void {
  const run = spawnSync('go', ['test', '-c', '-o', output, '.'], { cwd: folder, env, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`go test -c failed:\n${run.stdout}${run.stderr}`)
}
