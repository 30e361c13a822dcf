/**
 * The README and docs/ hold together: every relative link names a file that exists, every #anchor a
 * heading of its target, and the README stays a front door.
 */
import { existsSync, statSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { describe, expect, it } from 'vitest'
import { anchorsOf, linksOf, markdownFiles, readText } from './markdown'

const root = process.cwd()

describe('the documentation', () => {
  it('resolves every relative link in README.md and docs/ to an existing file and heading', () => {
    const broken: string[] = []
    let checked = 0
    for (const file of markdownFiles(root)) {
      for (const link of linksOf(file, readText(root, file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue // http(s), mailto: not ours to check
        checked++
        const [pathPart, anchor] = link.target.split('#', 2)
        const target = pathPart === '' ? file : normalize(join(dirname(file), decodeURIComponent(pathPart)))
        const where = `${link.file}:${link.line} → ${link.target}`
        if (target.startsWith('..') || !existsSync(join(root, target))) {
          broken.push(`${where}: no such file`)
          continue
        }
        if (anchor === undefined) continue
        if (!target.endsWith('.md') || statSync(join(root, target)).isDirectory()) {
          broken.push(`${where}: an anchor into something that is not Markdown`)
          continue
        }
        if (!anchorsOf(readText(root, target)).has(anchor)) broken.push(`${where}: no heading '#${anchor}' in ${target}`)
      }
    }
    expect(broken).toEqual([])
    expect(checked).toBeGreaterThan(40)
  })

  it('finds a broken file link and a broken anchor in text written to fail', () => {
    const text =
      '# A title\n\nSee [x](missing.md), [y](#a-title), [z](#nope) and `[code](not-a-link.md)`.\n<img src="shot.png" width="300">\n```\n[fenced](no.md)\n```\n'
    expect(linksOf('docs/x.md', text).map((l) => l.target)).toEqual(['missing.md', '#a-title', '#nope', 'shot.png'])
    expect([...anchorsOf(text)]).toEqual(['a-title'])
  })

  it('names headings as GitHub does: punctuation dropped, link text kept, repeats numbered', () => {
    const text =
      '# Client tools (spec §7)\n## Tools and documents ([tools](../guide/tools.md))\n## `npm start`: the CLI\n## Decisions\n## Decisions\n'
    expect([...anchorsOf(text)]).toEqual([
      'client-tools-spec-7',
      'tools-and-documents-tools',
      'npm-start-the-cli',
      'decisions',
      'decisions-1',
    ])
  })

  it('keeps the README a front door of at most 250 lines', () => {
    expect(readText(root, 'README.md').split('\n').length - 1).toBeLessThanOrEqual(250)
  })
})
