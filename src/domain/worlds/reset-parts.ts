/** Parts of a world a reset can keep as they are. */
export const RESET_PARTS = ['data', 'journal', 'faults', 'clock', 'simulator', 'rateWindows', 'sessions'] as const
export type ResetPart = typeof RESET_PARTS[number]
