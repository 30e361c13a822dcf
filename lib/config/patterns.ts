/**
 * Tenant-written regular expressions (JSON Schema `pattern` and `patternProperties`) with RE2
 * semantics: matching is linear in the text (issue 21 N1: `^(a+)+$` against `"a"×29 + "!"` held
 * the event loop 4.6 s with V8's backtracking `RegExp`, doubling per character).
 *
 * JSON Schema patterns are ECMA-262 syntax. The ECMA-only escapes RE2 spells differently are
 * translated (`\uXXXX`, `\u{…}`, `\cX`, `[\b]`, `\0`, `[^]`, `[]`); what RE2 cannot run in
 * linear time — backreferences (`\1`, `\k<name>`) and lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`)
 * — is refused with the reason and the position in the pattern, at write, never matched
 * at call time by a backtracking engine. Known differences that remain (documented in
 * docs/reference/limits.md): RE2's `\s` is ASCII whitespace only, and `.` matches `\r`,
 * U+2028 and U+2029 (ECMA's does not).
 *
 * Work is bounded twice: a compiled pattern may hold at most WORK_BUDGETS.patternProgram
 * instructions (RE2 itself refuses a repeat count above 1,000), and every match is charged
 * `matchCost` steps against the validation budget of the call it runs in.
 */
import { createRequire } from 'node:module'
import type { RE2JS } from 're2js'
import { BoundedCache } from '../runtime/bounded-cache'
import { formatCount } from '../runtime/count-format'
import { nextTurn } from '../runtime/turns'
import { WORK_BUDGETS } from './expansion-budget'

/** A pattern RE2 can run: `test` searches anywhere in the text, like ECMA `RegExp.prototype.test`. */
export interface CompiledPattern {
  readonly source: string
  /** Instructions of the compiled program: the factor of a match's cost per character. */
  readonly size: number
  test(text: string): boolean
}

/** Why a pattern is refused, and where (1-based character position in the pattern). */
export interface PatternProblem {
  readonly message: string
  readonly position: number
}

/** One path segment that is not empty and not `..` (no line breaks). */
const SEGMENT = '(?:[^/.\\n\\r][^/\\n\\r]*|\\.|\\.[^/.\\n\\r][^/\\n\\r]*|\\.\\.[^/\\n\\r]+)'

const cache = new BoundedCache<string, CompiledPattern | PatternProblem>(5_000)

// re2js is 147 KiB: required from node_modules with the first pattern (like Ajv and yaml, an
// installed runtime package on Lambda), never evaluated at cold start.
let re2: typeof import('re2js') | undefined
const re2js = (): typeof import('re2js') => (re2 ??= createRequire(import.meta.url)('re2js') as typeof import('re2js'))

export const isPatternProblem = (p: CompiledPattern | PatternProblem): p is PatternProblem => 'position' in p

/**
 * Patterns the service itself writes into its own schemas (names, paths, secret references),
 * registered by ownPattern: matched with V8's RegExp, so validating a tool document or a spawn
 * never loads re2js. Each is written so that no text can be split two ways by its repetitions
 * (test/unit/config/own-patterns.test.ts also holds each to RE2's answers); tenant-written
 * patterns never reach this map except as the same text, which then matches the same way.
 */
const own = new Map<string, CompiledPattern>()

/** Registers a pattern of the service's own schemas (see `own`) and returns its source. */
export function ownPattern(source: string): string {
  if (!own.has(source)) {
    const re = new RegExp(source, 'u')
    own.set(source, { source, size: source.length, test: (text) => re.test(text) })
  }
  return source
}

/** The sources registered by ownPattern (for the test that holds them to RE2). */
export const ownPatterns = (): string[] => [...own.keys()]

/** The pattern compiled for RE2 whatever registered it (tests compare the two engines with it). */
export const compileRe2 = (source: string): CompiledPattern | PatternProblem => build(source)

/**
 * A relative document path without a `..` segment (`specs/a.yaml`, `./x`, `a//b/`), written
 * without lookahead (RE2 has none, and the tests hold own patterns to RE2), it says what
 * `^(?!/)(?!.*(^|/)\.\.(/|$)).+$` said.
 */
export const RELATIVE_PATH_PATTERN = ownPattern(`^${SEGMENT}(?:/(?:${SEGMENT})?)*$`)

/** The compiled pattern, or the problem that refuses it; cached per source text. */
export function compilePattern(source: string): CompiledPattern | PatternProblem {
  const mine = own.get(source)
  if (mine) return mine
  let hit = cache.get(source)
  if (!hit) hit = cache.set(source, build(source))
  return hit
}

/** What precompilePatterns did: counted, so tests read the work instead of timing it. */
export interface Precompiled {
  /** Distinct patterns compiled (or found compiled, or refused) into the cache. */
  patterns: number
  /** Their instructions together (a refused pattern counts none). */
  instructions: number
  /** Turns of the event loop the walk and the compiles were spread over. */
  slices: number
}

/** Nodes of a value walked in one turn of the event loop (a node costs well under a microsecond). */
const WALK_SLICE = 2_000

/**
 * Compiles the distinct patterns a tenant's value holds — every string under a `pattern` key and
 * every key of a `patternProperties` object, wherever they sit — into the cache compilePattern
 * reads, one pattern per turn of the event loop, so that the synchronous checks after it
 * (schemaProblem) find them compiled and no other request waits behind more than one compile
 * (≤ WORK_BUDGETS.patternProgram instructions). Stops once `limit` instructions are compiled: the
 * checks refuse the value past its pattern budgets anyway, so compiling more would be work for
 * nothing.
 */
export async function precompilePatterns(value: unknown, limit: number = WORK_BUDGETS.packPatterns.limit): Promise<Precompiled> {
  const done: Precompiled = { patterns: 0, instructions: 0, slices: 1 }
  const seen = new Set<string>()
  const stack: unknown[] = [value]
  let walked = 0
  const compile = async (source: string) => {
    if (seen.has(source) || done.instructions > limit) return
    seen.add(source)
    const cached = cache.get(source) ?? own.get(source)
    if (!cached) {
      // a compile of its own turn: what came before it in this turn is not added to it
      await nextTurn()
      done.slices++
    }
    const p = cached ?? compilePattern(source)
    done.patterns++
    if (!isPatternProblem(p)) done.instructions += p.size
  }
  while (stack.length && done.instructions <= limit) {
    const node = stack.pop()
    if (node === null || typeof node !== 'object') continue
    if (++walked % WALK_SLICE === 0) {
      await nextTurn()
      done.slices++
    }
    for (const [key, child] of Array.isArray(node) ? node.entries() : Object.entries(node)) {
      if (key === 'pattern' && typeof child === 'string') await compile(child)
      else if (key === 'patternProperties' && child && typeof child === 'object' && !Array.isArray(child))
        for (const source of Object.keys(child)) await compile(source)
      if (child !== null && typeof child === 'object') stack.push(child)
    }
  }
  return done
}

/**
 * Steps a match of `pattern` against `length` characters costs (the unit of the validation
 * budget, about a quarter of a microsecond): RE2's work is per character, times a factor that
 * grows with the program (measured: ~0.05 µs a character for a five-instruction program, ~1.4 µs
 * for a two-thousand-instruction one).
 */
export const matchCost = (pattern: CompiledPattern, length: number): number => Math.ceil((length * (pattern.size + 64)) / 256)

/**
 * A pattern whose estimate passes this is refused before it is compiled: compiling costs about
 * 7 µs an instruction, and the instruction budget can only be read off a compiled program (a
 * 740-character pattern of 50 `[a-z]{1,1000}` compiled to 100,044 instructions in 300 CPU ms
 * before it was refused). The estimate + 4 stayed within 0.82–1.29× of the compiled size over
 * 3,000 random patterns (test/unit/config/patterns.test.ts holds it to 0.75–1.5×), so 1.5 times
 * the program budget refuses no pattern the budget admits, and what is compiled to be refused
 * for its size stays near 1,000 instructions.
 */
const ESTIMATE_LIMIT = 1.5 * WORK_BUDGETS.patternProgram.limit

/** Past this, an estimate is only "too large": sizes saturate instead of growing without bound. */
const SATURATED = 1e9

/**
 * Instructions RE2 will compile an RE2-syntax pattern to, read off the text in one pass — the sizes
 * of re2js's own parser check (`calcSize`: a literal character 1, a class 1, a capture 2 + its
 * body, `*` 2 +, `+`/`?` 1 +, `{m,n}` n × body + (n − m), an alternation its branches + one per
 * `|`), with an alternation of single characters counted as the one class RE2 merges it into.
 * Linear in the text, no recursion; nesting deeper than RE2's 1,000 levels saturates.
 */
export function estimatedSize(re2: string): number {
  type Frame = {
    done: number
    branch: number
    piece: number
    single: boolean
    pieces: number
    branches: number
    allSingle: boolean
    capture: boolean
    /** Where the current branch's text starts, and the branch before it: RE2 keeps one of two identical neighbours. */
    start: number
    previous: string | undefined
  }
  const open = (capture: boolean, start: number): Frame => ({
    done: 0,
    branch: 0,
    piece: 0,
    single: false,
    pieces: 0,
    branches: 1,
    allSingle: true,
    capture,
    start,
    previous: undefined,
  })
  const sat = (n: number) => Math.min(n, SATURATED)
  /** Forgets the current branch, which repeats an earlier one: the group is as if it had one branch less. */
  const dropBranch = (f: Frame) => {
    f.branches--
    f.branch = 0
    f.piece = 0
    f.single = false
    f.pieces = 0
  }
  const stack: Frame[] = [open(false, 0)]
  let top = stack[0]
  // where the last quantifier ended: a `?` right after it makes it lazy (not a `}` or `?` that
  // ends an atom, as in `\x{41}?` or `\p{L}?`)
  let quantifierEnd = -2
  /** A new piece of the current branch: `single` when it is one character or class, unquantified. */
  const piece = (size: number, single: boolean) => {
    top.branch = sat(top.branch + top.piece)
    top.piece = size
    top.single = single
    top.pieces++
  }
  const oneSingle = (f: Frame) => f.pieces === 1 && f.single
  /**
   * Whether the branch ending at `end` repeats the one before it (then it costs nothing: RE2 merges
   * neighbours with a common prefix). Not one with a capturing group: its copy captures elsewhere.
   * Nor one with an optional or open repeat (`*`, `+`, `?`, `{n,}`, `{n,m}`) or an alternation inside: RE2 factors out fixed
   * prefixes only, and compiles `.*|.*` twice (a CI seed found 0.69× for `(?:.*?|.*?){2,4}`).
   */
  const repeated = (f: Frame, end: number) => {
    const text = re2.slice(f.start, end)
    const same = text === f.previous && !/\((?!\?)/.test(text) && !/[*+|]|\?(?<!\(\?)|\{\d+,/.test(text)
    f.previous = text
    return same
  }
  /** A group's body (or the whole pattern's): its branches, or one class when every branch is one character. */
  const close = (f: Frame) => {
    const merged = f.branches > 1 && f.allSingle && oneSingle(f)
    const body = merged ? 1 : sat(f.done + f.branch + f.piece + f.branches - 1)
    return { body, single: !f.capture && (merged || (f.branches === 1 && oneSingle(f))) }
  }
  for (let i = 0; i < re2.length; i++) {
    const c = re2[i]
    if (c === '\\') {
      const n = re2[i + 1] ?? ''
      if (n === 'Q') {
        const end = re2.indexOf('\\E', i + 2)
        const stop = end < 0 ? re2.length : end
        for (let k = i + 2; k < stop; k++) piece(1, true)
        i = end < 0 ? re2.length : end + 1
        continue
      }
      if ((n === 'x' || n === 'p' || n === 'P') && re2[i + 2] === '{') i = Math.max(i + 1, re2.indexOf('}', i + 3))
      else if (n === 'x') i += 3
      else if (n === 'p' || n === 'P') i += 2
      else i += 1
      piece(1, true)
    } else if (c === '[') {
      // a class is one instruction whatever it lists; `]` first (or after `^`) is a member
      let k = i + 1
      if (re2[k] === '^') k++
      if (re2[k] === ']') k++
      for (; k < re2.length && re2[k] !== ']'; k++) {
        if (re2[k] === '\\') k++
        else if (re2[k] === '[' && re2[k + 1] === ':') {
          const end = re2.indexOf(':]', k + 2)
          if (end > 0) k = end + 1
        }
      }
      i = k
      piece(1, true)
    } else if (c === '(') {
      let capture = true
      if (re2[i + 1] === '?') {
        const head = /^\?(P?<[^>]*>|[a-zA-Z-]*[:)])/.exec(re2.slice(i + 1, i + 130))
        if (head?.[1].endsWith(')')) {
          i += head[0].length // flags for the rest of the group: no group of its own
          continue
        }
        capture = !!head?.[1].includes('<')
        i += head ? head[0].length : 1
      }
      if (stack.length > 1_000) return SATURATED
      stack.push((top = open(capture, i + 1)))
    } else if (c === ')' && stack.length > 1) {
      if (top.branches > 1 && repeated(top, i)) dropBranch(top)
      const f = stack.pop()!
      top = stack[stack.length - 1]
      const { body, single } = close(f)
      piece(f.capture ? sat(2 + body) : body, single)
    } else if (c === '|') {
      if (repeated(top, i)) dropBranch(top)
      else {
        top.allSingle = top.allSingle && oneSingle(top)
        top.done = sat(top.done + top.branch + top.piece)
      }
      top.branches++
      top.start = i + 1
      top.branch = 0
      top.piece = 0
      top.single = false
      top.pieces = 0
    } else if (c === '*' || c === '+' || c === '?') {
      if (c === '?' && quantifierEnd === i - 1) continue // a lazy quantifier's mark
      top.piece = sat((c === '*' ? 2 : 1) + top.piece)
      top.single = false
      quantifierEnd = i
    } else if (c === '{' && /^\{\d+(,\d*)?\}/.test(re2.slice(i, i + 24))) {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(re2.slice(i, i + 24))!
      const min = Number(m[1])
      const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3])
      const sub = top.piece
      top.piece = max === -1 ? (min === 0 ? sat(2 + sub) : sat(1 + min * sub)) : sat(Math.max(1, max) * sub + Math.max(0, max - min))
      top.single = false
      i += m[0].length - 1
      quantifierEnd = i
    } else piece(1, true)
  }
  while (stack.length > 1) {
    const f = stack.pop()!
    top = stack[stack.length - 1]
    piece(close(f).body, false)
  }
  if (top.branches > 1 && repeated(top, re2.length)) dropBranch(top)
  return close(stack[0]).body
}

function build(source: string): CompiledPattern | PatternProblem {
  const translated = toRe2(source)
  if (typeof translated !== 'string') return translated
  const estimate = estimatedSize(translated)
  if (estimate > ESTIMATE_LIMIT)
    return {
      message: `the pattern would compile to about ${estimate >= SATURATED ? 'a billion or more' : formatCount(estimate)} instructions, more than its budget of ${formatCount(WORK_BUDGETS.patternProgram.limit)} (repeat counts multiply); refused before compiling`,
      position: 1,
    }
  let re: RE2JS
  try {
    // One capturing group around the whole: re2js runs a one-pass analysis on every program that
    // starts at `^`, quadratic in its size (17 anchored patterns of ~245 instructions, at the
    // schemaPatterns budget: 50–85 CPU ms to compile, 30–40 without it). A program that starts
    // with a capture is not one-pass; `test` asks for no groups, so it matches on the DFA as an
    // unanchored pattern does, and the group changes no answer (toRe2 refuses an unbalanced `)`,
    // which the group could otherwise close).
    re = re2js().RE2JS.compile(`(${translated})`)
  } catch (e) {
    const reason = String((e as Error).message).replace(/^error parsing regexp: /, '')
    const fragment = /`([^`]*)`\s*$/.exec(reason)?.[1]
    const at = fragment ? source.indexOf(fragment) : -1
    return { message: `the pattern cannot be used: ${reason}`, position: at >= 0 ? at + 1 : 1 }
  }
  const size = programSize(re)
  const limit = WORK_BUDGETS.patternProgram.limit
  if (size > limit)
    return {
      message: `the pattern compiles to ${formatCount(size)} instructions, more than its budget of ${formatCount(limit)} (repeat counts multiply)`,
      position: 1,
    }
  return { source, size, test: (text) => re.test(text) }
}

/** Instructions of RE2JS's compiled program (its public API does not expose the number). */
function programSize(re: RE2JS): number {
  const inst = (re as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog?.inst
  return Array.isArray(inst) ? inst.length : re.pattern().length
}

const HEX = /^[0-9A-Fa-f]$/
const hex4 = (s: string, i: number) => i + 4 <= s.length && [...s.slice(i, i + 4)].every((c) => HEX.test(c))

/** ECMA-262 pattern syntax → RE2 syntax, or the problem of a construct RE2 cannot run. */
function toRe2(src: string): string | PatternProblem {
  let out = ''
  let inClass = false
  let depth = 0
  const refuse = (i: number, what: string): PatternProblem => ({
    message: `${what} at position ${i + 1} cannot be matched in linear time (patterns use RE2 semantics: no backreferences, no lookahead or lookbehind)`,
    position: i + 1,
  })
  for (let i = 0; i < src.length; i++) {
    const c = src[i]
    if (c === '\\') {
      const n = src[i + 1]
      if (n === undefined) return { message: 'the pattern ends with a lone backslash', position: i + 1 }
      if (n === 'u' && src[i + 2] === '{') {
        const end = src.indexOf('}', i + 3)
        if (end < 0) return { message: `an unterminated \\u{…} escape at position ${i + 1}`, position: i + 1 }
        out += `\\x{${src.slice(i + 3, end)}}`
        i = end
      } else if (n === 'u' && hex4(src, i + 2)) {
        out += `\\x{${src.slice(i + 2, i + 6)}}`
        i += 5
      } else if (n === 'c' && /^[A-Za-z]$/.test(src[i + 2] ?? '')) {
        out += `\\x{${(src.charCodeAt(i + 2) % 32).toString(16)}}`
        i += 2
      } else if (n === 'b' && inClass) {
        out += '\\x{8}'
        i++
      } else if (n === '0' && !/[0-9]/.test(src[i + 2] ?? '')) {
        out += '\\x{0}'
        i++
      } else if (!inClass && /[1-9]/.test(n)) return refuse(i, `the backreference \\${n}`)
      else if (!inClass && n === 'k' && src[i + 2] === '<') return refuse(i, 'the named backreference \\k<…>')
      else {
        out += c + n
        i++
      }
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      out += c
      continue
    }
    if (c === '[') {
      if (src.startsWith('[^]', i)) {
        out += '[\\x{0}-\\x{10FFFF}]'
        i += 2
        continue
      }
      if (src.startsWith('[]', i)) {
        out += '[^\\x{0}-\\x{10FFFF}]'
        i += 1
        continue
      }
      inClass = true
      out += c
      // a `]` right after `[` or `[^` is a literal in ECMA's grammar only when escaped; RE2 agrees
      continue
    }
    if (c === '(') depth++
    else if (c === ')' && --depth < 0) return { message: `an unmatched ) at position ${i + 1}`, position: i + 1 }
    if (c === '(' && src[i + 1] === '?') {
      const kind = src.slice(i + 2, i + 4)
      if (kind.startsWith('=') || kind.startsWith('!')) return refuse(i, `the lookahead (?${kind[0]}`)
      if (kind === '<=' || kind === '<!') return refuse(i, `the lookbehind (?${kind}`)
    }
    out += c
  }
  return out
}

/**
 * ajv's `code.regExp` engine: every pattern ajv compiles (only the service's own schemas reach
 * ajv, but a pattern there must not backtrack either) runs on RE2.
 */
export const re2RegExpEngine = Object.assign(
  (pattern: string): { test(text: string): boolean; toString(): string } => {
    const compiled = compilePattern(pattern)
    if (isPatternProblem(compiled)) throw new Error(compiled.message)
    // ajv keys its pattern cache by toString(): it must differ per pattern
    return { test: (text) => compiled.test(text), toString: () => `/${pattern}/re2` }
  },
  { code: 'require("re2js")' },
)
