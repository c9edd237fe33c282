import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'

/** Debian's junit5 package: the JUnit Platform console launcher with Jupiter, one jar. */
export const JUNIT_CONSOLE = '/usr/share/java/junit-platform-console-standalone.jar'

export const javaExample = (file: string) => join(ROOT, 'examples', 'java', 'src', 'test', 'java', 'example', file)

/** Why the Java examples cannot be compiled here, or false when javac and JUnit 5 are installed (.ci/run installs both). */
export function javaMissing (): string | false {
  if (spawnSync('javac', ['-version'], { encoding: 'utf8' }).status !== 0) return 'javac is not installed (apt-get install default-jdk; .ci/run does)'
  if (!existsSync(JUNIT_CONSOLE)) return `${JUNIT_CONSOLE} is missing (apt-get install junit5; .ci/run does)`
  return false
}

/** Compiles the given sources against JUnit 5 into `into`; throws with javac's output when it fails. */
export function compileJava (into: string, sources: string[]): void {
  const run = spawnSync('javac', ['-Xlint:all', '-Werror', '-d', into, '-cp', JUNIT_CONSOLE, ...sources], { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`javac failed:\n${run.stdout}${run.stderr}`)
}
