import type { KeyedHash } from './keyed-hash.js'

/**
 * Invented replacement values, each drawn by a keyed hash of the original (the same original
 * and seed give the same replacement). Names, streets, cities and companies are built from
 * syllables and never taken from a catalogue of real names, so an anonymised file cannot
 * repeat a real person's name by chance; `avoid` holds catalogue names (Faker's) that a built
 * word must not equal either.
 */

const ONSETS = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'br', 'dr', 'kr', 'st', 'tr', 'sh']
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io']
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 'x', 'nd', 'rt']
const CITY_ENDINGS = ['ton', 'ville', 'field', 'burg', 'port', 'dale', 'wood', 'ford']
const STREET_SUFFIXES = ['St', 'Ave', 'Rd', 'Ln', 'Way', 'Ct', 'Dr', 'Blvd', 'Ter', 'Pl']
const KNOWN_STREET_SUFFIX = /^(st|street|ave|avenue|rd|road|ln|lane|way|ct|court|dr|drive|blvd|boulevard|ter|terrace|pl|place|pkwy|parkway|cir|circle|hwy|highway|sq|square|trl|trail|loop|row|run|pike)\.?$/i
const COMPANY_SUFFIXES = ['Group', 'Holdings', 'Partners', 'Services', 'Company', 'Associates', 'Works', 'Trading']
const LEGAL_SUFFIX = /\s+(LLC|L\.L\.C\.|Inc\.?|Corp\.?|Corporation|Co\.?|Company|Ltd\.?|LLP|LP|PC|PLLC|NA|N\.A\.)$/i

const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1)

export class Fakes {
  constructor (private readonly h: KeyedHash, private readonly avoid: ReadonlySet<string> = new Set()) {}

  /** A made-up word of `syllables` syllables, lower case. */
  private word (key: string, syllables: number): string {
    let w = ''
    for (let i = 0; i < syllables; i++) {
      w += ONSETS[this.h.int(`${key}|o${i}`, ONSETS.length)] + VOWELS[this.h.int(`${key}|v${i}`, VOWELS.length)]
    }
    return w + CODAS[this.h.int(`${key}|c`, CODAS.length)]
  }

  /** A capitalised word that is not a catalogue name nor the original. */
  private name (kind: string, original: string, min: number, spread: number): string {
    for (let attempt = 0; ; attempt++) {
      const key = `${kind}|${original}|${attempt}`
      const w = capital(this.word(key, min + this.h.int(`${key}|n`, spread)))
      if (!this.avoid.has(w.toLowerCase()) && w.toLowerCase() !== original.toLowerCase()) return w
    }
  }

  firstName (v: string): string {
    return this.name('first', v, 2, 2)
  }

  lastName (v: string): string {
    return this.name('last', v, 2, 2)
  }

  /** An initial stays an initial (`Z`, `Z.`); a name becomes a first name. */
  middleName (v: string): string {
    const initial = /^([A-Za-z])(\.?)$/.exec(v.trim())
    if (initial === null) return this.firstName(v)
    const letters = 'ABCDEFGHJKLMNPRSTVW'
    const letter = letters[this.h.int(`middle|${v}`, letters.length)]
    return (initial[1] === initial[1].toLowerCase() ? letter.toLowerCase() : letter) + initial[2]
  }

  /** A company keeps its legal form (`LLC`, `Inc.`). */
  company (v: string): string {
    const legal = LEGAL_SUFFIX.exec(v)
    const words = this.name('company', v, 2, 2)
    const tail = legal !== null ? legal[1] : COMPANY_SUFFIXES[this.h.int(`company|${v}|s`, COMPANY_SUFFIXES.length)]
    return `${words} ${tail}`
  }

  /** `1355 Lake St` → `2741 Drovan St` (the house number's length and a known suffix kept). */
  street (v: string): string {
    const parts = v.trim().split(/\s+/)
    const number = /^\d+[A-Za-z]?$/.test(parts[0] ?? '') ? this.digits(parts[0]) : undefined
    const last = parts[parts.length - 1] ?? ''
    const suffix = parts.length > 1 && KNOWN_STREET_SUFFIX.test(last) ? last : STREET_SUFFIXES[this.h.int(`street|${v}|s`, STREET_SUFFIXES.length)]
    const name = this.name('street', v, 2, 2)
    return [number, name, suffix].filter((p) => p !== undefined).join(' ')
  }

  /** A second address line keeps its words (`Suite`, `Apt`) and changes its numbers; one without numbers is rewritten. */
  addressLine2 (v: string): string {
    return /\d/.test(v) ? this.digits(v) : this.text(v)
  }

  city (v: string): string {
    const ending = CITY_ENDINGS[this.h.int(`city|${v}|e`, CITY_ENDINGS.length)]
    return this.name('city', v, 1, 2) + ending
  }

  /** `Middlesex` → `Torvain`; a trailing ` County` is kept. */
  county (v: string): string {
    const m = /^(.*?)(\s+County)?$/i.exec(v) ?? [v, v, '']
    return this.name('county', m[1], 2, 1) + (m[2] ?? '')
  }

  /** Every digit replaced, everything else kept: phones, ZIP codes, suite numbers. */
  digits (v: string): string {
    return this.identifier(v, false)
  }

  /**
   * Identifiers (policy, claim, licence, FEIN, VIN, loan numbers): the same shape, each letter
   * and digit moved by a keyed shift that depends on the characters before it. Distinct
   * inputs stay distinct (a policy number keeps finding its one client) and a shared prefix
   * stays shared (an agency's numbering scheme still shows).
   */
  identifier (v: string, letters = true): string {
    let out = ''
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i)
      const shift = (radix: number) => this.h.int(`id|${v.slice(0, i)}|${i}`, radix)
      if (c >= 48 && c <= 57) out += String.fromCharCode(48 + ((c - 48 + shift(10)) % 10))
      else if (letters && c >= 65 && c <= 90) out += String.fromCharCode(65 + ((c - 65 + shift(26)) % 26))
      else if (letters && c >= 97 && c <= 122) out += String.fromCharCode(97 + ((c - 97 + shift(26)) % 26))
      else out += v[i]
    }
    return out
  }

  /** `jane.doe@gmail.com` → `drovi.kastel@belan.example.com` (reserved for examples: never delivered). */
  email (v: string): string {
    const at = v.lastIndexOf('@')
    const domain = at < 0 ? '' : v.slice(at + 1).toLowerCase()
    const local = `${this.word(`email|${v}|a`, 2)}.${this.word(`email|${v}|b`, 2)}`
    return `${local}@${this.domain(domain)}`
  }

  /** One replacement domain per original domain, under example.com. */
  private domain (v: string): string {
    return `${this.word(`domain|${v}`, 2)}.example.com`
  }

  /** `https://www.harbor.com/x` → `https://www.drovan.example.com`. */
  website (v: string): string {
    const m = /^([a-z]+:\/\/)?(www\.)?([^/?#]*)/i.exec(v.trim())
    return `${m?.[1] ?? ''}${m?.[2] ?? ''}${this.domain(m?.[3] ?? v)}`
  }

  /** A social-media handle. */
  handle (v: string): string {
    return `@${this.word(`handle|${v}`, 3)}`
  }

  /** Free text: each word replaced by a made-up word of the same length, digits changed, punctuation and spacing kept. */
  text (v: string): string {
    let n = 0
    return v.replace(/[A-Za-z]+|\d+/g, (w) => {
      const key = `text|${v}|${n++}`
      if (/^\d/.test(w)) return this.digits(w)
      let out = ''
      while (out.length < w.length) out += this.word(`${key}|${out.length}`, 2)
      out = out.slice(0, w.length)
      return w.charAt(0) === w.charAt(0).toUpperCase() ? capital(out) : out
    })
  }

  /**
   * A date of birth moved by `days` (the same for a whole client, so the people of a client
   * keep their order): the date part changes, the time and zone part (or its absence) stays.
   */
  shiftDate (v: string, days: number): string {
    const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(v)
    if (m === null) return v
    const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) + days * 86_400_000
    if (Number.isNaN(t)) return v
    return new Date(t).toISOString().slice(0, 10) + v.slice(10)
  }
}
