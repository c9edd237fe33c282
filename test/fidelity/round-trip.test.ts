import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { AGENCY, DEMO, build, demoFixture } from '../helpers/app.js'
import { vendor } from '../helpers/fidelity.js'
import { attachment, createClientBody, logNote, receipt } from '../helpers/writes.js'

/**
 * [B: Read-model round trip] Everything the sandbox creates is valid in the fixture schema, so
 * `GET /_sandbox/state` → `POST /_sandbox/reset` with that document reproduces every vendor answer.
 * Property: any short sequence of vendor writes against the demo data, then state → reset, and the
 * vendor reads of what was touched answer the same bytes before and after.
 */

const ROW = '[B: Read-model round trip]'
const { main, disconnected } = AGENCY

/** A client a write goes to: one of the demo's, or one created earlier in the sequence. */
type Target = { demo: number } | { created: number }

type Write =
  | { kind: 'create', policy: 'none' | 'no number' | 'numbered', business: boolean, birth: string | null, officeId: number | null, task: boolean }
  | { kind: 'log', target: Target, version: '4.0' | '3.0', onPolicy: boolean, task: boolean }
  | { kind: 'pending log', client: number }
  | { kind: 'attachment', target: Target, version: '4.0' | '3.0' }
  | { kind: 'receipt', target: Target, onInvoice: boolean }

const target: fc.Arbitrary<Target> = fc.oneof(
  fc.record({ demo: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ created: fc.nat(5) })
)
const version = fc.constantFrom('4.0' as const, '3.0' as const)

const writeArb: fc.Arbitrary<Write> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      policy: fc.constantFrom('none' as const, 'no number' as const, 'numbered' as const),
      business: fc.boolean(),
      birth: fc.constantFrom(null, '1985-12-10', '1990-06-30T08:30:00+02:00', '2000-02-29T00:00:00Z'),
      // 4 is the demo's archived office: refused, and the refusal must leave no trace either
      officeId: fc.constantFrom(null, 1, 2, 4),
      task: fc.boolean()
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('log' as const), target, version, onPolicy: fc.boolean(), task: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('pending log' as const), client: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('attachment' as const), target, version }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('receipt' as const), target, onInvoice: fc.boolean() }) }
)

const demo = demoFixture()
const demoClients = (agencyId: number) => demo.agencies.find((a) => a.agencyId === agencyId)!.clients.filter((c) => !c.deleted)
const TASK = { title: 'Call back', description: 'About the new policy', dueDate: '2026-12-01T09:00:00Z', assignedToRole: 'Csr' }

/** Applies the writes in order; returns the touched client numbers per agency and the policy numbers created. */
async function applyWrites (app: FastifyInstance, writes: Write[]) {
  const created: number[] = []
  const touched = new Map<number, Set<number>>([[main, new Set()], [disconnected, new Set()]])
  const policyNumbers: string[] = []
  const clientOf = (to: Target): number => {
    if ('created' in to && created.length > 0) return created[to.created % created.length]
    return demoClients(main)[('demo' in to ? to.demo : to.created) % 4].clientNumber
  }
  for (const [i, w] of writes.entries()) {
    let res: LightMyRequestResponse
    if (w.kind === 'create') {
      const number = `RT-${i}`
      const body = createClientBody({
        People: [{ FirstName: 'Ada', LastName: 'Lovelace', MainContactType: 'First', ...(w.birth === null ? {} : { DateOfBirth: w.birth }) }],
        Policy: w.policy === 'none' ? undefined : { ...(w.policy === 'numbered' ? { PolicyNumber: number } : {}), LOBs: ['AUTOP'], EffectiveDate: '2026-12-01', State: 'ME' },
        ...(w.business ? { BusinessDetail: { BusinessType: 'LLC', CompanyName: 'Round Trip LLC', Naics: '524210' } } : {}),
        ...(w.officeId === null ? {} : { OfficeId: w.officeId }),
        ...(w.task ? { Task: { Title: 'Welcome call', Description: 'Call the new client', DueDate: '2026-12-01T09:00:00Z', AssignedToRole: 'Csr' } } : {})
      })
      res = await vendor(app, 'POST', `${main}/client`, 'version=4.0', body)
      if (res.statusCode === 200) {
        created.push(res.json().clientNumber as number)
        touched.get(main)!.add(res.json().clientNumber as number)
        if (w.policy === 'numbered') policyNumbers.push(number)
      }
    } else if (w.kind === 'log') {
      const client = clientOf(w.target)
      touched.get(main)!.add(client)
      let policyId: string | undefined
      if (w.onPolicy) {
        const read = await vendor(app, 'GET', `${main}/client/${client}`, 'version=4.0&include=Policies')
        policyId = (read.json().policies as { id: string }[])[0]?.id
      }
      res = await vendor(app, 'POST', `${main}/client/${client}/log`, `version=${w.version}`,
        logNote({ ...(policyId === undefined ? {} : { policyId }), ...(w.task ? { task: TASK } : {}) }))
    } else if (w.kind === 'pending log') {
      const client = demoClients(disconnected)[w.client].clientNumber
      touched.get(disconnected)!.add(client)
      res = await vendor(app, 'POST', `${disconnected}/client/${client}/log`, 'version=4.0', logNote())
    } else if (w.kind === 'attachment') {
      const client = clientOf(w.target)
      touched.get(main)!.add(client)
      const file = attachment(Buffer.from(`%PDF-1.4 round trip ${i}`))
      res = await app.inject({ method: 'POST', url: `/vendor/agency/${main}/client/${client}/attachment?version=${w.version}`, headers: { ...file.headers, authorization: DEMO }, payload: file.payload })
    } else {
      const client = clientOf(w.target)
      touched.get(main)!.add(client)
      const invoice = demoClients(main).find((c) => c.clientNumber === client)?.invoices?.[0]
      const item = w.onInvoice && invoice !== undefined
        ? receipt({ invoices: [{ invoiceId: invoice.id, amount: 10 }], total: 10 })
        : receipt()
      res = await vendor(app, 'POST', `${main}/client/${client}/receipts`, 'version=4.0', [item])
    }
    if (res.statusCode >= 500) throw new Error(`${w.kind}: ${res.statusCode} ${res.body}`)
  }
  return { touched, policyNumbers }
}

/** The vendor reads of the touched clients, the listings and the offices, each as status, type and body. */
async function vendorReads (app: FastifyInstance, touched: Map<number, Set<number>>, policyNumbers: string[], asOf: string) {
  const answers: Record<string, string> = {}
  const read = async (key: string, method: 'GET' | 'POST', path: string, query: string, payload?: object) => {
    const res = await vendor(app, method, path, query, payload)
    answers[key] = `${res.statusCode} ${String(res.headers['content-type'])} ${String(res.headers.denied ?? '')}\n${res.body}`
  }
  for (const [agencyId, clients] of touched) {
    for (const n of clients) {
      await read(`${agencyId}/${n} 4.0 all`, 'GET', `${agencyId}/client/${n}`, 'version=4.0&include=Details,People,Contacts,Claims,Policies,Invoices')
      await read(`${agencyId}/${n} 4.0`, 'GET', `${agencyId}/client/${n}`, 'version=4.0')
      await read(`${agencyId}/${n} 3.0`, 'GET', `${agencyId}/client/${n}`, 'version=3.0')
      await read(`${agencyId}/${n} 1`, 'GET', `${agencyId}/client/${n}`, '')
    }
    await read(`${agencyId} batch`, 'POST', `${agencyId}/clients`, 'version=4.0', { clientNumbers: [...clients] })
    await read(`${agencyId} changed`, 'GET', `${agencyId}/clients`, 'version=4.0')
    await read(`${agencyId} changed since`, 'GET', `${agencyId}/clients`, `version=4.0&asOf=${asOf}`)
    await read(`${agencyId} deleted`, 'GET', `${agencyId}/clients`, 'version=4.0&deleted=true')
    await read(`${agencyId} changed 1`, 'GET', `${agencyId}/clients`, `asOf=${asOf}`)
    for (const v of ['version=4.0', 'version=3.0', '']) await read(`${agencyId} offices ${v}`, 'GET', `${agencyId}/offices`, v)
  }
  for (const p of policyNumbers) await read(`search ${p}`, 'GET', `${main}/clients/search`, `version=4.0&policyNumber=${p}`)
  return answers
}

t.test(`${ROW} any short sequence of vendor writes, then state → reset: the same vendor answers`, async (t) => {
  const app = await build(t)
  let runs = 0
  await fc.assert(
    fc.asyncProperty(fc.array(writeArb, { minLength: 1, maxLength: 6 }), async (writes) => {
      runs++
      const start = await app.inject({ method: 'POST', url: '/_sandbox/reset' })
      if (start.statusCode !== 200) throw new Error(`reset to the demo: ${start.body}`)
      const asOf = (await app.inject({ url: '/_sandbox/clock' })).json().now as string
      const { touched, policyNumbers } = await applyWrites(app, writes)
      const before = await vendorReads(app, touched, policyNumbers, asOf)
      const state = await app.inject({ url: '/_sandbox/state' })
      const reset = await app.inject({ method: 'POST', url: '/_sandbox/reset', payload: state.body, headers: { 'content-type': 'application/json' } })
      if (reset.statusCode !== 200) throw new Error(`the state did not reset: ${reset.body.slice(0, 600)}`)
      const after = await vendorReads(app, touched, policyNumbers, asOf)
      const differing = Object.keys(before).filter((key) => after[key] !== before[key])
      if (differing.length > 0) {
        const key = differing[0]
        throw new Error(`${differing.length} answers differ after the reset, first ${key}:\nbefore ${before[key].slice(0, 400)}\nafter  ${after[key].slice(0, 400)}`)
      }
      const again = await app.inject({ url: '/_sandbox/state' })
      if (again.body !== state.body) throw new Error('the state after the reset is not the state reset to')
    }),
    { seed: 20261122, numRuns: 25, endOnFailure: true }
  )
  t.equal(runs, 25, 'every sequence answered the same after state → reset')
})
