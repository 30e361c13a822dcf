import { describe, expect, it } from 'vitest'
import { isLayerPath, layerPathProblem, writeRank } from '../../../lib/layers/layer'
import { countChanges, planLayer, staleChanges } from '../../../lib/layers/plan'
import { sha256 } from '../../../lib/runtime/hash'

const remote = (path: string, body: string, version = 1) => ({ path, version, sha256: sha256(body), body })

describe('planLayer', () => {
  it('sorts files into create, update, unchanged by content hash, with a unified diff for updates', () => {
    const plan = planLayer(
      'p1',
      [
        { path: 'server-tools/a.yaml', body: 'type: x\n' },
        { path: 'server-tools/b.yaml', body: 'description: new\n' },
        { path: 'recipes/r.yaml', body: 'engine: e\n' },
      ],
      [remote('server-tools/a.yaml', 'type: x\n', 3), remote('server-tools/b.yaml', 'description: old\n', 2)],
      { prune: false },
    )
    expect(plan.changes.map((c) => `${c.kind} ${c.path}`)).toEqual([
      'update server-tools/b.yaml',
      'create recipes/r.yaml',
      'unchanged server-tools/a.yaml',
    ])
    const update = plan.changes[0]
    expect(update.kind === 'update' && update.diff).toBe(
      '--- a/server-tools/b.yaml\n+++ b/server-tools/b.yaml\n@@ -1,1 +1,1 @@\n-description: old\n+description: new\n',
    )
  })

  it('deletes live documents without a file only with prune, and never documents outside the layer folders', () => {
    const live = [remote('server-tools/gone.yaml', 'x'), remote('notes/elsewhere.md', 'y'), remote('scripts/gone.js', 'z')]
    const kept = planLayer('p1', [], live, { prune: false })
    expect([countChanges(kept), kept.kept]).toEqual([
      { create: 0, update: 0, delete: 0, unchanged: 0 },
      ['scripts/gone.js', 'server-tools/gone.yaml'],
    ])
    const pruned = planLayer('p1', [], live, { prune: true })
    // the tool that names the script goes before the script
    expect(pruned.changes.map((c) => `${c.kind} ${c.path}`)).toEqual(['delete server-tools/gone.yaml', 'delete scripts/gone.js'])
  })

  it('orders writes so that what a document names exists before it', () => {
    const paths = [
      'recipes/r.yaml',
      'server-tools/t.yaml',
      'engines/e.yaml',
      'scripts/s.js',
      'models/gw/big.yaml',
      'models/gw/_provider.yaml',
      'mcp-servers/m.yaml',
      'egress/allow.yaml',
      'quotas.yaml',
    ]
    expect([...paths].sort((a, b) => writeRank(a) - writeRank(b))).toEqual([
      'quotas.yaml',
      'egress/allow.yaml',
      'models/gw/_provider.yaml',
      'models/gw/big.yaml',
      'mcp-servers/m.yaml',
      'scripts/s.js',
      'engines/e.yaml',
      'server-tools/t.yaml',
      'recipes/r.yaml',
    ])
  })
})

describe('staleChanges', () => {
  it('names every planned change whose live version moved, appeared or vanished', () => {
    const plan = planLayer(
      'p1',
      [
        { path: 'documents/a.md', body: 'new' },
        { path: 'documents/b.md', body: 'b' },
      ],
      [remote('documents/a.md', 'old', 4), remote('documents/c.md', 'c', 2)],
      { prune: true },
    )
    expect(staleChanges(plan, [remote('documents/a.md', 'old', 4), remote('documents/c.md', 'c', 2)])).toEqual([])
    expect(staleChanges(plan, [remote('documents/a.md', 'other', 5), remote('documents/b.md', 'b', 1)])).toEqual([
      { path: 'documents/a.md', planned: 4, now: 5 },
      { path: 'documents/b.md', now: 1 },
      { path: 'documents/c.md', planned: 2 },
    ])
  })
})

describe('layerPathProblem', () => {
  it('accepts layer documents and explains the rest', () => {
    expect(layerPathProblem('server-tools/a.yaml', 'p1')).toBeUndefined()
    expect(layerPathProblem('models/openai/gpt-5.1.yaml', 'p1')).toBeUndefined()
    expect(layerPathProblem('egress/allow.yaml', '_tenant')).toBeUndefined()
    expect(layerPathProblem('recipe/a.yaml', 'p1')).toMatch(/did you mean 'recipes\/'/)
    expect(layerPathProblem('server-tools/a.yml', 'p1')).toMatch(/<name>\.yaml/)
    expect(layerPathProblem('server-tools/x/a.yaml', 'p1')).toMatch(/directly inside it/)
    expect(layerPathProblem('egress/allow.yaml', 'p1')).toMatch(/_tenant layer only/)
  })

  it('takes quotas.yaml at the top of a project or tenant layer, and no other top-level file', () => {
    expect([layerPathProblem('quotas.yaml', 'p1'), layerPathProblem('quotas.yaml', '_tenant')]).toEqual([undefined, undefined])
    expect([isLayerPath('quotas.yaml'), isLayerPath('notes.yaml'), isLayerPath('documents/quotas.yaml')]).toEqual([true, false, true])
  })
})
