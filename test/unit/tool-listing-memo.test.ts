/**
 * The project's tool listing (asked on every turn) is memoised against the layers' paths and
 * versions: an unchanged project costs a versions-only listing, never the documents' bodies.
 */
import { describe, expect, it, vi } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { RestApiToolFactory } from '../../lib/tools/types/rest_api'

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

  it('expands a specPath pack once per spec version: the same Tool objects on every listing until the spec changes', async () => {
    const deps = createMemoryDeps()
    const spec = (ops: number) =>
      JSON.stringify({
        openapi: '3.0.3',
        info: { title: 'wide', version: '1' },
        servers: [{ url: 'https://api.example.test' }],
        paths: Object.fromEntries(
          Array.from({ length: ops }, (_, i) => [
            `/r${i}`,
            { get: { operationId: `op${i}`, responses: { '200': { description: 'ok' } } } },
          ]),
        ),
      })
    await deps.documents.put('acme', 'p1', 'specs/wide.json', spec(300), { actor: 'test' })
    await deps.tools.put('acme', 'p1', 'wide', 'type: rest_api\ndescription: Wide.\nparameters:\n  specPath: specs/wide.json\n', {
      actor: 'test',
    })
    const create = vi.spyOn(RestApiToolFactory.prototype, 'create')
    const first = (await deps.tools.listAll('acme', 'p1')).tools
    for (let i = 0; i < 5; i++) {
      const again = (await deps.tools.listAll('acme', 'p1')).tools
      expect(again.length).toBe(first.length)
      expect(again.every((t, k) => t === first[k])).toBe(true)
    }
    expect(create).toHaveBeenCalledTimes(1)

    await deps.documents.put('acme', 'p1', 'specs/wide.json', spec(301), { actor: 'test' })
    const changed = (await deps.tools.listAll('acme', 'p1')).tools
    expect(changed.length).toBe(first.length + 1)
    expect(create).toHaveBeenCalledTimes(2)
    create.mockRestore()
  })
})
