/**
 * The lengths a spawn's (and a preview's) lists may have, and their refusals: light enough for the
 * HTTP layer to import at cold start, which checks them while it scans a body, before parsing it.
 */
import { EXPANSION_LIMITS } from '../config/expansion-budget'
import type { ItemLimits } from '../config/json-slices'
import { invalidInput } from '../errors'
import { formatCount } from '../runtime/count-format'

/** A spawn's allowedTools names at most this many entries. */
export const MAX_SPAWN_ALLOWED_TOOLS = 256

/** The problem of a model chain longer than the budget allows (spawn bodies and recipe documents). */
export const modelChainTooLong = (length: number, atLeast = false) =>
  `a model chain may have at most ${EXPANSION_LIMITS.modelChain} entries (this one has ${formatCount(length)}${atLeast ? ' or more' : ''})`

export const allowedToolsTooLong = () => `allowedTools may hold at most ${MAX_SPAWN_ALLOWED_TOOLS} entries`

/**
 * Refused by their length while the body is scanned, before it is parsed (issue 21 N5: 20,000
 * models were 340 KB parsed on the shared thread, then refused by their count), worded as the
 * spawn's own check of a parsed body words them.
 */
export const SPAWN_ITEM_LIMITS: ItemLimits = {
  limits: { models: EXPANSION_LIMITS.modelChain, allowedTools: MAX_SPAWN_ALLOWED_TOOLS },
  refuse(member, items, opts) {
    const issue = { pointer: `/${member}`, message: member === 'models' ? modelChainTooLong(items, opts?.atLeast) : allowedToolsTooLong() }
    return invalidInput(`the spawn request is invalid (${issue.message})`, [issue])
  },
}
