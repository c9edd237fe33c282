// @ts-check
// Polls the request journal for entries after the last one seen, and hands new ones on.
import { api, tokenAsked } from './api.js'
import { $ } from './dom.js'

const JOURNAL_POLL_MS = 1000

/** @typedef {import('./types.js').JournalEntry} JournalEntry */

/**
 * Starts polling (once a second while the page is visible and no token is being asked for).
 * @param {(entries: JournalEntry[]) => void} onEntries called with new entries, oldest first
 */
export function startJournalPoller (onEntries) {
  /** @type {number | undefined} */
  let lastId

  async function tick () {
    const dot = $('live-status')
    try {
      if (lastId === undefined) {
        /** @type {JournalEntry[]} */
        const latest = await api('GET', '/requests?limit=1')
        lastId = latest.length === 0 ? 0 : latest[latest.length - 1].id
      } else {
        /** @type {JournalEntry[]} */
        const entries = await api('GET', `/requests?since=${lastId}`)
        if (entries.length > 0) {
          lastId = entries[entries.length - 1].id
          onEntries(entries)
        }
      }
      dot.classList.add('on')
      dot.classList.remove('off')
      dot.title = 'Request journal: live'
    } catch (e) {
      dot.classList.remove('on')
      dot.classList.add('off')
      dot.title = `Request journal: ${e instanceof Error ? e.message : String(e)}`
    }
  }

  const loop = async () => {
    if (document.visibilityState !== 'hidden' && !tokenAsked()) await tick()
    setTimeout(loop, JOURNAL_POLL_MS)
  }
  loop()
}
