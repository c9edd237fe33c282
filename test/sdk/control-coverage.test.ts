import t from 'tap'
import { controlClient } from '../../src/sdk.js'
import { build } from '../helpers/app.js'

/** Every function of the control client, found by walking the object (`clock.set`, `faults.add`, …). */
function functionsOf (object: object, prefix = ''): [string, (...args: unknown[]) => Promise<unknown>][] {
  return Object.entries(object).flatMap(([key, value]) =>
    typeof value === 'function'
      ? [[prefix + key, value as (...args: unknown[]) => Promise<unknown>] as [string, (...args: unknown[]) => Promise<unknown>]]
      : typeof value === 'object' && value !== null ? functionsOf(value as object, `${prefix}${key}.`) : [])
}

t.test('the SDK\'s control client covers every control route', async (t) => {
  const app = await build(t)
  const routes = app.routeTable
    // the metrics are Prometheus's to scrape (its text format), not a test's to call
    .filter((r) => r.url.startsWith('/_sandbox/') && !r.url.startsWith('/_sandbox/ui') && r.url !== '/_sandbox/metrics' && r.method !== 'HEAD')
    .map((r) => ({ key: `${r.method} ${r.url}`, pattern: new RegExp(`^${r.method} ${r.url.replace(/:\w+/g, '[^/]+')}$`) }))
  t.ok(routes.length > 30, `${routes.length} control routes`)

  const called: string[] = []
  const realFetch = globalThis.fetch
  globalThis.fetch = (async (input: string | URL, init?: RequestInit) => {
    const url = new URL(String(input))
    called.push(`${init?.method ?? 'GET'} ${url.pathname}`)
    return new Response('{}', { headers: { 'content-type': 'application/json' } })
  }) as typeof fetch
  t.teardown(() => { globalThis.fetch = realFetch })

  // the default world's client, and a world's (the same calls under /_sandbox/worlds/{id})
  const control = controlClient('http://127.0.0.1:9')
  for (const client of [control, control.world('w0123456789')]) {
    // ids where ids go, an empty object for bodies; reset takes options only
    for (const [name, fn] of functionsOf(client)) await (name === 'reset' ? fn({ keep: ['faults'] }) : fn(1001, 1000, {}))
  }
  for (const route of routes) t.ok(called.some((c) => route.pattern.test(c)), `${route.key} has an SDK call`)
})
