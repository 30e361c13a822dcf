/**
 * Shape checks that run before any parser sees a tenant's text. Parsers (V8's JSON.parse, the
 * `yaml` package) cost time and memory superlinear in nesting or recurse per level, so a tiny
 * body can hold the event loop for seconds (issue 10 F3: `[a` × 520,000 froze the server 25 s).
 * These scans are one linear pass over the characters, no allocation per character, and refuse a
 * text nested deeper than the limit with the line and column where it went too deep.
 *
 * The YAML scan is conservative: it counts every indentation step, compact `- `/`? ` indicator
 * and flow bracket as a level, so it may count a level or two more than the parser would
 * (a multi-line scalar's continuation lines), never fewer; the limit is generous for that reason.
 */
import type { Issue } from '../errors'
import { WORK_BUDGETS } from './expansion-budget'

/** Deepest nesting a tenant's JSON or YAML may have (bodies, documents, specs). */
export const MAX_NESTING_DEPTH = WORK_BUDGETS.yamlDepth.limit

export interface Position {
  line: number
  column: number
}

function positionAt(text: string, offset: number): Position {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return { line, column: offset - lineStart + 1 }
}

const tooDeep = (text: string, offset: number, max: number, path?: string): Issue => {
  const pos = positionAt(text, offset)
  return { path, ...pos, message: `nested deeper than ${max} levels at line ${pos.line}, column ${pos.column}` }
}

/**
 * JSON: brackets outside strings. The offset of the first bracket that opens level `max + 1`, or
 * -1 when the text stays within `max` levels. Also what the sandbox checks its results with.
 */
export function jsonDeeperThan(text: string, max: number): number {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return i
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--
  }
  return -1
}

/** JSON nested deeper than the limit, as an Issue with its line and column; undefined when within it. */
export function jsonTooDeep(text: string, max = MAX_NESTING_DEPTH, path?: string): Issue | undefined {
  const offset = jsonDeeperThan(text, max)
  return offset < 0 ? undefined : tooDeep(text, offset, max, path)
}

/**
 * YAML: the indentation stack of block collections + compact `- `/`? ` indicators + flow
 * brackets (outside quotes and comments; block scalars `|`/`>` skipped). Undefined when within the limit.
 */
export function yamlTooDeep(text: string, max = MAX_NESTING_DEPTH, path?: string): Issue | undefined {
  const indents: number[] = []
  let flow = 0
  let quote = 0 // the open quote character (34 or 39) while inside a quoted scalar, else 0
  let scalarParent = -1 // while >= 0: lines indented deeper than this are block scalar content
  let i = 0
  const n = text.length
  while (i < n) {
    // one line per iteration
    let lineEnd = text.indexOf('\n', i)
    if (lineEnd < 0) lineEnd = n
    let p = i
    while (p < lineEnd && text.charCodeAt(p) === 32) p++
    const indent = p - i
    const blank = p >= lineEnd || text.charCodeAt(p) === 13 || text.charCodeAt(p) === 35 /* # */
    if (scalarParent >= 0) {
      if (blank || indent > scalarParent) {
        i = lineEnd + 1
        continue
      }
      scalarParent = -1
    }
    if (!blank && flow === 0 && quote === 0) {
      if (indent === 0 && (text.startsWith('---', p) || text.startsWith('...', p))) indents.length = 0
      while (indents.length && indents[indents.length - 1] > indent) indents.pop()
      if (!indents.length || indents[indents.length - 1] < indent) indents.push(indent)
      if (indents.length > max) return tooDeep(text, p, max, path)
    }
    let compact = 0
    let valueStart = flow === 0 && quote === 0
    for (; p < lineEnd; p++) {
      const c = text.charCodeAt(p)
      if (quote) {
        if (quote === 34 && c === 92) p++
        else if (c === quote) {
          if (quote === 39 && text.charCodeAt(p + 1) === 39) p++
          else quote = 0
        }
        continue
      }
      if (c === 32 || c === 9 || c === 13) continue
      if (c === 35 /* # */ && (p === i || text.charCodeAt(p - 1) === 32 || text.charCodeAt(p - 1) === 9)) break
      const next = p + 1 < lineEnd ? text.charCodeAt(p + 1) : 32
      const spaceAfter = next === 32 || next === 9 || next === 13
      if (flow === 0 && valueStart && (c === 45 /* - */ || c === 63) /* ? */ && spaceAfter) {
        if (indents.length + ++compact > max) return tooDeep(text, p, max, path)
        continue
      }
      if (valueStart && (c === 34 || c === 39)) {
        quote = c
        valueStart = false
        continue
      }
      if (c === 91 || c === 123) {
        if (flow > 0 || valueStart) {
          if (indents.length + compact + ++flow > max) return tooDeep(text, p, max, path)
          valueStart = true
          continue
        }
      } else if ((c === 93 || c === 125) && flow > 0) {
        flow--
        valueStart = false
        continue
      } else if (c === 44 /* , */ && flow > 0) {
        valueStart = true
        continue
      } else if (c === 58 /* : */ && (spaceAfter || flow > 0)) {
        valueStart = true
        continue
      } else if (flow === 0 && valueStart && (c === 124 /* | */ || c === 62) /* > */) {
        scalarParent = indent
        break
      } else if (valueStart && (c === 38 /* & */ || c === 33 /* ! */ || c === 42) /* * */) {
        // an anchor, tag or alias: skip the token, the value (if any) still starts after it
        while (p + 1 < lineEnd && text.charCodeAt(p + 1) !== 32) p++
        continue
      }
      valueStart = false
    }
    i = lineEnd + 1
  }
  return undefined
}

/**
 * Where a JSON text first goes wrong, for a 400 that names the place. Only called after
 * JSON.parse failed (whose V8 message has no position) and after jsonTooDeep passed, so the
 * recursion here is bounded by MAX_NESTING_DEPTH.
 */
export function jsonSyntaxIssue(text: string, path?: string): Issue {
  let i = 0
  const n = text.length
  const at = (k: number) => (k < n ? text.charCodeAt(k) : -1)
  const fail = (what: string): never => {
    const pos = positionAt(text, i)
    throw { path, ...pos, message: `${what} at line ${pos.line}, column ${pos.column}` } satisfies Issue
  }
  const unexpected = () => fail(i >= n ? 'unexpected end of the body' : `unexpected '${text[i]}'`)
  const ws = () => {
    for (let c = at(i); c === 32 || c === 9 || c === 10 || c === 13; c = at(++i));
  }
  const literal = (word: string) => (text.startsWith(word, i) ? (i += word.length) : unexpected())
  const string = () => {
    for (i++; i < n && at(i) !== 34; ) {
      if (at(i) < 32) fail('a control character inside a string')
      i += at(i) === 92 ? 2 : 1
    }
    if (i >= n) fail('an unterminated string')
    i++
  }
  const digits = () => {
    const start = i
    for (let c = at(i); c >= 48 && c <= 57; c = at(++i));
    if (i === start) unexpected()
  }
  const number = () => {
    if (at(i) === 45 /* - */) i++
    if (at(i) === 48 /* 0 */) i++
    else digits()
    if (at(i) === 46 /* . */) {
      i++
      digits()
    }
    if (at(i) === 101 || at(i) === 69 /* e E */) {
      i++
      if (at(i) === 43 || at(i) === 45) i++
      digits()
    }
  }
  const value = (): void => {
    ws()
    const c = at(i)
    if (c === 123 /* { */) {
      i++
      ws()
      if (at(i) === 125) return void i++
      for (;;) {
        ws()
        if (at(i) !== 34) fail('expected a double-quoted property name')
        string()
        ws()
        if (at(i) !== 58) fail("expected ':' after a property name")
        i++
        value()
        ws()
        if (at(i) === 44) i++
        else if (at(i) === 125) return void i++
        else fail(i >= n ? 'unexpected end of the body' : "expected ',' or '}'")
      }
    }
    if (c === 91 /* [ */) {
      i++
      ws()
      if (at(i) === 93) return void i++
      for (;;) {
        value()
        ws()
        if (at(i) === 44) i++
        else if (at(i) === 93) return void i++
        else fail(i >= n ? 'unexpected end of the body' : "expected ',' or ']'")
      }
    }
    if (c === 34) return void string()
    if (c === 116) return void literal('true')
    if (c === 102) return void literal('false')
    if (c === 110) return void literal('null')
    if (c === 45 || (c >= 48 && c <= 57)) return void number()
    unexpected()
  }
  try {
    value()
    ws()
    if (i < n) fail('unexpected text after the JSON value')
  } catch (e) {
    if (e && typeof e === 'object' && 'message' in e && !(e instanceof Error)) return e as Issue
    throw e
  }
  // JSON.parse refused what this reader accepts (e.g. a bad escape): say so without a position
  return { path, message: 'the body is not valid JSON' }
}
