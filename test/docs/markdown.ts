/** What the docs tests read from Markdown: links outside code, and the anchors GitHub gives headings. */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Link {
  file: string
  line: number
  target: string
}

/** README.md and every Markdown file under docs/, as repository-relative paths. */
export function markdownFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    )
  return ['README.md', ...walk('docs')]
}

/** Lines outside fenced code blocks, with inline code spans blanked (a link written as code is not a link). */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = []
  let fence: string | undefined
  text.split('\n').forEach((raw, i) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(raw)
    if (fence) {
      if (opener && opener[1][0] === fence[0] && opener[1].length >= fence.length) fence = undefined
      return
    }
    if (opener) {
      fence = opener[1]
      return
    }
    out.push({ line: i + 1, text: raw.replace(/(`+)[^`]*?\1/g, '') })
  })
  return out
}

export function linksOf(file: string, text: string): Link[] {
  const links: Link[] = []
  for (const { line, text: prose } of proseLines(text)) {
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, line, target: m[1] })
    // HTML a screenshot table or a sized image needs: <img src="…">, <a href="…">
    for (const m of prose.matchAll(/<(?:img|a|source)\b[^>]*?\s(?:src|href|srcset)=["']([^"'\s]+)["']/gi))
      links.push({ file, line, target: m[1] })
  }
  return links
}

/** GitHub's heading ids: the rendered text lower-cased, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  let fence: string | undefined
  for (const raw of text.split('\n')) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(raw)
    if (fence) {
      if (opener && opener[1][0] === fence[0] && opener[1].length >= fence.length) fence = undefined
      continue
    }
    if (opener) {
      fence = opener[1]
      continue
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw)
    if (!heading) continue
    const rendered = heading[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    const base = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

export const readText = (root: string, file: string) => readFileSync(join(root, file), 'utf8')
