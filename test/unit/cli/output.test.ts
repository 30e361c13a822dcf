import { describe, expect, it } from 'vitest'
import { formatProblems, progressBar } from '../../../functions/cli/output'
import type { LayerProblem } from '../../../lib/layers/validate'

const problem = (over: Partial<LayerProblem> = {}): LayerProblem => ({
  path: 'server-tools/a.yaml',
  layer: 'target',
  line: 3,
  column: 10,
  message: 'enabled must be a boolean',
  severity: 'error',
  ...over,
})

describe('formatProblems', () => {
  it('writes file:line:col: message lines and a count', () => {
    expect(
      formatProblems(
        [problem(), problem({ path: 'recipes/r.yaml', line: undefined, column: undefined, message: 'odd', severity: 'warning' })],
        { target: 'cfg' },
        'text',
      ),
    ).toBe('cfg/server-tools/a.yaml:3:10: enabled must be a boolean\ncfg/recipes/r.yaml: warning: odd\n1 error, 1 warning')
  })

  it('escapes what GitHub workflow commands reserve, in the message and in the properties', () => {
    const out = formatProblems([problem({ path: 'a,b:c.yaml', message: '100% wrong\nsecond line' })], { target: 'cfg' }, 'github')
    expect(out).toBe('::error file=cfg/a%2Cb%3Ac.yaml,line=3,col=10,title=server-tools validate::100%25 wrong%0Asecond line')
  })

  it('names files of the tenant layer given as context by their own directory', () => {
    expect(formatProblems([problem({ layer: 'context' })], { target: 'cfg/p1', context: 'cfg/_tenant' }, 'text').split('\n')[0]).toBe(
      'cfg/_tenant/server-tools/a.yaml:3:10: enabled must be a boolean',
    )
  })
})

describe('progressBar', () => {
  const stream = (isTTY: boolean) => {
    const writes: string[] = []
    return { writes, stream: { isTTY, write: (s: string) => writes.push(s) } as unknown as NodeJS.WriteStream }
  }

  it('draws on a terminal and clears its line at the end', () => {
    const t = stream(true)
    const bar = progressBar(2, t.stream)
    bar.tick('documents/a.md')
    bar.tick('documents/b.md')
    bar.done()
    expect(t.writes[0]).toMatch(/^\r\[#{12}\.{12}\] 1\/2 documents\/a\.md/)
    expect(t.writes[1]).toMatch(/^\r\[#{24}\] 2\/2 documents\/b\.md/)
    expect(t.writes[2].trim()).toBe('')
  })

  it('stays silent when the output is not a terminal (CI logs get the summary)', () => {
    const t = stream(false)
    const bar = progressBar(2, t.stream)
    bar.tick('x')
    bar.done()
    expect(t.writes).toEqual([])
  })
})
