const ZONE = /(Z|[+-]\d{2}:?\d{2})$/i
const SHAPE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i

/**
 * Parses an ISO 8601 timestamp to epoch milliseconds; a value without a zone is UTC.
 * Fractions beyond milliseconds are truncated. Returns null when the value is not a timestamp.
 */
export function parseTimestamp (value: string): number | null {
  // a partner polls with the same asOf until something changes, and each request reads it twice (binding, the domain)
  if (value === lastValue) return lastMs
  const ms = parse(value)
  lastValue = value
  lastMs = ms
  return ms
}
let lastValue: string | undefined
let lastMs: number | null = null

function parse (value: string): number | null {
  const v = value.trim()
  if (!SHAPE.test(v)) return null
  let text = v.replace(/(\.\d{3})\d+/, '$1')
  if (!text.includes('T')) text += 'T00:00:00'
  if (!ZONE.test(text)) text += 'Z'
  text = text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')
  const ms = Date.parse(text)
  if (Number.isNaN(ms)) return null
  // Date.parse rolls impossible days over (Feb 30 → Mar 1): refuse them.
  const [, y, mo, d] = /^(\d{4})-(\d{2})-(\d{2})/.exec(text) ?? []
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)))
  if (day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) return null
  if (/T24:/.test(text)) return null
  return ms
}
