// @ts-check
// Clock & sandbox: set, freeze and advance the sandbox clock; the sandbox's facts; reset.
import { api } from './api.js'
import { $, fmtTime, h, replace, toast } from './dom.js'
import { clientsPanel } from './panel-clients.js'
import { loadClock, loadWorld, renderClockText, world } from './state.js'

const RESET_LABEL = 'Reset to the start-up fixture'

export const clockPanel = {
  /** Reset asks for a second click within 4 seconds. */
  resetArmed: false,

  init () {
    const error = $('clock-error')
    /** @param {() => Promise<void>} fn */
    const run = async (fn) => {
      error.hidden = true
      try {
        await fn()
      } catch (e) {
        error.hidden = false
        error.textContent = e instanceof Error ? e.message : String(e)
      }
    }
    /** @returns {import('./types.js').Clock} */
    const clock = () => {
      if (world.clock === undefined) throw new Error('The clock is not loaded yet')
      return world.clock
    }
    $('clock-set-form').addEventListener('submit', (e) => {
      e.preventDefault()
      run(async () => {
        const now = $('clock-set-input', HTMLInputElement).value.trim()
        if (now === '') throw new Error('Enter a date-time such as 2026-11-22T09:00:00Z')
        this.applyClock(await api('PUT', '/clock', { now }))
        toast(`Clock set to ${clock().now}`, 'ok')
      })
    })
    $('clock-freeze').addEventListener('click', () => run(async () => {
      this.applyClock(await api('PUT', '/clock', { frozen: !world.clock?.frozen }))
      toast(clock().frozen ? 'Clock frozen' : 'Clock running', 'ok')
    }))
    /** @param {number} seconds */
    const advance = (seconds) => run(async () => {
      if (!(seconds > 0)) throw new Error('Advance by a positive number of seconds')
      this.applyClock(await api('POST', '/clock/advance', { seconds }))
      toast(`Clock advanced by ${seconds} s to ${clock().now}`, 'ok')
    })
    $('clock-advance-form').addEventListener('submit', (e) => {
      e.preventDefault()
      advance(Number($('clock-advance-seconds', HTMLInputElement).value))
    })
    for (const b of document.querySelectorAll('[data-advance]')) {
      if (b instanceof HTMLElement) b.addEventListener('click', () => advance(Number(b.dataset.advance)))
    }
    const reset = $('sandbox-reset')
    const disarm = () => {
      this.resetArmed = false
      reset.textContent = RESET_LABEL
      reset.classList.remove('armed')
    }
    reset.addEventListener('click', () => {
      if (!this.resetArmed) {
        this.resetArmed = true
        reset.textContent = 'Click again to reset everything'
        reset.classList.add('armed')
        setTimeout(disarm, 4000)
        return
      }
      disarm()
      run(async () => {
        await api('POST', '/reset')
        world.secrets = undefined
        clientsPanel.selected = undefined
        toast('Sandbox reset to its start-up fixture', 'ok')
        await loadWorld()
        await this.show()
      })
    })
  },

  /** @param {import('./types.js').Clock} clock */
  applyClock (clock) {
    world.clock = clock
    world.clockFetchedAt = Date.now()
    this.renderState()
    renderClockText()
  },

  renderState () {
    const c = world.clock
    if (!c) return
    const state = $('clock-state')
    state.textContent = c.frozen ? 'frozen' : 'running'
    state.className = `badge ${c.frozen ? 'warn' : 'good'}`
    $('clock-freeze').textContent = c.frozen ? 'Unfreeze (let time run)' : 'Freeze (time stands still)'
    const input = $('clock-set-input', HTMLInputElement)
    if (document.activeElement !== input) input.value = c.now
  },

  /** @returns {Promise<void>} */
  async show () {
    /** @type {[import('./types.js').Info, void]} */
    const [info] = await Promise.all([api('GET', '/info'), loadClock()])
    world.info = info
    this.renderState()
    const counts = info.counts
    const rows = [
      ['Version', info.version],
      ['World', info.world.id === info.world.name ? info.world.id : `${info.world.name} (${info.world.id})`],
      ['Started', fmtTime(info.startedAt)],
      ['Fixture', info.fixture],
      ['Database', info.settings.db],
      ['Integrations', counts.integrations],
      ['Agencies', counts.agencies],
      ['Clients', counts.clients],
      ['Writes', `${counts.writes.pending} pending · ${counts.writes.applied} applied`],
      ['Journal', `${counts.journal} of ${info.settings.journalSize} entries`],
      ['Fault rules', counts.faults],
      ['Simulator', info.simulator.running ? `running (${info.simulator.changes} changes)` : 'stopped'],
      ['Control token', info.settings.controlToken ? 'required' : 'not set']
    ]
    replace($('sandbox-info'), rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]))
  }
}
