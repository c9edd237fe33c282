/**
 * Text from elsewhere (an upstream's answers, a session's requests, a fixture's keys), made safe
 * to print on a terminal: it cannot move the cursor, clear the screen, set the window title,
 * write the clipboard, recolour or reorder what is shown. Every command that prints such text
 * goes through here.
 */

/** C0 and C1 controls, DEL, and the bidirectional embedding, override and isolate characters. */
const UNPRINTABLE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g // eslint-disable-line no-control-regex
/** The same but the line feed and the tab, which lay out a whole document (a report, JSON, XML). */
const UNPRINTABLE_IN_LAYOUT = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g // eslint-disable-line no-control-regex

/** How one such character is written instead, by its code. */
export type Escape = (code: number) => string

const hex = (code: number, width: number) => code.toString(16).toUpperCase().padStart(width, '0')

/** `\x1B`, `\u{202E}`: visible, for plain text. */
export const visibleEscape: Escape = (code) => (code <= 0xff ? `\\x${hex(code, 2)}` : `\\u{${hex(code, 1)}}`)
/** `\u001B`: inside a JSON string, the same character still. */
export const jsonEscape: Escape = (code) => `\\u${hex(code, 4)}`
/** `&#x9B;`: in XML and HTML, a character reference. */
export const markupEscape: Escape = (code) => `&#x${hex(code, 1)};`

export interface PrintableOptions {
  escape?: Escape
  /** Keep line feeds and tabs (a whole document rather than one value). */
  keepLayout?: boolean
}

/** A value from elsewhere, safe to print. */
export function printable (value: string, { escape = visibleEscape, keepLayout = false }: PrintableOptions = {}): string {
  return value.replace(keepLayout ? UNPRINTABLE_IN_LAYOUT : UNPRINTABLE, (c) => escape(c.charCodeAt(0)))
}
