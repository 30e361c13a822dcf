/**
 * Write ids: how a store tells its own retried write from someone else's (README, durability).
 *
 * The client retries an attempt whose answer was lost (a reset socket, a timeout, a 5xx), and
 * DynamoDB may have applied it. Each store call picks one id, the same for all its attempts; the
 * write records it in the item and is conditional on the item not holding it yet. A retry of an
 * applied attempt then fails that condition instead of applying twice, and the store, finding its
 * id in the item, answers what the first attempt would have.
 *
 * The item keeps the ids of its last WRITE_ID_SLOTS writes in fixed slots, shifted by each write
 * in the same expression (an update's operands read the item before it), so a retry recognises
 * its applied attempt even when up to WRITE_ID_SLOTS − 1 other writes landed between its lost
 * answer and the retry (all within the call's deadline, milliseconds to seconds). Beyond that it
 * would apply again: the bound, stated in docs/operations/durability.md. Four slots of ~16 bytes
 * keep a small item within one write unit.
 */
import { randomBytes } from 'node:crypto'

export const WRITE_ID_SLOTS = 4
/** Slot 0 holds the newest write's id. */
export const writeIdAttribute = (slot: number) => (slot === 0 ? 'writeId' : `writeId${slot}`)
const NONE = '-'

/** Unique per store call, never per attempt. */
export const newWriteId = () => randomBytes(12).toString('base64url')

/**
 * The SET clauses that record `:wid` and shift the older ids, and the condition that the item
 * holds none of them yet. Adds its names (`#wid0`…) and values (`:wid`, `:widNone`) to the maps.
 */
export function writeIdClauses(names: Record<string, string>, values: Record<string, unknown>, writeId: string) {
  values[':wid'] = writeId
  values[':widNone'] = NONE
  const set: string[] = []
  const unseen: string[] = []
  for (let slot = 0; slot < WRITE_ID_SLOTS; slot++) {
    names[`#wid${slot}`] = writeIdAttribute(slot)
    set.push(slot === 0 ? '#wid0 = :wid' : `#wid${slot} = if_not_exists(#wid${slot - 1}, :widNone)`)
    // a comparison with a missing attribute is false, so an item without the slot passes
    unseen.push(`NOT #wid${slot} = :wid`)
  }
  return { set, condition: `(${unseen.join(' AND ')})` }
}

/**
 * How many writes followed ours in the item (0: ours is the newest), or undefined when the item
 * does not hold our id (ours was not applied, or more than WRITE_ID_SLOTS − 1 writes followed).
 */
export function writesSince(item: object | undefined, writeId: string): number | undefined {
  if (!item) return undefined
  for (let slot = 0; slot < WRITE_ID_SLOTS; slot++) if ((item as Record<string, unknown>)[writeIdAttribute(slot)] === writeId) return slot
  return undefined
}

/** True when an error says no attempt of the call may have been applied (DynamoError.$mayHaveLanded). */
export const mayHaveLanded = (e: unknown) => !!(e as { $mayHaveLanded?: boolean } | null)?.$mayHaveLanded
