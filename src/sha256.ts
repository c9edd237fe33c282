import { hash } from 'node:crypto'

/** SHA-256 of text (UTF-8) or bytes, as hex: one call, no hash object (fingerprints of writes, the journal's body digests). */
export const sha256Hex = (data: string | Buffer): string => hash('sha256', data, 'hex')
