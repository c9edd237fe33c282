import type { Origin, Outcome, ReceiptAnswer, Writes } from './writes.js'

/**
 * Runs a write with the world's writes as they are when it commits (a reset meanwhile may have
 * given the world new data), and settles once it is committed (worlds/write-batch.ts).
 */
export type WriteCommit = <T>(work: (writes: Writes) => T) => Promise<T>

/** The agency the receipts are for, as the write service takes it. */
type Agency = Parameters<Writes['receipts']>[0]

/** The receipt item check: TypeBox's compiler and value modules load with the first receipt, not at start-up. */
let receiptCheck: Promise<typeof import('./item-validator.js').checkReceiptItem> | undefined
const loadReceiptCheck = () => (receiptCheck ??= import('./item-validator.js').then((m) => m.checkReceiptItem))

/** The RefId an item carried under any casing of the key, when it is text. */
function refIdOf (item: unknown): string | null {
  if (item === null || typeof item !== 'object') return null
  const entry = Object.entries(item).find(([k]) => k.toLowerCase() === 'refid')
  return typeof entry?.[1] === 'string' ? entry[1] : null
}

/** A receipt without `total`: the live service's own sentence, `Total is required`. */
const withLiveSentence = (a: ReceiptAnswer): ReceiptAnswer =>
  a.message === null ? a : { ...a, message: a.message.replace(/(^|; )Total: is required/, '$1Total is required') }

/**
 * Receipts as sent: each item bound and checked on its own (ignored keys are added to
 * `warnings`), the valid ones recorded, and one answer per item in order. An item that failed
 * its schema still answers with the RefId it carried, when readable.
 */
export async function recordReceipts (
  commit: WriteCommit, agency: Agency, clientNumber: number, items: readonly unknown[], origin: Origin, warnings: string[]
): Promise<{ outcome: Outcome, answers: ReceiptAnswer[] }> {
  const check = await loadReceiptCheck()
  const commands = items.map((raw, i) => check(raw, i, warnings))
  const { outcome, answers } = await commit((writes) => writes.receipts(agency, clientNumber, commands, origin))
  return { outcome, answers: answers.map((a, i) => withLiveSentence(a.refId !== null ? a : { ...a, refId: refIdOf(items[i]) })) }
}
