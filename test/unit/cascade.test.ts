import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import type { AppDeps } from '../../functions/http/app-deps'
import type { MemoryDocumentStore } from '../../lib/stores/memory/document-store'
import { builtinPackMember, builtinSearch, echoPackFactory } from '../support/pack-factory'

const T = 'acme'
const doc = (description: string, extra = '') =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n${extra}`
const bundledTool = { path: 'server-tools/doc_bundled.yaml', body: doc('Bundled doc', 'labels: [docs]\nprimary: true\n') }
const bundledDoc = { path: 'documents/getting-started.md', body: '# Hello from bundled' }

let deps: AppDeps & { store: MemoryDocumentStore }
const put = (project: string, name: string, body: string) => deps.tools.put(T, project, name, body, { actor: 'tester' })

beforeEach(() => {
  deps = createMemoryDeps({
    bundledFiles: [bundledTool, bundledDoc],
    extraFactories: [echoPackFactory],
    extraBuiltins: [builtinSearch, builtinPackMember],
  })
})

describe('cascade precedence (spec §4)', () => {
  it('takes the project document over the tenant document over the bundled default over the built-in', async () => {
    await put('_tenant', 'web_search', doc('tenant search'))
    expect((await deps.tools.lookup(T, 'p1', 'web_search'))?.description).toBe('tenant search')
    await put('p1', 'web_search', doc('project search'))
    expect((await deps.tools.lookup(T, 'p1', 'web_search'))?.description).toBe('project search')
    expect((await deps.tools.lookup(T, 'p2', 'web_search'))?.description).toBe('tenant search')
    expect((await deps.tools.lookup(T, 'p1', 'doc_bundled'))?.source).toBe('bundled')
    expect((await deps.tools.lookup(T, 'p1', 'whoami'))?.source).toBe('builtin')
  })

  it('lets a tenant document override a bundled default', async () => {
    await put('_tenant', 'doc_bundled', doc('tenant copy'))
    const tool = await deps.tools.lookup(T, 'p1', 'doc_bundled')
    expect([tool?.description, tool?.source]).toEqual(['tenant copy', 'tenant'])
  })

  it('treats a disabled document as a hit that shadows the built-in of the same name', async () => {
    await put('p1', 'web_search', doc('off', 'enabled: false\n'))
    expect(await deps.tools.lookup(T, 'p1', 'web_search')).toBeUndefined()
    const names = (await deps.tools.listAll(T, 'p1')).tools.map((t) => t.name)
    expect(names).not.toContain('web_search')
    expect((await deps.tools.lookup(T, 'p2', 'web_search'))?.source).toBe('builtin')
  })

  it('shadows the built-in sub-tools of a pack name with a disabled document', async () => {
    expect(await deps.tools.lookup(T, 'p1', 'legacy__ping')).toBeDefined()
    await put('p1', 'legacy', doc('off', 'enabled: false\n'))
    expect(await deps.tools.lookup(T, 'p1', 'legacy__ping')).toBeUndefined()
    expect((await deps.tools.listAll(T, 'p1')).tools.map((t) => t.name)).not.toContain('legacy__ping')
  })

  it('restores the outer layer when the project document is deleted', async () => {
    await put('_tenant', 'web_search', doc('tenant search'))
    await put('p1', 'web_search', doc('off', 'enabled: false\n'))
    expect(await deps.tools.lookup(T, 'p1', 'web_search')).toBeUndefined()
    await deps.tools.delete(T, 'p1', 'web_search')
    expect((await deps.tools.lookup(T, 'p1', 'web_search'))?.description).toBe('tenant search')
    await deps.tools.delete(T, '_tenant', 'web_search')
    expect((await deps.tools.lookup(T, 'p1', 'web_search'))?.source).toBe('builtin')
  })

  it('collapses project and tenant into one layer when the project is _tenant', async () => {
    await put('_tenant', 'mine', doc('tenant tool'))
    const before = deps.store.roundTrips
    const tool = await deps.tools.lookup(T, '_tenant', 'mine')
    expect(deps.store.roundTrips - before).toBe(1)
    expect(tool?.source).toBe('tenant')
    const listing = await deps.tools.listViews(T, '_tenant')
    expect(listing.tools.find((v) => v.name === 'mine')?.source).toBe('tenant')
  })

  it('reads project and tenant layers in one round trip per lookup', async () => {
    await put('_tenant', 'mine', doc('tenant tool'))
    await deps.tools.lookup(T, 'p1', 'mine') // warm the parse cache
    const before = deps.store.roundTrips
    await deps.tools.lookup(T, 'p1', 'mine')
    expect(deps.store.roundTrips - before).toBe(1)
  })

  it('merges listings outer to inner and drops disabled entries unless asked for them', async () => {
    await put('_tenant', 'alpha', doc('tenant alpha'))
    await put('p1', 'alpha', doc('project alpha'))
    await put('p1', 'beta', doc('beta off', 'enabled: false\n'))
    const { tools } = await deps.tools.listViews(T, 'p1')
    expect(tools.map((v) => [v.name, v.source])).toEqual([
      ['alpha', 'project'],
      ['doc_bundled', 'bundled'],
      ['execute_javascript', 'builtin'],
      ['invoke_tool', 'builtin'],
      ['legacy__ping', 'builtin'],
      ['tool_description', 'builtin'],
      ['tool_list', 'builtin'],
      ['web_search', 'builtin'],
      ['whoami', 'builtin'],
    ])
    const all = await deps.tools.listViews(T, 'p1', { includeDisabled: true })
    expect(all.tools.find((v) => v.name === 'beta')?.enabled).toBe(false)
  })
})

describe('override semantics (spec §5)', () => {
  it('replaces the whole document without merging fields', async () => {
    await put('_tenant', 'guide', doc('tenant guide', 'labels: [docs, web]\nprimary: true\nsearchHint: tenant hint\n'))
    await put('p1', 'guide', doc('project guide'))
    const view = await deps.tools.getView(T, 'p1', 'guide')
    expect(view).toMatchObject({ description: 'project guide', primary: false, labels: [], source: 'project' })
    expect(view.searchHint).toBeUndefined()
  })

  it('never inherits primary or labels from the overridden built-in', async () => {
    await put('p1', 'web_search', doc('local search'))
    const tool = await deps.tools.lookup(T, 'p1', 'web_search')
    expect([tool?.primary, tool?.labels]).toEqual([false, []])
  })

  it('lets an override change the type', async () => {
    await put('_tenant', 'thing', doc('a doc'))
    await put('p1', 'thing', 'type: echo_pack\ndescription: now a pack\nparameters:\n  ops: [one]\n')
    expect(await deps.tools.lookup(T, 'p1', 'thing')).toBeUndefined()
    expect((await deps.tools.lookup(T, 'p1', 'thing__one'))?.typeId).toBe('echo_pack')
  })

  it('creates the override when the name exists only in an outer layer', async () => {
    const r = await put('p1', 'doc_bundled', doc('mine'))
    expect(r.created).toBe(true)
    const again = await put('p1', 'doc_bundled', doc('mine again'))
    expect([again.created, again.view.version]).toEqual([false, 2])
  })
})

describe('labels', () => {
  it('matches labels case-sensitively', async () => {
    await put('p1', 'upper', doc('u', 'labels: [Docs]\n'))
    await put('p1', 'lower', doc('l', 'labels: [docs]\n'))
    expect((await deps.tools.findByLabel(T, 'p1', 'docs')).map((t) => t.name)).toEqual(['doc_bundled', 'lower'])
    expect((await deps.tools.findByLabel(T, 'p1', 'Docs')).map((t) => t.name)).toEqual(['upper'])
  })

  it('finds built-ins by their labels', async () => {
    expect((await deps.tools.findByLabel(T, 'p1', 'web')).map((t) => t.name)).toEqual(['web_search'])
  })
})

describe('broken documents', () => {
  // Every write path refuses these now; a store can still hold them (written before, or by hand), and reads must survive that.
  const stored = (project: string, path: string, body: string) =>
    deps.store.put({ key: { scope: `${T}#${project}`, path }, body, actor: 'raw' })

  it('leaves a broken document out of the listing and reports it in problems', async () => {
    await stored('p1', 'server-tools/broken.yaml', 'type: doc_lookup\ndescription: x\nparameters:\n  path: 42\n')
    await stored('p1', 'server-tools/garbage.yaml', 'type: [unclosed\n')
    await put('p1', 'fine', doc('still listed'))
    const listing = await deps.tools.listViews(T, 'p1')
    expect(listing.tools.map((t) => t.name)).toContain('fine')
    expect(listing.tools.map((t) => t.name)).not.toContain('broken')
    expect(listing.problems.map((p) => [p.name, p.source])).toEqual([
      ['broken', 'project'],
      ['garbage', 'project'],
    ])
    expect(listing.problems[0].errors?.[0]).toMatchObject({ pointer: '/parameters/path', line: 4 })
    expect((await deps.tools.listAll(T, 'p1')).tools.map((t) => t.name)).toContain('fine')
  })

  it('turns a call to a broken tool into a tool error, not an exception', async () => {
    await stored('p1', 'server-tools/broken.yaml', 'type: nope\ndescription: x\n')
    await expect(deps.tools.lookup(T, 'p1', 'broken')).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
  })
})

describe('packs', () => {
  const pack = (extra = '') =>
    `type: echo_pack\ndescription: Echo pack\nlabels: [echo-tools]\nprimary: true\npromptHint: Use echo for echoes\n${extra}parameters:\n  ops: [first, second, third]\n  deferredOps: [third]\n`

  it('names sub-tools <pack>__<local> and propagates labels, primary and promptHint', async () => {
    await put('p1', 'echo', pack())
    const tools = (await deps.tools.listAll(T, 'p1')).tools.filter((t) => t.pack === 'echo')
    expect(tools.map((t) => t.name)).toEqual(['echo__first', 'echo__second', 'echo__third'])
    expect(tools[0]).toMatchObject({
      labels: ['echo-tools', 'echo'],
      primary: true,
      promptHint: 'Use echo for echoes',
      searchHint: 'echo first',
      source: 'project',
    })
  })

  it('drops disabledSubTools by local name', async () => {
    await put('p1', 'echo', pack('disabledSubTools: [second]\n'))
    const names = (await deps.tools.listAll(T, 'p1')).tools.map((t) => t.name)
    expect(names.filter((n) => n.startsWith('echo__'))).toEqual(['echo__first', 'echo__third'])
    expect(await deps.tools.lookup(T, 'p1', 'echo__second')).toBeUndefined()
  })

  it('makes defaultDeferred the sub-tools default while a sub-tool may say otherwise', async () => {
    await put('p1', 'echo', pack())
    expect((await deps.tools.lookup(T, 'p1', 'echo__first'))?.deferred).toBe(false)
    expect((await deps.tools.lookup(T, 'p1', 'echo__third'))?.deferred).toBe(true)
    await put('p1', 'echo', pack('defaultDeferred: true\n'))
    expect((await deps.tools.lookup(T, 'p1', 'echo__first'))?.deferred).toBe(true)
  })

  it('does not resolve the pack name itself as a tool', async () => {
    await put('p1', 'echo', pack())
    expect(await deps.tools.lookup(T, 'p1', 'echo')).toBeUndefined()
  })
})

describe('caching and freshness', () => {
  it('costs one round trip and no re-parse for a fresh read of an unchanged document', async () => {
    await deps.documents.put(T, 'p1', 'server-tools/raw.yaml', doc('raw'), { actor: 'raw' })
    await deps.tools.lookup(T, 'p1', 'raw')
    const [trips, parses] = [deps.store.roundTrips, deps.tools.parses]
    for (let i = 0; i < 5; i++) await deps.tools.lookup(T, 'p1', 'raw')
    expect([deps.store.roundTrips - trips, deps.tools.parses - parses]).toEqual([5, 0])
  })

  it('serves a re-created document after a delete, never the cached body of the deleted one', async () => {
    await put('p1', 'phoenix', doc('first life', 'labels: [a]\n'))
    expect((await deps.tools.listAll(T, 'p1')).tools.find((t) => t.name === 'phoenix')?.description).toBe('first life')
    await deps.tools.delete(T, 'p1', 'phoenix')
    await put('p1', 'phoenix', doc('second life', 'labels: [b]\n'))
    expect((await deps.tools.lookup(T, 'p1', 'phoenix'))?.description).toBe('second life')
    expect((await deps.tools.listAll(T, 'p1')).tools.find((t) => t.name === 'phoenix')?.labels).toEqual(['b'])
  })

  it('serves the next request the newly written version', async () => {
    await put('p1', 'live', doc('v1'))
    expect((await deps.tools.lookup(T, 'p1', 'live'))?.description).toBe('v1')
    await put('p1', 'live', doc('v2'))
    expect((await deps.tools.lookup(T, 'p1', 'live'))?.description).toBe('v2')
  })
})

describe('expansion failures', () => {
  it('turns a pack that cannot be expanded into a tool error for its sub-tools and a listing problem', async () => {
    const failing = {
      ...echoPackFactory,
      typeId: 'failing_pack',
      async create() {
        throw new Error('spec document apis/x.yaml is missing')
      },
    }
    deps = createMemoryDeps({ extraFactories: [failing] })
    await deps.tools.put(T, 'p1', 'broken_pack', 'type: failing_pack\ndescription: x\nparameters:\n  ops: [a]\n', { actor: 'tester' })
    await expect(deps.tools.lookup(T, 'p1', 'broken_pack__a')).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('apis/x.yaml is missing'),
    })
    const { problems } = await deps.tools.listAll(T, 'p1')
    expect(problems.map((p) => p.name)).toEqual(['broken_pack'])
  })
})
