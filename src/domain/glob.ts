/**
 * Path globs of journal queries and fault rules: `*` matches within one segment, `**` across
 * segments, `?` one character of a segment; everything else is literal and the whole path must
 * match.
 *
 * A glob compiles once into a bit-parallel automaton (shift-and over 32-bit integers): state k
 * means "the first k tokens match the text read so far", and one character moves every state
 * at once. A match costs (path length) x ceil((tokens + 1) / 32) word steps, whatever the glob
 * and the path contain: no backtracking, no product of stars and characters. Globs are capped at
 * MAX_GLOB_LENGTH (9 words a character) and paths at MAX_MATCHED_PATH, so one match is bounded.
 */

export { MAX_GLOB_LENGTH } from '../schemas/control.js'

/** Longest path the journal records and fault rules see; a longer path is cut and ends with PATH_CUT_MARKER. */
export const MAX_MATCHED_PATH = 2048
export const PATH_CUT_MARKER = '…'

/** A URL's path: what comes before its query. */
export function pathOf (url: string): string {
  const q = url.indexOf('?')
  return q === -1 ? url : url.slice(0, q)
}

/** The path as the journal records it and fault rules match it: at most MAX_MATCHED_PATH characters, then the marker. */
export function capPath (path: string): string {
  return path.length <= MAX_MATCHED_PATH ? path : path.slice(0, MAX_MATCHED_PATH) + PATH_CUT_MARKER
}

const SLASH = 0x2f
type Token = { kind: 'char'; code: number } | { kind: 'one' } | { kind: 'star' } | { kind: 'globstar' }

/** Tokens, each run of stars as one: `*` alone, `**` or longer a globstar (so stars never follow stars). */
function tokenize (glob: string): Token[] {
  const tokens: Token[] = []
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charCodeAt(i)
    if (c === 0x2a /* * */) {
      let run = 1
      while (glob.charCodeAt(i + 1) === 0x2a) {
        run++
        i++
      }
      tokens.push({ kind: run >= 2 ? 'globstar' : 'star' })
    } else if (c === 0x3f /* ? */) tokens.push({ kind: 'one' })
    else tokens.push({ kind: 'char', code: c })
  }
  return tokens
}

const setBit = (words: Int32Array, offset: number, bit: number) => {
  words[offset + (bit >>> 5)] |= 1 << (bit & 31)
}

/** A compiled glob; `words` is the automaton's width, the cost of each character read. */
export type GlobMatcher = ((text: string) => boolean) & { readonly words: number }

/** Compiles a glob once; the returned matcher runs in time linear in the text's length. */
export function compileGlob (glob: string): GlobMatcher {
  const tokens = tokenize(glob)
  const states = tokens.length + 1
  const width = Math.ceil(states / 32)
  // Character classes: 0 = any character the glob does not name, 1 = '/', then each literal.
  const classOfCode = new Map<number, number>([[SLASH, 1]])
  for (const t of tokens) if (t.kind === 'char' && !classOfCode.has(t.code)) classOfCode.set(t.code, classOfCode.size + 1)
  const classes = classOfCode.size + 1
  const asciiClass = new Uint16Array(128)
  for (const [code, cls] of classOfCode) if (code < 128) asciiClass[code] = cls

  // advance[cls]: states k+1 reached from k by reading a character of class cls (a literal or `?`);
  // stay[cls]: states k+1 of a star that may read it; empty: states k whose star may match nothing.
  const advance = new Int32Array(classes * width)
  const stay = new Int32Array(classes * width)
  const empty = new Int32Array(width)
  tokens.forEach((t, k) => {
    for (let cls = 0; cls < classes; cls++) {
      const isSlash = cls === 1
      if (t.kind === 'char' ? classOfCode.get(t.code) === cls : t.kind === 'one' && !isSlash) setBit(advance, cls * width, k + 1)
      if (t.kind === 'globstar' || (t.kind === 'star' && !isSlash)) setBit(stay, cls * width, k + 1)
    }
    if (t.kind === 'star' || t.kind === 'globstar') setBit(empty, 0, k)
  })
  const acceptWord = (states - 1) >>> 5
  const acceptBit = 1 << ((states - 1) & 31)
  const start = 1 | ((empty[0] & 1) << 1) // the start state, and the one after a leading star matching nothing
  const current = new Int32Array(width)

  const match = (text: string): boolean => {
    current.fill(0)
    current[0] = start
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      const at = (code < 128 ? asciiClass[code] : classOfCode.get(code) ?? 0) * width
      let carry = 0
      let emptyCarry = 0
      let alive = 0
      for (let w = 0; w < width; w++) {
        const s = current[w]
        let next = (((s << 1) | carry) & advance[at + w]) | (s & stay[at + w])
        carry = s >>> 31
        // a star reached now may also match nothing, reaching the state after it too
        // (stars never follow stars, so this one step completes the closure)
        const e = next & empty[w]
        next |= (e << 1) | emptyCarry
        emptyCarry = e >>> 31
        current[w] = next
        alive |= next
      }
      if (alive === 0) return false
    }
    return (current[acceptWord] & acceptBit) !== 0
  }
  return Object.assign(match, { words: width })
}
