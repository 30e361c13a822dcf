/**
 * Shape checks that run before any parser sees a tenant's text. Parsers (V8's JSON.parse, the
 * `yaml` package) cost time and memory superlinear in nesting or recurse per level, so a tiny
 * body can hold the event loop for seconds (issue 10 F3: `[a` × 520,000 froze the server 25 s).
 * These scans are one linear pass over the characters, no allocation per character, and refuse a
 * text nested deeper than the limit with the line and column where it went too deep.
 *
 * The YAML count runs on the `yaml` package's own lexer (linear, no stack), so it reads quoting
 * and continuation lines as the parser does; it counts every indentation step, compact `- `/`? `
 * indicator and flow bracket as a level, so it may count a level more than the parser would,
 * never fewer; the limit is generous for that reason.
 */
import { createRequire } from 'node:module'
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
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34 /* " */) {
      // to the closing quote by a native search: a 200,000-character string is one step, not a
      // loop turn per character (issue 21 N1: this scan cost as much as JSON.parse itself). The
      // backslashes walked back over are each walked once: the walk stops at the quote before.
      for (;;) {
        const end = text.indexOf('"', i + 1)
        if (end < 0) return -1 // an unterminated string: nothing after it is outside a string
        i = end
        let backslashes = 0
        while (text.charCodeAt(end - 1 - backslashes) === 92 /* \ */) backslashes++
        if (backslashes % 2 === 0) break
      }
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
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

type YamlLexer = { lex(source: string): Iterable<string> }
let yamlLexer: (new () => YamlLexer) | undefined
/** The `yaml` package's own lexer, loaded on first use (never at module load; see yaml.ts). */
const lexer = (): YamlLexer => new (yamlLexer ??= (createRequire(import.meta.url)('yaml') as { Lexer: new () => YamlLexer }).Lexer)()

/** The lexer's control tokens: markers that are not part of the source text. */
const DOCUMENT = '\x02'
const FLOW_END = '\x18'
const SCALAR = '\x1f'

/**
 * YAML: the indentation stack of block collections + compact `- `/`? ` indicators + flow
 * brackets, counted on the tokens of the `yaml` package's own lexer — the lexer the parser reads
 * — so quoted, plain multi-line and block scalars are one token each, exactly as the parser will
 * take them. (Issue 21 N4: a character scan of its own thought a quote at the start of a plain
 * scalar's continuation line opened a quoted scalar and skipped to the next quote, past 64 KiB of
 * brackets the parser then nested into.) The lexer is linear and keeps no stack; the block count
 * is conservative (an indentation step is a level), never lower than the parser's.
 * Undefined when within the limit.
 */
export function yamlTooDeep(text: string, max = MAX_NESTING_DEPTH, path?: string): Issue | undefined {
  const indents: number[] = []
  let flow = 0
  let compact = 0
  let lineStart = true
  let lineIndent = 0
  let scalarNext = false
  let offset = 0
  for (const token of lexer().lex(text)) {
    if (token === DOCUMENT || token === FLOW_END) continue
    if (token === SCALAR) {
      scalarNext = true
      continue
    }
    const at = offset
    offset += token.length
    const c = token.charCodeAt(0)
    if (scalarNext) scalarNext = false
    else if (c === 10 || (c === 13 && token.length <= 2)) {
      lineStart = true
      lineIndent = 0
      compact = 0
      continue
    } else if (c === 32 || c === 9) {
      if (lineStart && c === 32 && lineIndent === 0) lineIndent = token.length - token.trimStart().length
      continue
    } else if (c === 35 /* # comment */) continue
    else if (lineStart && (token === '---' || token === '...')) {
      indents.length = 0
      continue
    }
    if (lineStart) {
      lineStart = false
      if (flow === 0) {
        while (indents.length && indents[indents.length - 1] > lineIndent) indents.pop()
        if (!indents.length || indents[indents.length - 1] < lineIndent) indents.push(lineIndent)
        if (indents.length > max) return tooDeep(text, at, max, path)
      }
    }
    if (token.length !== 1) continue
    if (flow === 0 && (c === 45 /* - */ || c === 63) /* ? */) {
      if (indents.length + ++compact > max) return tooDeep(text, at, max, path)
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (indents.length + compact + ++flow > max) return tooDeep(text, at, max, path)
    } else if ((c === 93 /* ] */ || c === 125) /* } */ && flow > 0) flow--
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
