/**
 * A strict, small XML reader for tests: elements, attributes, text, the five named entities and
 * character references; anything else (an unescaped < or &, an unquoted or repeated attribute,
 * a mismatched or unclosed tag, a character XML 1.0 forbids, text outside the root) throws.
 */

export interface XmlElement {
  name: string
  attrs: Record<string, string>
  children: XmlElement[]
  /** The decoded text directly inside the element. */
  text: string
}

const NAME = '[A-Za-z_:][A-Za-z0-9_:.-]*'
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'' }
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function decode (raw: string, where: string): string {
  if (raw.includes('<')) throw new Error(`unescaped < in ${where}`)
  return raw.replace(/&([^;]*);|&/g, (match, ref: string | undefined) => {
    if (ref === undefined) throw new Error(`bare & in ${where}`)
    if (ref in NAMED) return NAMED[ref]!
    const m = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(ref)
    if (m === null) throw new Error(`unknown entity &${ref}; in ${where}`)
    return String.fromCodePoint(m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]))
  })
}

export function parseXml (source: string): XmlElement {
  if (FORBIDDEN.test(source)) throw new Error('a character XML 1.0 cannot hold')
  let rest = source.replace(/^<\?xml[^?]*\?>\s*/, '')
  const stack: XmlElement[] = []
  let root: XmlElement | undefined
  const tag = new RegExp(`^<(/?)(${NAME})((?:\\s+${NAME}\\s*=\\s*(?:"[^"]*"|'[^']*'))*)\\s*(/?)>`)
  while (rest.length > 0) {
    const lt = rest.indexOf('<')
    const text = lt === -1 ? rest : rest.slice(0, lt)
    if (text.length > 0) {
      const top = stack[stack.length - 1]
      if (top === undefined) {
        if (text.trim() !== '') throw new Error(`text outside the root: ${text.slice(0, 40)}`)
      } else top.text += decode(text, `<${top.name}>`)
      rest = rest.slice(text.length)
      continue
    }
    const m = tag.exec(rest)
    if (m === null) throw new Error(`malformed markup at: ${rest.slice(0, 60)}`)
    const [whole, closing, name, attrText, selfClosing] = m
    rest = rest.slice(whole.length)
    if (closing === '/') {
      const open = stack.pop()
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name ?? 'nothing'}>`)
      continue
    }
    const attrs: Record<string, string> = {}
    for (const a of attrText!.matchAll(new RegExp(`(${NAME})\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'g'))) {
      if (a[1]! in attrs) throw new Error(`repeated attribute ${a[1]} on <${name}>`)
      // attribute-value normalization: a literal tab or line break reads as a space
      attrs[a[1]!] = decode((a[2] ?? a[3] ?? '').replace(/\r\n|[\t\n\r]/g, ' '), `${name}@${a[1]}`)
    }
    const element: XmlElement = { name: name!, attrs, children: [], text: '' }
    const parent = stack[stack.length - 1]
    if (parent !== undefined) parent.children.push(element)
    else if (root !== undefined) throw new Error('a second root element')
    else root = element
    if (selfClosing !== '/') stack.push(element)
  }
  if (stack.length > 0) throw new Error(`<${stack[stack.length - 1]!.name}> is never closed`)
  if (root === undefined) throw new Error('no root element')
  return root
}

/** Every descendant element with this name, in document order. */
export function descendants (element: XmlElement, name: string): XmlElement[] {
  return element.children.flatMap((c) => [...(c.name === name ? [c] : []), ...descendants(c, name)])
}
