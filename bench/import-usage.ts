import { writeFileSync } from 'node:fs'

/**
 * Preloaded (`node --import`) into the importer process of `bench/import.ts`: when the process
 * exits, its own CPU time and peak RSS (from getrusage, so nothing between two samples is
 * missed) go to the file named by IMPORT_USAGE_FILE. /proc cannot tell them once it is gone.
 */

const file = process.env.IMPORT_USAGE_FILE
if (file !== undefined && file !== '') {
  process.on('exit', () => {
    const u = process.resourceUsage()
    writeFileSync(file, JSON.stringify({ userSeconds: u.userCPUTime / 1e6, systemSeconds: u.systemCPUTime / 1e6, maxRssKb: u.maxRSS }))
  })
}
