import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'

/** Debian's chromium (or CHROMIUM_PATH); undefined when there is none. */
export function chromiumPath (): string | undefined {
  for (const candidate of [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (candidate !== undefined && candidate !== '' && existsSync(candidate)) return candidate
  }
  return undefined
}

export const NO_BROWSER = 'no Chromium at /usr/bin/chromium: install Debian\'s chromium package (apt-get install -y chromium) or set CHROMIUM_PATH to run the browser tests'

/**
 * Headless Chromium with a fresh profile. The flags keep it off the network: this machine
 * refuses its background connections.
 */
export async function launchBrowser (executablePath: string, teardown: (fn: () => unknown) => void, extraArgs: string[] = []): Promise<BrowserContext> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'sandbox-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', ...extraArgs],
    timeout: 30_000
  })
  teardown(async () => {
    await context.close()
    rmSync(userDataDir, { recursive: true, force: true })
  })
  return context
}
