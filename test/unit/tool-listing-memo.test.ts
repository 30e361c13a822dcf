/**
 * The project's tool listing (asked on every turn) is memoised against the layers' paths and
 * versions: an unchanged project costs a versions-only listing, never the documents' bodies.
 */
import { describe, expect, it, vi } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'

const tool = (description: string) => `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n`

describe('the tool listing memo', () => {
  it('answers an unchanged project from path and version alone, and reads the documents again after a change', async () => {
    const deps = createMemoryDeps()
    await deps.tools.put('acme', 'p1', 'handbook', tool('First.'), { actor: 'test' })
    const list = vi.spyOn(deps.store, 'list')
    const versions = vi.spyOn(deps.store, 'listVersions')

    const first = await deps.tools.listAll('acme', 'p1')
    expect(first.tools.find((t) => t.name === 'handbook')?.description).toBe('First.')
    expect(list).toHaveBeenCalledTimes(2) // tenant and project layers, bodies included

    list.mockClear()
    versions.mockClear()
    await deps.tools.listAll('acme', 'p1')
    expect(list).not.toHaveBeenCalled()
    expect(versions).toHaveBeenCalledTimes(2)

    await deps.tools.put('acme', '_tenant', 'handbook', tool('Tenant-wide.'), { actor: 'test' })
    await deps.tools.put('acme', 'p1', 'handbook', tool('Second.'), { actor: 'test' })
    list.mockClear()
    const changed = await deps.tools.listAll('acme', 'p1')
    expect(list).toHaveBeenCalledTimes(2)
    expect(changed.tools.find((t) => t.name === 'handbook')?.description).toBe('Second.')
  })
})
