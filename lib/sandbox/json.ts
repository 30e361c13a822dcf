/**
 * Values cross the sandbox boundary as JSON text only. These helpers measure that text without
 * building the value first, so a hostile string can't overflow a stack while being checked.
 */
import { jsonDeeperThan } from '../config/nesting'

/** Whether a JSON text nests deeper than `max` (`12` → 0 levels, `{"a":[1]}` → 2). Linear, no recursion, stops early. */
export const jsonDeeperThanLimit = (text: string, max: number) => jsonDeeperThan(text, max) >= 0

/** UTF-8 size of a string; never smaller than its UTF-16 length, so that length is a cheap lower bound. */
export const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8')
