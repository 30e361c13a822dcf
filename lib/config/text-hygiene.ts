/**
 * Text a tenant writes into structured documents (names, labels, descriptions, hints, every other
 * key and string) ends up in model manifests, listings and logs. Characters that are invisible
 * or reorder what a reader sees there are refused on write, with the field and the position:
 *
 * - C0 controls U+0000–U+001F except TAB and LF (a multi-line description legitimately has them;
 *   YAML folds CR LF line breaks into LF, so a CR that survives parsing was written on purpose),
 *   DEL U+007F and the C1 controls U+0080–U+009F;
 * - bidi embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069 (the "Trojan Source"
 *   characters). The marks U+200E/U+200F stay allowed: right-to-left text needs them;
 * - the Unicode tag characters U+E0000–U+E007F: invisible everywhere, yet a model reads them as
 *   the ASCII they shadow, so a description can carry instructions no reviewer sees.
 *
 * One rule, wherever text enters: documents on write (checkDocumentText), client tools when a
 * backend declares them (lib/surface/client-tools.ts), and tools derived from other text — an
 * OpenAPI spec, a remote MCP server's catalog — when a pack is expanded (lib/tools/service.ts,
 * `unsafeTextIn`): a derived tool whose name, description or schema text breaks the rule is left
 * out with a problem naming the character.
 */
import type { Issue } from '../errors'
import { nextTurn } from '../runtime/turns'
import { precompilePatterns } from './patterns'
import { NESTED_YAML_FIELDS, SERVER_TOOLS_PREFIX } from './server-tool'
import { jsonFormOf, locate, MAX_YAML_BYTES, type ParsedYaml, parseYaml, type YamlParsing, type YamlResult, type YamlSource } from './yaml'
import { INLINE_YAML_CHARS } from './yaml-parsing'

const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u
/** Single-line text (names, paths): TAB and LF are refused too. */
const UNSAFE_SINGLE_LINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u

const NAMES: Record<number, string> = {
  0: 'NUL',
  9: 'TAB',
  10: 'LINE FEED',
  13: 'CARRIAGE RETURN',
  27: 'ESCAPE',
  127: 'DELETE',
  8234: 'LEFT-TO-RIGHT EMBEDDING',
  8235: 'RIGHT-TO-LEFT EMBEDDING',
  8236: 'POP DIRECTIONAL FORMATTING',
  8237: 'LEFT-TO-RIGHT OVERRIDE',
  8238: 'RIGHT-TO-LEFT OVERRIDE',
  8294: 'LEFT-TO-RIGHT ISOLATE',
  8295: 'RIGHT-TO-LEFT ISOLATE',
  8296: 'FIRST STRONG ISOLATE',
  8297: 'POP DIRECTIONAL ISOLATE',
}

/** Why `text` is unsafe — the character and its 1-based position — or undefined when it is clean. */
export function unsafeCharacter(
  text: string,
  lines: 'multi-line' | 'single-line' = 'multi-line',
): { position: number; character: string } | undefined {
  const m = (lines === 'multi-line' ? UNSAFE : UNSAFE_SINGLE_LINE).exec(text)
  if (!m) return undefined
  const code = m[0].codePointAt(0)!
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
  const name =
    NAMES[code] ??
    (code < 0x20 || (code >= 0x7f && code <= 0x9f)
      ? 'a control character'
      : code >= 0xe0000
        ? 'an invisible tag character'
        : 'a bidi control')
  return { position: m.index + 1, character: `${hex} (${name})` }
}

/**
 * The first key or string in `value` (a derived tool's name, description, schema…) that breaks the
 * rule: its JSON pointer under `pointer` and a sentence `<pointer> contains U+… (…) at character n`.
 * Walks without recursion and visits each object once; at most `maxNodes` values are looked at (a
 * derived schema's nodes are already counted by its expansion budget, this keeps the walk bounded).
 */
export function unsafeTextIn(value: unknown, pointer = '', maxNodes = 100_000): { pointer: string; message: string } | undefined {
  if (!holdsUnsafeText(value, maxNodes)) return undefined
  const seen = new Set<object>()
  const stack: { value: unknown; at: string }[] = [{ value, at: pointer }]
  for (let visited = 0; stack.length && visited < maxNodes; visited++) {
    const { value: v, at } = stack.pop()!
    if (typeof v === 'string') {
      const bad = unsafeCharacter(v)
      if (bad) return { pointer: at, message: `${at || 'the text'} contains ${bad.character} at character ${bad.position}` }
    } else if (v && typeof v === 'object' && !seen.has(v)) {
      seen.add(v)
      const entries: [string, unknown][] = Array.isArray(v) ? v.map((c, i) => [String(i), c]) : Object.entries(v)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]
        const childAt = `${at}/${escapePointer(k)}`
        const bad = unsafeCharacter(k)
        if (bad) return { pointer: childAt, message: `the key at ${childAt} contains ${bad.character} at character ${bad.position}` }
        stack.push({ value: child, at: childAt })
      }
    }
  }
  return undefined
}

/**
 * Whether any key or string in `value` (at most `maxNodes` values looked at) breaks the rule: one
 * pass that builds no pointers, so clean text — nearly all of it — costs a test per string. The
 * walks that name the place run only when this finds something (a 307 KB spec took ~38 ms per
 * write building a pointer for each of its nodes, issue 21 N3).
 */
function holdsUnsafeText(value: unknown, maxNodes = Number.POSITIVE_INFINITY): boolean {
  return toEnd(unsafeTextSearch(value, maxNodes))
}

/** holdsUnsafeText as steps: it pauses (yields) after every WALK_SLICE values. */
function* unsafeTextSearch(value: unknown, maxNodes = Number.POSITIVE_INFINITY): Generator<void, boolean> {
  const seen = new Set<object>()
  const stack: unknown[] = [value]
  for (let visited = 0; stack.length && visited < maxNodes; visited++) {
    if (visited % WALK_SLICE === WALK_SLICE - 1) yield
    const v = stack.pop()
    if (typeof v === 'string') {
      if (UNSAFE.test(v)) return true
    } else if (v && typeof v === 'object' && !seen.has(v)) {
      seen.add(v)
      if (Array.isArray(v)) for (const child of v) stack.push(child)
      else
        for (const k in v) {
          if (!Object.hasOwn(v, k)) continue
          if (UNSAFE.test(k)) return true
          stack.push((v as Record<string, unknown>)[k])
        }
    }
  }
  return false
}

const MAX_REPORTED = 20
const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * Every key and string of a parsed document that holds an unsafe character, as issues with a JSON
 * pointer, line and column. Walked without recursion, so a deeply nested document cannot overflow
 * the stack, and each object once, so aliases (even a self-referencing `&a [*a]`) cost nothing
 * extra; at most MAX_REPORTED issues are returned.
 */
export function unsafeTextIssues(parsed: ParsedYaml, path?: string): Issue[] {
  return toEnd(unsafeTextIssueSteps(parsed, path))
}

/** unsafeTextIssues as steps: both walks pause (yield) after every WALK_SLICE values. */
function* unsafeTextIssueSteps(parsed: ParsedYaml, path?: string): Generator<void, Issue[]> {
  if (!(yield* unsafeTextSearch(parsed.data))) return []
  const issues: Issue[] = []
  const seen = new Set<object>()
  const stack: { value: unknown; pointer: string }[] = [{ value: parsed.data, pointer: '' }]
  for (let visited = 0; stack.length && issues.length < MAX_REPORTED; visited++) {
    if (visited % WALK_SLICE === WALK_SLICE - 1) yield
    const { value, pointer } = stack.pop()!
    if (value && typeof value === 'object') {
      if (seen.has(value)) continue
      seen.add(value)
    }
    if (typeof value === 'string') {
      const bad = unsafeCharacter(value)
      if (bad)
        issues.push({
          pointer,
          message: `${pointer.slice(1) || 'the document'} contains ${bad.character} at character ${bad.position}; control characters and bidi overrides are not allowed`,
        })
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], pointer: `${pointer}/${i}` })
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, v] = entries[i]
        const child = `${pointer}/${escapePointer(key)}`
        const bad = unsafeCharacter(key)
        if (bad)
          issues.push({
            pointer: child,
            message: `the key '${key.replace(UNSAFE, '?')}' at ${pointer || '/'} contains ${bad.character} at character ${bad.position}; control characters and bidi overrides are not allowed`,
          })
        stack.push({ value: v, pointer: child })
      }
    }
  }
  return locate(parsed, issues, path)
}

/**
 * Values a walk looks at between two pauses. On the write path (checkDocumentWrite) each pause is
 * a turn of the event loop: a 307 KB spec is ~60,000 values, 3–6 ms walked in one piece (issue
 * 21 N3), so its walk would sit in front of every other tenant's request that arrived meanwhile.
 */
const WALK_SLICE = 4_096

/** Runs a walk's steps to the end at once. */
function toEnd<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
  }
}

/** Runs a walk's steps with a turn of the event loop (and the fair-share gate's say) at each pause. */
async function inTurns<T>(steps: Generator<void, T>): Promise<T> {
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
    await nextTurn()
  }
}

/**
 * What in a document's text could make its parsed data hold an unsafe character: one itself, or a
 * backslash escape other than those that only stand for safe characters (`\n \t \" \\ \/`,
 * YAML's escaped space, `\_ \L \P`; not `\r`: a CR is refused). A text with neither parses to clean data, so the walk over
 * the data is skipped: one native scan (~0.5 ms for 307 KB) instead of a walk over every value.
 * Conservative: a backslash that is not an escape at all (a plain scalar's `C:\Users`) only means
 * the walk runs.
 */
const MAY_HOLD_UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]|\\[^nt"\\/ _LP]/u

/** Structured documents (YAML, or JSON, which is YAML) are checked; other bodies are opaque text. */
const STRUCTURED = /\.(ya?ml|json)$/i

/**
 * The write-time check every tenant-written structured document passes, whatever its type
 * (server tools, recipes, engines, model catalog, MCP servers, allow-lists, specs), with the JSON
 * form of its data to store beside the body (`jsonFormOf`), so reads need no YAML parser. No
 * issues when the text is clean or the path is not structured; a document that does not parse is
 * left to its type's own check, which reports the syntax error.
 */
export function checkDocumentText(path: string, body: string): { issues: Issue[]; json?: string } {
  return STRUCTURED.test(path) ? checkParsed(parseYaml(body, path), path) : { issues: [] }
}

/**
 * checkDocumentText on a write path: the text parsed through `yaml` (in a worker when it is long),
 * and the source every later check of the same write reads — with the parse's result, so none
 * of them parses it again.
 */
export async function checkDocumentWrite(
  yaml: YamlParsing,
  tenant: string,
  path: string,
  body: string,
): Promise<{ issues: Issue[]; json?: string; source: YamlSource }> {
  if (!STRUCTURED.test(path)) return { issues: [], source: body }
  const parsed = await yaml.parse(body, { tenant, path })
  const unsafe = parsed.ok && MAY_HOLD_UNSAFE.test(body) ? await inTurns(unsafeTextIssueSteps(parsed.value, path)) : []
  const { issues, json } = checkParsed(parsed, path, unsafe)
  const nested = issues.length || !parsed.ok ? undefined : await nestedYaml(yaml, tenant, path, parsed.value.data)
  // a tool's schemas (an output schema, inputs) are checked synchronously: their patterns compiled first, one per turn
  if (!issues.length && parsed.ok && path.startsWith(SERVER_TOOLS_PREFIX)) await precompilePatterns(parsed.value.data)
  return { issues, json, source: { text: body, json, parsed, ...(nested ? { nested } : {}) } }
}

/**
 * The YAML texts a tool document's parameters hold (NESTED_YAML_FIELDS: an inline OpenAPI spec of
 * up to 64 KiB, ~300 ms for the YAML parser) parsed through `yaml` like the document itself, so
 * the type's check reads them parsed instead of parsing them on this thread. JSON texts are left
 * to the check (JSON.parse is native), short ones too (a few ms at most).
 */
async function nestedYaml(yaml: YamlParsing, tenant: string, path: string, data: unknown) {
  if (!path.startsWith(SERVER_TOOLS_PREFIX) || !data || typeof data !== 'object') return undefined
  const parameters = (data as { parameters?: unknown }).parameters
  if (!parameters || typeof parameters !== 'object') return undefined
  let nested: Map<string, YamlResult> | undefined
  for (const field of NESTED_YAML_FIELDS) {
    const text = (parameters as Record<string, unknown>)[field]
    if (typeof text !== 'string' || text.length <= INLINE_YAML_CHARS || /^\s*[[{]/.test(text) || text.length > MAX_YAML_BYTES) continue
    ;(nested ??= new Map()).set(text, await yaml.parse(text, { tenant, path: `${path}#/parameters/${field}` }))
  }
  return nested
}

/** `unsafe`: the unsafe-text issues when the caller found them already (in turns). */
function checkParsed(parsed: YamlResult, path: string, unsafe?: Issue[]): { issues: Issue[]; json?: string } {
  // a syntax error is the type's own check to report; data over its budget is refused for every type
  if (!parsed.ok) return { issues: parsed.overBudget ? parsed.issues : [] }
  const issues = unsafe ?? unsafeTextIssues(parsed.value, path)
  return issues.length ? { issues } : { issues, json: jsonFormOf(parsed.value.data) }
}
