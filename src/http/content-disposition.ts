/**
 * Content-Disposition for a file download (RFC 6266): `filename*` carries the name in UTF-8
 * (RFC 8187 percent-encoding) and `filename` an ASCII stand-in for clients that do not read
 * `filename*`. Attachment names arrive base64-encoded and may hold any character; a header value
 * may not (Node refuses characters outside Latin-1 and control characters), so the name is never
 * written into the header as it is.
 */

/** Longest name served, in characters; longer names keep their start and their extension. */
export const MAX_DOWNLOAD_NAME = 200

/** The name used when the stored one is empty. */
const FALLBACK_BASE = 'attachment'

/** RFC 8187 attr-char: the bytes that stand for themselves in `filename*`. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/

/** Control characters (C0, DEL, C1): no file name wants them. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/gu

/**
 * The `filename` fallback: printable ASCII only, without `"` and `\` (quoted-string specials)
 * and `%` (RFC 6266 appendix D: some clients decode percent escapes there).
 */
const asciiFallback = (name: string) => name.replace(/[^\u0020-\u007e]|["\\%]/gu, '_')

function percentEncode (name: string): string {
  let out = ''
  for (const byte of Buffer.from(name, 'utf8')) {
    const char = String.fromCharCode(byte)
    out += byte < 0x80 && ATTR_CHAR.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Splits `name.ext` at its last dot when what follows is a short extension. */
function splitExtension (name: string): { base: string; ext: string } {
  const dot = name.lastIndexOf('.')
  const ext = dot === -1 ? '' : name.slice(dot)
  return ext.length > 1 && ext.length <= 16 && !/\s/.test(ext) ? { base: name.slice(0, dot), ext } : { base: name, ext: '' }
}

/** The name as served: control characters replaced, blank names named, long names shortened by code point. */
export function downloadName (fileName: string): string {
  const { base, ext } = splitExtension(fileName.replace(CONTROL, '_'))
  const chars = [...(base.trim() === '' ? FALLBACK_BASE : base)]
  const room = MAX_DOWNLOAD_NAME - [...ext].length
  return (chars.length > room ? chars.slice(0, room).join('') : chars.join('')) + ext
}

/** `attachment; filename="<ASCII>"; filename*=UTF-8''<percent-encoded UTF-8>` */
export function attachmentDisposition (fileName: string): string {
  const name = downloadName(fileName)
  return `attachment; filename="${asciiFallback(name)}"; filename*=UTF-8''${percentEncode(name)}`
}
