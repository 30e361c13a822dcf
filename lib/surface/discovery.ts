/**
 * The passive discovery blocks (spec §13, §14.3) in the Activate-First wording (2026-09-12): the
 * model loads a tool with `tool_description(names=[…])` and calls it once it is in the tool list.
 * The static block (deferred minus demoted) stays byte-identical between turns when only the
 * ranking moved; the demoted block carries exactly this turn's demotions.
 */
import type { Tool } from '../tools/contracts'

const lines = new WeakMap<Tool, string>()

const HINT_CHARS = 160
/** Flattened characters that decide a hint: 160 shown, the one after a full stop, one to spare. */
const DECIDING_CHARS = HINT_CHARS + 2
const hints = new WeakMap<Tool, string>()

/**
 * The first sentence of a description (up to 160 characters). Only the start of the text can
 * show, so only a prefix of it is flattened and searched (issue 21 D2: a tool_description answer
 * of 25 descriptions of 100,000 characters flattened and searched all 2.5 million of them, twice).
 * `work.chars` adds up the characters flattened.
 */
export function firstSentence(text: string, work?: { chars: number }): string {
  for (let take = 4 * DECIDING_CHARS; ; take *= 4) {
    const whole = take >= text.length
    if (work) work.chars += whole ? text.length : take
    // A prefix flattened is a prefix of the whole text flattened; cut after its last non-space, it
    // decides the hint as the whole text would once it holds DECIDING_CHARS (whitespace runs may
    // need a longer prefix: it grows until it holds them, at most the whole text).
    const flat = (whole ? text : text.slice(0, take)).replace(/\s+/g, ' ').trim()
    if (whole || flat.length >= DECIDING_CHARS) return sentenceOf(flat)
  }
}

function sentenceOf(flat: string): string {
  const m = /^(.+?[.!?])(?:\s|$)/.exec(flat)
  const s = (m ? m[1] : flat).trim()
  return s.length > HINT_CHARS ? `${s.slice(0, HINT_CHARS - 3).trimEnd()}…` : s
}

/** The searchHint, else the description's first sentence (once per tool object: tools are immutable once resolved). */
export function searchHintOf(tool: Tool): string {
  let hint = hints.get(tool)
  if (hint === undefined) {
    const own = tool.searchHint?.trim()
    hint = own ? own : firstSentence(tool.description)
    hints.set(tool, hint)
  }
  return hint
}

function lineOf(tool: Tool): string {
  let line = lines.get(tool)
  if (line === undefined) {
    const hint = searchHintOf(tool)
    line = hint ? `- \`${tool.name}\` — ${hint}` : `- \`${tool.name}\``
    lines.set(tool, line)
  }
  return line
}

const packOf = (t: Tool) => t.pack ?? (t.name.includes('__') ? t.name.slice(0, t.name.indexOf('__')) : undefined)

/** Tools grouped by pack: loose tools first, then one `### <pack>` section each with its distinct hints. */
function grouped(tools: readonly Tool[]): string[] {
  const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const loose: string[] = []
  const packs = new Map<string, Tool[]>()
  for (const t of sorted) {
    const pack = packOf(t)
    if (!pack) loose.push(lineOf(t))
    else {
      let list = packs.get(pack)
      if (!list) packs.set(pack, (list = []))
      list.push(t)
    }
  }
  const out = [...loose]
  for (const pack of [...packs.keys()].sort()) {
    const members = packs.get(pack)!
    if (out.length) out.push('')
    out.push(`### ${pack}`)
    for (const hint of distinctHints(members)) out.push(hint)
    for (const t of members) out.push(lineOf(t))
  }
  return out
}

/** Distinct non-blank promptHints of tools, in the tools' order. */
export function distinctHints(tools: readonly Tool[]): string[] {
  const seen = new Set<string>()
  for (const t of tools) {
    const h = t.promptHint?.trim()
    if (h) seen.add(h)
  }
  return [...seen]
}

export function discoveryBlock(deferred: readonly Tool[]): string {
  if (!deferred.length) return ''
  return [
    '## More tools you can load',
    '',
    'These tools are available, but their schemas are not in your tool list yet. To use any of them, first call `tool_description(names=[…])` with every candidate you may need — that loads them — and call a tool only once it appears in your tool list. Do not call a tool by name before it is in your tool list.',
    '',
    ...grouped(deferred),
    '',
  ].join('\n')
}

export function demotedDiscoveryBlock(demoted: readonly Tool[]): string {
  if (!demoted.length) return ''
  return [
    '## Tools set aside this turn',
    '',
    'The tool list had to be shortened for this model, so these tools were left out of it this turn. They still work: call `tool_description(names=[…])` with the ones you need — that loads them — and call them once they are in your tool list.',
    '',
    ...grouped(demoted),
    '',
  ].join('\n')
}
