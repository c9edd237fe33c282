/**
 * A start refused for a reason the operator can act on (a schema newer than this build, a
 * database that cannot be reached): the CLI prints its message as one line and exits 1, with no
 * stack trace.
 */
export class StartupError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'StartupError'
  }
}
