import { spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { ROOT } from '../../src/config.js'

/**
 * Building and running the typed-client decoders: Go (Debian's golang-go, standard library only)
 * and Java 17 (default-jdk) with Jackson (libjackson2-databind-java, in /usr/share/java).
 * `.ci/run` installs the three packages when they are missing.
 */

export const GO_SOURCES = join(ROOT, 'test', 'typed-clients', 'go')
export const JAVA_SOURCES = join(ROOT, 'test', 'typed-clients', 'java')
const JARS_DIR = '/usr/share/java'
const JACKSON_JARS = ['jackson-databind.jar', 'jackson-core.jar', 'jackson-annotations.jar']

/** An executable on the PATH, or undefined. */
export function tool (name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name)
    if (dir !== '' && existsSync(candidate)) return candidate
  }
  return undefined
}

/** Jackson's class path, or undefined when a jar is missing. */
export function jacksonClassPath (): string | undefined {
  const jars = JACKSON_JARS.map((jar) => join(JARS_DIR, jar))
  return jars.every((jar) => existsSync(jar)) ? jars.join(':') : undefined
}

/** What is missing to build both decoders, with the Debian package that brings it. */
export function missingToolchain (): string[] {
  const missing: string[] = []
  if (tool('go') === undefined) missing.push('go (apt-get install golang-go)')
  if (tool('javac') === undefined || tool('java') === undefined) missing.push('javac and java (apt-get install default-jdk)')
  if (jacksonClassPath() === undefined) missing.push(`${JACKSON_JARS.join(', ')} in ${JARS_DIR} (apt-get install libjackson2-databind-java)`)
  return missing
}

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

export function run (command: string, args: string[], options: { cwd?: string, env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

function check (what: string, result: Run): void {
  if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}):\n${result.stdout}${result.stderr}`)
}

/** `go build` into `dir`, with its cache and module path there too; answers the binary's path. */
export async function buildGo (dir: string): Promise<string> {
  const binary = join(dir, 'go-decoder')
  const env = { GOCACHE: join(dir, 'go-cache'), GOPATH: join(dir, 'go-path'), GOFLAGS: '', GO111MODULE: 'on', GOTOOLCHAIN: 'local', GOPROXY: 'off' }
  check('go build', await run('go', ['build', '-o', binary, '.'], { cwd: GO_SOURCES, env }))
  return binary
}

/** `javac` into `dir`/classes; answers the class path to run Decoder with. */
export async function buildJava (dir: string): Promise<string> {
  const classes = join(dir, 'classes')
  const jackson = jacksonClassPath()!
  const sources = readdirSync(JAVA_SOURCES).filter((f) => f.endsWith('.java')).map((f) => join(JAVA_SOURCES, f))
  check('javac', await run('javac', ['-Xlint:all', '-Werror', '-d', classes, '-cp', jackson, ...sources]))
  return `${classes}:${jackson}`
}

/** The decoders' own tally: `operation version` → [decoded, failed]. */
export function tallyOf (stdout: string): Map<string, [number, number]> {
  const tally = new Map<string, [number, number]>()
  for (const m of stdout.matchAll(/^ {2}(\w+ [\d.]+) +(\d+) decoded +(\d+) failed$/gm)) tally.set(m[1], [Number(m[2]), Number(m[3])])
  return tally
}
