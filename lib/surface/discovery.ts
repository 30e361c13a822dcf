/**
 * The passive discovery blocks (spec §13, §14.3) in the Activate-First wording (2026-09-12): the
 * model loads a tool with `tool_description(names=[…])` and calls it once it is in the tool list.
 * The static block (deferred minus demoted) stays byte-identical between turns when only the
 * ranking moved; the demoted block carries exactly this turn's demotions.
 */
import type { Tool } from '../tools/contracts'

const lines = new WeakMap<Tool, string>()

/** The first sentence of a description (up to 160 characters). */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  const m = /^(.+?[.!?])(?:\s|$)/.exec(flat)
  const s = (m ? m[1] : flat).trim()
  return s.length > 160 ? `${s.slice(0, 157).trimEnd()}…` : s
}

/** The searchHint, else the description's first sentence. */
export function searchHintOf(tool: Tool): string {
  const hint = tool.searchHint?.trim()
  return hint ? hint : firstSentence(tool.description)
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
