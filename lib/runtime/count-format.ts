/**
 * Counts in messages (`1,000`), through one formatter made on first use: `toLocaleString` builds a
 * new one per call (~0.4 ms a refusal), and building the first loads ICU's locale data, which a
 * formatter made at module level charged to every cold start (bench/coldstart.ts).
 */
let formatter: Intl.NumberFormat | undefined

export const formatCount = (n: number): string => (formatter ??= new Intl.NumberFormat('en-US')).format(n)
