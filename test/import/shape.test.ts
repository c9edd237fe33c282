import t from 'tap'
import { compareShapes, kindOf } from '../../src/import/shape.js'
import { retryAfterMs } from '../../src/import/http.js'

/** What compare tells apart in a value, and how it folds arrays. */

t.test('value kinds: JSON types, string formats', async (t) => {
  t.equal(kindOf('2026-10-24T08:48:24.008Z'), 'string (date-time with zone)')
  t.equal(kindOf('2026-10-24T08:48:24+02:00'), 'string (date-time with zone)')
  t.equal(kindOf('2024-10-08T00:00:00'), 'string (date-time without zone)')
  t.equal(kindOf('2026-09-28'), 'string (date)')
  t.equal(kindOf('7f634c9e-6203-45d6-9c0c-c437ebc1858c'), 'string (GUID)')
  t.equal(kindOf('412.00'), 'string (number)')
  t.equal(kindOf('HIG-1000-01'), 'string')
  t.equal(kindOf(412), 'number')
  t.equal(kindOf(null), 'null')
  t.equal(kindOf([]), 'array')
  t.equal(kindOf({}), 'object')
})

t.test('shapes: presence, type and format, arrays folded, children of an absent field not repeated', async (t) => {
  const from = { details: { modified: '2026-10-24T08:48:24.008Z', agencyNum: 1001 }, policies: [{ premium: 1.5, loBs: [{ code: 'HOME' }] }], invoices: [{ total: 2 }] }
  const to = { details: { modified: '2026-10-24T08:48:24', agencyNum: '1001', extra: true }, policies: [{ premium: '1.50', loBs: [{ code: 'HOME' }] }] }
  t.same(compareShapes(from, to), [
    { kind: 'format', field: 'details.modified', from: 'string (date-time with zone)', to: 'string (date-time without zone)' },
    { kind: 'type', field: 'details.agencyNum', from: 'number', to: 'string (number)' },
    { kind: 'presence', field: 'details.extra', from: 'absent', to: 'present' },
    { kind: 'presence', field: 'invoices', from: 'present', to: 'absent' },
    { kind: 'type', field: 'policies[].premium', from: 'number', to: 'string (number)' }
  ].sort((a, b) => a.field.localeCompare(b.field)))
  t.same(compareShapes([{ a: 1 }, { a: 'x' }], [{ a: 1 }]), [{ kind: 'type', field: '[].a', from: 'number | string', to: 'number' }])
  t.same(compareShapes({ a: [1, 2] }, { a: [3] }), [], 'values and lengths are data, not shape')
})

t.test('Retry-After: seconds or an HTTP date', async (t) => {
  t.equal(retryAfterMs('2'), 2000)
  t.equal(retryAfterMs(null), undefined)
  t.equal(retryAfterMs('soon'), undefined)
  t.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000)
  t.equal(retryAfterMs(new Date(0).toUTCString(), 4_000), 0)
})
