/**
 * Values cross the sandbox boundary as JSON text only. These helpers measure that text without
 * building the value first, so a hostile string can't overflow a stack while being checked.
 */

/** Nesting depth of a JSON text: `12` → 0, `[]` → 1, `{"a":[1]}` → 2. Linear, no recursion. */
export function jsonDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
      continue
    }
    if (c === 34) inString = true
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++
      if (depth > max) max = depth
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--
  }
  return max
}

/** UTF-8 size of a string; never smaller than its UTF-16 length, so that length is a cheap lower bound. */
export const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8')
