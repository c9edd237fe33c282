// Runs an integration inside an examiner session and prints the sandbox's verdict: what a
// partner's CI step does to learn whether its integration is ready for the live service.
//
//   1. POST /_sandbox/sessions {name, clientId}: record every request of that Client Id
//   2. run the integration against the sandbox (it knows nothing of the session)
//   3. POST /_sandbox/sessions/{id}/mirror: what the integration stored, per agency
//   4. POST /_sandbox/sessions/{id}/end, then GET /_sandbox/sessions/{id}/report
//
// Starts a sandbox process, or attaches to AGENCY_SANDBOX_URL (see sandbox-process.mjs).
// Prints a summary on stderr, the report as JSON on stdout with --json; exits 1 on a fail verdict.
import { SandboxProcess } from './sandbox-process.mjs'

/** Progress lines go to stderr, so stdout holds only the report. */
export const log = (line) => process.stderr.write(`${line}\n`)

/**
 * @param {string} name the session's name
 * @param {(target: { url: string, clientId: string, secret: string }) => Promise<{ agencyId: number, clients: { clientNumber: number, modified: string }[] }[]>} integrate
 *   runs the integration; answers the mirror it stored for each agency
 */
export async function examinedRun (name, integrate, { clientId = 'abc', secret = '123' } = {}) {
  const sandbox = await SandboxProcess.start()
  try {
    const session = await sandbox.control('POST', '/sessions', { name, clientId })
    log(`session ${session.id} "${session.name}" records ${clientId}`)
    const mirrors = await integrate({ url: sandbox.url, clientId, secret })
    for (const mirror of mirrors) await sandbox.control('POST', `/sessions/${session.id}/mirror`, mirror)
    const summary = await sandbox.control('POST', `/sessions/${session.id}/end`)
    log(`session ${session.id} ended: ${summary.session.recorded} requests recorded, verdict ${summary.verdict}`)
    for (const f of summary.findings) log(`  ${f.severity.padEnd(7)} ${f.rule} ×${f.count}: ${f.message}`)
    if (process.argv.includes('--json')) {
      const report = await sandbox.control('GET', `/sessions/${session.id}/report`)
      process.stdout.write(JSON.stringify(report, null, 2) + '\n')
    }
    return summary.verdict === 'fail' ? 1 : 0
  } finally {
    await sandbox.stop()
  }
}
