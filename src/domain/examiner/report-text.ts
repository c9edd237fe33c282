/**
 * What a report file's text holds besides its parsed value: a key repeated in one object (a
 * reader that keeps the first and one that keeps the last see two reports), found by one pass
 * over text JSON.parse has accepted.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c

interface Frame {
  /** The object's keys so far (null: an array). */
  keys: Set<string> | null
  /** Its place, for a message: `findings[0].message`. */
  path: string
  /** An object: the next string is a key. An array: the next value's index. */
  expectKey: boolean
  index: number
}

const memberPath = (parent: string, key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? (parent === '' ? key : `${parent}.${key}`) : `${parent}[${JSON.stringify(key)}]`)

/** The path of the first key repeated within one object, or undefined; `text` is valid JSON. */
export function firstDuplicateKey (text: string): string | undefined {
  const stack: Frame[] = []
  let path = ''
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const top = stack[stack.length - 1]
    if (c === QUOTE) {
      let end = i + 1
      while (text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1
      if (top?.keys !== null && top?.expectKey === true) {
        const key = JSON.parse(text.slice(i, end + 1)) as string
        if (top.keys.has(key)) return memberPath(top.path, key)
        top.keys.add(key)
        top.expectKey = false
        path = memberPath(top.path, key)
      }
      i = end
    } else if (c === 0x7b || c === 0x5b) { // { [
      const at = top === undefined ? '' : top.keys === null ? `${top.path}[${top.index}]` : path
      stack.push({ keys: c === 0x7b ? new Set() : null, path: at, expectKey: c === 0x7b, index: 0 })
    } else if (c === 0x7d || c === 0x5d) { // } ]
      stack.pop()
    } else if (c === 0x2c && top !== undefined) { // ,
      if (top.keys === null) top.index++
      else top.expectKey = true
    }
  }
  return undefined
}

/** The byte offset of the first difference between two texts (their UTF-8 forms). */
export function firstDifference (a: string, b: string): number {
  let i = 0
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return Buffer.byteLength(a.slice(0, i), 'utf8')
}
