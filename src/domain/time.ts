const ZONE = /(Z|[+-]\d{2}:?\d{2})$/i
const SHAPE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i

/**
 * Parses an ISO 8601 timestamp to epoch milliseconds; a value without a zone is UTC.
 * Fractions beyond milliseconds are truncated. Returns null when the value is not a timestamp.
 */
export function parseTimestamp(value: string): number | null {
  const v = value.trim()
  if (!SHAPE.test(v)) return null
  let text = v.replace(/(\.\d{3})\d+/, '$1')
  if (!text.includes('T')) text += 'T00:00:00'
  if (!ZONE.test(text)) text += 'Z'
  text = text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? null : ms
}
