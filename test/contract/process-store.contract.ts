/**
 * The ProcessStore contract. Runs on memory (test/unit/surface/stores.test.ts) and DynamoDB
 * (test/integration/aws-surface-stores.test.ts, on dynalite — which has no TTL, so expiry must be
 * enforced on read by the adapter itself).
 */
import { beforeEach, describe, expect, it } from 'vitest'
import type { ProcessRecord, ProcessStore } from '../../lib/recipes/ports'
import { expectCode } from './document-store.contract'

const NOW = Date.UTC(2026, 0, 1)
const HOUR = 3600_000

export function sampleProcess(over: Partial<ProcessRecord> = {}): ProcessRecord {
  return {
    tenant: 'acme',
    project: 'shop',
    id: 'proc-1',
    recipe: 'chat',
    engine: 'default',
    role: 'chat',
    roles: ['chat'],
    models: ['openai/gpt-4o', 'anthropic/claude'],
    allowed: ['doc_read', 'gmail__send', 'tool_list', 'weather-now'],
    promoted: ['weather-now'],
    added: ['weather-now'],
    deferred: ['gmail__send'],
    keep: { names: ['doc_read'], selected: [], prefixes: ['doc_'] },
    dropFirst: { names: [], selected: ['gmail__send'], prefixes: [] },
    activationTtlMs: 15 * 60_000,
    activations: {},
    phantomsReported: [],
    createdAt: NOW,
    createdBy: 'alice',
    expiresAt: NOW + HOUR,
    ...over,
  }
}

export function processStoreContract(name: string, make: () => Promise<ProcessStore>) {
  describe(`ProcessStore contract (${name})`, () => {
    let store: ProcessStore
    const key = { tenant: 'acme', project: 'shop', id: 'proc-1' }
    beforeEach(async () => {
      store = await make()
    })

    it('round-trips every field of a process', async () => {
      const rec = sampleProcess()
      await store.create(rec)
      expect(await store.get(key, NOW)).toEqual(rec)
    })

    it('refuses a record over the 400 KB item limit as TOO_LARGE, at create and when client tools grow it', async () => {
      const many = Array.from({ length: 9_000 }, (_, i) => `tool_with_a_rather_long_name_${i}`) // ~300 KB of names
      await expectCode(store.create(sampleProcess({ allowed: many, deferred: many })), 'TOO_LARGE')
      expect(await store.get(key, NOW)).toBeUndefined()
      await store.create(sampleProcess({ allowed: many }))
      const schema = { type: 'object', description: 'x'.repeat(120_000) }
      const tool = { name: 'big', description: 'Big.', inputSchema: schema, labels: [], primary: false }
      await expectCode(store.setClientTools(key, [tool], { expiresAt: NOW + HOUR, now: NOW }), 'TOO_LARGE')
      expect((await store.get(key, NOW))?.clientTools).toBeUndefined()
    })

    it('refuses a second process with the same id', async () => {
      await store.create(sampleProcess())
      await expectCode(store.create(sampleProcess({ recipe: 'other' })), 'CONFLICT')
      expect((await store.get(key, NOW))?.recipe).toBe('chat')
    })

    it('replaces an expired process of the same id on create', async () => {
      await store.create(sampleProcess({ expiresAt: NOW + 10 }))
      await store.create(sampleProcess({ recipe: 'other', createdAt: NOW + 10, expiresAt: NOW + HOUR }))
      expect((await store.get(key, NOW + 20))?.recipe).toBe('other')
    })

    it('keeps processes of other projects and tenants apart', async () => {
      await store.create(sampleProcess())
      expect(await store.get({ ...key, project: 'other' }, NOW)).toBeUndefined()
      expect(await store.get({ ...key, tenant: 'globex' }, NOW)).toBeUndefined()
    })

    it('hides a process once it expired, and refuses updates to it', async () => {
      await store.create(sampleProcess())
      expect(await store.get(key, NOW + HOUR - 1)).toBeDefined()
      expect(await store.get(key, NOW + HOUR)).toBeUndefined()
      await expectCode(store.stampActivations(key, ['doc_read'], NOW + HOUR, NOW + 2 * HOUR, NOW + HOUR), 'NOT_FOUND')
      await expectCode(store.markPhantoms(key, ['x'], NOW + HOUR), 'NOT_FOUND')
    })

    it('stamps activations per name (names with dashes and dots too) and moves the expiry', async () => {
      await store.create(sampleProcess())
      await store.stampActivations(key, ['gmail__send', 'weather-now'], NOW + 1000, NOW + 3 * HOUR, NOW + 1000)
      await store.stampActivations(key, ['doc.read'], NOW + 2000, NOW + 3 * HOUR, NOW + 2000)
      await store.stampActivations(key, ['gmail__send'], NOW + 3000, NOW + 3 * HOUR, NOW + 3000)
      const rec = await store.get(key, NOW + 2 * HOUR)
      expect(rec?.activations).toEqual({ gmail__send: NOW + 3000, 'weather-now': NOW + 1000, 'doc.read': NOW + 2000 })
      expect(rec?.expiresAt).toBe(NOW + 3 * HOUR)
    })

    it('loses no activation when stamps of different tools run concurrently', async () => {
      await store.create(sampleProcess())
      const names = Array.from({ length: 12 }, (_, i) => `tool_${i}`)
      await Promise.all(names.map((n, i) => store.stampActivations(key, [n], NOW + i, NOW + HOUR, NOW)))
      expect(Object.keys((await store.get(key, NOW))!.activations).sort()).toEqual([...names].sort())
    })

    it('reports each phantom as new exactly once', async () => {
      await store.create(sampleProcess())
      expect(await store.markPhantoms(key, ['web_search', 'jira'], NOW)).toEqual(['web_search', 'jira'])
      expect(await store.markPhantoms(key, ['jira', 'slack', 'slack'], NOW)).toEqual(['slack'])
      expect(await store.markPhantoms(key, [], NOW)).toEqual([])
      expect((await store.get(key, NOW))?.phantomsReported).toEqual(['jira', 'slack', 'web_search'])
    })

    it('answers NOT_FOUND for updates to a process that never existed', async () => {
      await expectCode(store.stampActivations(key, ['a'], NOW, NOW + HOUR, NOW), 'NOT_FOUND')
      await expectCode(store.markPhantoms(key, ['a'], NOW), 'NOT_FOUND')
      await expectCode(store.setClientTools(key, [], { expiresAt: NOW + HOUR, now: NOW }), 'NOT_FOUND')
      await expectCode(store.end(key, NOW), 'NOT_FOUND')
    })

    it('round-trips client tools (arbitrary JSON Schema included), the reserve and the allowedTools given at spawn', async () => {
      const clientTools = [
        {
          name: 'file_read',
          description: 'Read a file on the client.',
          inputSchema: { type: 'object', properties: { 'a/b': { type: 'string', default: '' }, n: { enum: [1.5, null] } } },
          labels: ['files'],
          primary: true,
        },
      ]
      const rec = sampleProcess({ clientTools, clientToolsVersion: 1, reserve: 3, allowedToolsOverride: ['file_read', '@docs'] })
      await store.create(rec)
      expect(await store.get(key, NOW)).toEqual(rec)
    })

    it('round-trips the recipe’s surface, code and native alike, and codeAllowDestructive', async () => {
      for (const [i, surface] of (['code', 'native'] as const).entries()) {
        const rec = sampleProcess({ id: `surface-${i}`, surface, ...(surface === 'code' ? { codeAllowDestructive: true } : {}) })
        await store.create(rec)
        expect(await store.get({ ...key, id: rec.id }, NOW)).toEqual(rec)
      }
    })

    it('replaces client tools with a new version, and refuses a stale expected version', async () => {
      await store.create(sampleProcess())
      const tools = [{ name: 'ask_user', description: 'Ask the user.', inputSchema: { type: 'object' }, labels: [], primary: false }]
      expect(await store.setClientTools(key, tools, { expectedVersion: 0, expiresAt: NOW + 2 * HOUR, now: NOW })).toBe(1)
      expect(await store.setClientTools(key, [...tools, { ...tools[0], name: 'notify' }], { expiresAt: NOW + 2 * HOUR, now: NOW })).toBe(2)
      await expectCode(store.setClientTools(key, [], { expectedVersion: 1, expiresAt: NOW + 2 * HOUR, now: NOW }), 'CONFLICT')
      const back = await store.get(key, NOW + HOUR + 1)
      expect(back).toMatchObject({ clientToolsVersion: 2, expiresAt: NOW + 2 * HOUR })
      expect(back?.clientTools?.map((t) => t.name)).toEqual(['ask_user', 'notify'])
    })

    it('ends a process: it is gone for reads and updates', async () => {
      await store.create(sampleProcess())
      await store.end(key, NOW)
      expect(await store.get(key, NOW)).toBeUndefined()
      await expectCode(store.stampActivations(key, ['a'], NOW, NOW + HOUR, NOW), 'NOT_FOUND')
      await expectCode(store.end(key, NOW), 'NOT_FOUND')
    })
  })
}
