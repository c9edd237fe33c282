/**
 * The shape of a JSON answer, for comparing two instances without comparing their data: each
 * field path (array elements folded into `[]`) with the kinds of value found there, strings
 * told apart by format (a date with or without zone, a date alone, a GUID, a number written
 * as a string).
 */

export type Shape = Map<string, Set<string>>

export interface ShapeDifference {
  kind: 'presence' | 'type' | 'format'
  field: string
  from: string
  to: string
}

const DATE_TIME_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/
const DATE = /^\d{4}-\d{2}-\d{2}$/
const GUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i
const NUMERIC = /^-?\d+(\.\d+)?$/

/** `number`, `string (date-time with zone)`, `null`, … */
export function kindOf (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value !== 'string') return typeof value
  if (DATE_TIME_ZONE.test(value)) return 'string (date-time with zone)'
  if (DATE_TIME.test(value)) return 'string (date-time without zone)'
  if (DATE.test(value)) return 'string (date)'
  if (GUID.test(value)) return 'string (GUID)'
  if (NUMERIC.test(value)) return 'string (number)'
  return 'string'
}

const base = (kind: string) => kind.replace(/ \(.*\)$/, '')

export function shapeOf (value: unknown): Shape {
  const shape: Shape = new Map()
  const visit = (v: unknown, path: string): void => {
    let kinds = shape.get(path)
    if (kinds === undefined) shape.set(path, (kinds = new Set()))
    kinds.add(kindOf(v))
    if (Array.isArray(v)) for (const item of v) visit(item, `${path}[]`)
    else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) visit(item, path === '' ? k : `${path}.${k}`)
    }
  }
  visit(value, '')
  return shape
}

const show = (kinds: Set<string>) => [...kinds].sort().join(' | ')
const display = (path: string) => (path === '' ? '(body)' : path)

/**
 * Every field present on one side only, and every field whose kinds differ (`type` when the
 * JSON types differ, `format` when only the string formats do). Fields under a field present
 * on one side only are not repeated.
 */
export function compareShapes (from: unknown, to: unknown): ShapeDifference[] {
  const a = shapeOf(from)
  const b = shapeOf(to)
  const out: ShapeDifference[] = []
  const absent: string[] = []
  const under = (path: string) => absent.some((p) => path.startsWith(p === '' ? '' : `${p}.`) || path.startsWith(`${p}[]`))
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort()
  for (const path of paths) {
    const ka = a.get(path)
    const kb = b.get(path)
    if (ka === undefined || kb === undefined) {
      if (under(path)) continue
      absent.push(path)
      out.push({ kind: 'presence', field: display(path), from: ka === undefined ? 'absent' : 'present', to: kb === undefined ? 'absent' : 'present' })
      continue
    }
    if (show(ka) === show(kb)) continue
    const typesDiffer = show(new Set([...ka].map(base))) !== show(new Set([...kb].map(base)))
    out.push({ kind: typesDiffer ? 'type' : 'format', field: display(path), from: show(ka), to: show(kb) })
  }
  return out
}
