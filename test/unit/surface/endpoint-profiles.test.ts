/**
 * Endpoint profiles (issue 26): for every endpoint the bundled model catalog describes, a surface
 * of 600 tools — long names (some with a short alias), large schemas, families of every size —
 * renders within every limit the catalog states for it, and where a published request schema for
 * the tools array exists (test/fixtures/provider-tools/), the rendering passes it.
 *
 * Published schemas: OpenAI Chat Completions and Anthropic Messages (used for OpenAI, Azure
 * OpenAI, Groq and xAI — the OpenAI-compatible ones — and for Anthropic and Bedrock InvokeModel),
 * and Bedrock Converse's ToolSpecification (applied to the `native` form as a backend translates
 * it). Gemini and Mistral have no rendering of their own and no schema we could read, so only
 * their documented limits are asserted.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { newAjv } from '../../../lib/config/json-schema'
import { isServerToolsError } from '../../../lib/errors'
import { checkModelCatalogDocument, type ProviderDocument, parseProviderDocument } from '../../../lib/models/documents'
import { classify, toolBytes } from '../../../lib/surface/classify'
import { type ManifestFormat, toolsArrayJson } from '../../../lib/surface/formats'
import type { Tool } from '../../../lib/tools/contracts'
import { FLOOR, NOW, processRecord, tool } from './helpers'

const MODELS = join(import.meta.dirname, '../../../defaults/models')
const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/provider-tools', name), 'utf8')) as Record<string, unknown>
const ajv = newAjv({ allErrors: true, strict: false })
// the OpenAI schema's own maxItems (128) is OpenAI's count; the compatible endpoints have their own
const { maxItems: _openaiCount, ...openaiShape } = fixture('openai-chat-tools.schema.json')
const SHAPES: Partial<Record<ManifestFormat, ReturnType<typeof ajv.compile>>> = {
  openai: ajv.compile(openaiShape),
  anthropic: ajv.compile(fixture('anthropic-messages-tools.schema.json')),
}

const BEDROCK_CONVERSE = ajv.compile(fixture('bedrock-converse-tools.schema.json'))

const endpoints = readdirSync(MODELS).map((instance) => {
  const path = `models/${instance}/_provider.yaml`
  const parsed = parseProviderDocument(readFileSync(join(MODELS, instance, '_provider.yaml'), 'utf8'), path)
  if (!parsed.ok) throw new Error(`${path}: ${JSON.stringify(parsed.issues)}`)
  return { instance, doc: parsed.config }
})

/** The wire form each endpoint's requests take (undefined: no rendering of its own). */
function formatOf(instance: string, doc: ProviderDocument): ManifestFormat | undefined {
  if (doc.wireType === 'openai' || instance === 'azure-openai') return 'openai'
  if (doc.wireType === 'anthropic' || instance === 'bedrock-invoke') return 'anthropic'
  return undefined
}

/** 600 tools: 40 packs of 1 to 29 sub-tools (names up to 90 characters, every fifth pack aliased short), and handwritten singles. */
function surfaceOf600(): Tool[] {
  const tools: Tool[] = []
  for (let p = 0; tools.length < 520; p++) {
    const size = 1 + ((p * 7) % 29)
    const pack = p % 3 === 0 ? `pack${p}_${'x'.repeat(60)}` : `pack${p}`
    for (let i = 0; i < size && tools.length < 520; i++) {
      const t = tool(`${pack}__operation_${i}`)
      const properties: Record<string, unknown> = {}
      // every fourth pack carries large schemas: 60 parameters with long descriptions
      const params = p % 4 === 0 ? 60 : 3
      for (let k = 0; k < params; k++) properties[`param_${k}`] = { type: 'string', description: `Parameter ${k}. ${'Detail. '.repeat(8)}` }
      t.inputSchema = { type: 'object', properties }
      if (p % 5 === 0 && t.name.length > 64) t.aliases = [`p${p}__op_${i}`]
      tools.push(t)
    }
  }
  for (let i = 0; tools.length < 600; i++) tools.push(tool(`single_tool_${i}`))
  return tools
}

const RESERVE = 1

describe('endpoint profiles in the bundled model catalog', () => {
  it('covers every major endpoint, each document valid on write', () => {
    expect(endpoints.map((e) => e.instance).sort()).toEqual([
      'anthropic',
      'azure-openai',
      'bedrock-converse',
      'bedrock-invoke',
      'gemini',
      'groq',
      'mistral',
      'openai',
      'xai',
    ])
    for (const { instance } of endpoints) {
      const path = `models/${instance}/_provider.yaml`
      expect(checkModelCatalogDocument(path, readFileSync(join(MODELS, instance, '_provider.yaml'), 'utf8'))).toEqual([])
    }
  })

  for (const { instance, doc } of endpoints) {
    it(`renders a surface of 600 tools for ${instance} within every limit its profile states`, () => {
      const tools = surfaceOf600()
      const turn = classify({
        tools: [...FLOOR, ...tools],
        process: processRecord(),
        now: NOW,
        maxActivated: 40,
        limit: doc.maxTools,
        reserve: RESERVE,
        endpoint: { maxToolNameLength: doc.maxToolNameLength, maxSchemaBytes: doc.maxSchemaBytes },
      })
      const format = formatOf(instance, doc) ?? 'native'
      const rendered = JSON.parse(toolsArrayJson(turn.manifest, format)) as Record<string, unknown>[]
      const nameOf = (t: Record<string, unknown>) =>
        (format === 'openai' ? (t.function as { name: string }).name : (t.name as string)) ?? ''
      // count, with the engine's action tool beside the manifest
      if (doc.maxTools !== undefined) expect(rendered.length + RESERVE).toBeLessThanOrEqual(doc.maxTools)
      // names: every one the endpoint accepts, and distinct
      const names = rendered.map(nameOf)
      for (const n of names) {
        expect(n).toMatch(/^[a-zA-Z0-9_-]+$/)
        if (doc.maxToolNameLength !== undefined) expect(n.length).toBeLessThanOrEqual(doc.maxToolNameLength)
      }
      expect(new Set(names).size).toBe(names.length)
      // schema size, as the triage measures it
      if (doc.maxSchemaBytes !== undefined) {
        const bytes = turn.manifest.reduce((sum, t) => sum + toolBytes(t, doc.maxSchemaBytes! + 1), 0)
        expect(bytes).toBeLessThanOrEqual(doc.maxSchemaBytes)
        expect(turn.budget.schemaBytes).toBe(bytes)
      }
      // strict caps: no tool is sent strict, so 0 strict tools, 0 optional and 0 union strict parameters
      expect(rendered.filter((t) => t.strict === true || (t.function as { strict?: boolean } | undefined)?.strict === true)).toEqual([])
      // the published request schema, where there is one
      const shape = SHAPES[format]
      if (shape) expect(shape(rendered), JSON.stringify(shape.errors?.slice(0, 3))).toBe(true)
      if (instance === 'bedrock-converse') {
        // the backend's translation of the native form: one toolSpec per tool, the schema under `json`
        const converse = rendered.map((t) => ({
          toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.inputSchema } },
        }))
        expect(BEDROCK_CONVERSE(converse), JSON.stringify(BEDROCK_CONVERSE.errors?.slice(0, 3))).toBe(true)
      }
      // the surface is large enough that every stated limit binds (the test is not met by a small manifest)
      const reasons = new Set(turn.demotedGroups.map((g) => g.reason))
      if (doc.maxToolNameLength !== undefined) expect(reasons).toContain('nameLength')
      if (doc.maxSchemaBytes !== undefined) expect(reasons).toContain('schemaBytes')
      else if (doc.maxTools !== undefined) expect(reasons).toContain('count')
      // every visible tool is accounted for: in the manifest or demoted by whole families, each with its reason
      expect(turn.manifest.length + turn.demoted.length).toBe(602)
      for (const g of turn.demotedGroups) expect(new Set(g.names.map((n) => n.split('__')[0])).size).toBe(1)
      for (const [family, reason] of Object.entries(turn.budget.demotedFor ?? {}))
        expect(turn.demotedGroups.find((g) => g.family === family)?.reason).toBe(reason)
    })
  }

  for (const { instance, doc } of endpoints.filter((e) => e.doc.nativeDeferral === 'anthropic-tool-search')) {
    it(`renders ${instance}'s deferred tools in Anthropic's own form, held to the published schema`, () => {
      const tools = surfaceOf600().map((t, i) => (i % 2 ? { ...t, deferred: true } : t))
      const turn = classify({
        tools: [...FLOOR, ...tools],
        process: processRecord(),
        now: NOW,
        maxActivated: 40,
        limit: doc.maxTools,
        reserve: RESERVE,
        endpoint: { maxToolNameLength: doc.maxToolNameLength, maxSchemaBytes: doc.maxSchemaBytes },
      })
      // a tool whose name the endpoint refuses is refused deferred as well: only the accepted ones go
      const deferrable = [...turn.deferred, ...turn.demoted].filter((t) => t.name.length <= 64 || t.aliases?.length)
      const rendered = JSON.parse(toolsArrayJson(turn.manifest, 'anthropic', deferrable)) as Record<string, unknown>[]
      expect(SHAPES.anthropic!(rendered), JSON.stringify(SHAPES.anthropic!.errors?.slice(0, 3))).toBe(true)
      expect(rendered.filter((t) => typeof t.type === 'string' && String(t.type).startsWith('tool_search_tool_'))).toHaveLength(1)
      expect(rendered.filter((t) => t.defer_loading === true)).toHaveLength(deferrable.length)
      // the endpoint needs at least one tool that is not deferred beside the search tool
      expect(rendered.some((t) => t.input_schema && t.defer_loading !== true)).toBe(true)
    })
  }
})

describe('the triage against an endpoint profile', () => {
  const run = (tools: Tool[], endpoint: { maxToolNameLength?: number; maxSchemaBytes?: number }, limit?: number) =>
    classify({ tools: [...FLOOR, ...tools], process: processRecord(), now: NOW, maxActivated: 40, reserve: 0, limit, endpoint })

  it('demotes a whole family when one of its names is too long and has no alias that fits, and says why', () => {
    const long = `crm__${'find_customer_by_'.repeat(4)}email`
    const turn = run([tool(long), tool('crm__update'), tool('weather')], { maxToolNameLength: 64 })
    expect(turn.manifest.map((t) => t.name)).toEqual(['tool_description', 'tool_list', 'weather'])
    expect(turn.demotedGroups).toEqual([{ family: 'crm', tier: 5, names: [long, 'crm__update'], reason: 'nameLength' }])
    expect(turn.budget.demotedFor).toEqual({ crm: 'nameLength' })
  })

  it('keeps a tool whose own name is too long when an alias fits', () => {
    const t = tool(`crm__${'x'.repeat(70)}`)
    t.aliases = ['crm__short']
    const turn = run([t], { maxToolNameLength: 64 })
    expect(turn.manifest.map((x) => x.name)).toContain(t.name)
    expect(JSON.parse(toolsArrayJson(turn.manifest, 'openai')).map((x: { function: { name: string } }) => x.function.name)).toContain(
      'crm__short',
    )
  })

  it('judges the name the manifest sends, not an alias it does not send', () => {
    // the own name (50 characters) is what every rendering sends; an endpoint allowing 40 refuses it
    const t = tool(`crm__${'y'.repeat(45)}`)
    t.aliases = ['crm__short']
    const turn = run([t], { maxToolNameLength: 40 })
    expect(turn.budget.demotedFor).toEqual({ crm: 'nameLength' })
  })

  it('demotes lower-ranked families once the schema bytes are spent, and reports the bytes', () => {
    const big = (name: string) => {
      const t = tool(name)
      t.inputSchema = { type: 'object', properties: { q: { type: 'string', description: 'y'.repeat(2000) } } }
      return t
    }
    const tools = [big('alpha'), big('beta'), big('gamma')]
    const floorBytes = FLOOR.reduce((sum, t) => sum + toolBytes(t, 1e6), 0)
    const limit = floorBytes + toolBytes(tools[0], 1e6) * 2.5
    const turn = run(tools, { maxSchemaBytes: limit })
    expect(turn.manifest.map((t) => t.name)).toEqual(['alpha', 'beta', 'tool_description', 'tool_list'])
    expect(turn.demotedGroups.map((g) => [g.family, g.reason])).toEqual([['gamma', 'schemaBytes']])
    expect(turn.budget.schemaBytes).toBeLessThanOrEqual(limit)
    expect(turn.groups.find((g) => g.family === 'gamma')).toMatchObject({ status: 'demoted', reason: 'schemaBytes' })
  })

  it('stops measuring a schema soon after the limit, whatever its size as JSON', () => {
    const shared: Record<string, unknown> = { type: 'string', description: 'z'.repeat(1000) }
    let node: Record<string, unknown> = shared
    // 2^20 uses of one node through sharing: far more bytes as JSON than in memory
    for (let i = 0; i < 20; i++) node = { type: 'object', properties: { a: node, b: node } }
    const t = tool('huge')
    t.inputSchema = node
    // about 1 GB as JSON; the measure stops within one string past the cap
    const bytes = toolBytes(t, 10_001)
    expect(bytes).toBeGreaterThan(10_001)
    expect(bytes).toBeLessThan(12_000)
    const turn = run([t], { maxSchemaBytes: 10_000 })
    expect(turn.budget.demotedFor).toEqual({ huge: 'schemaBytes' })
  })

  it('refuses a profile the capability floor alone does not fit, naming the setting', () => {
    let err: unknown
    try {
      run([tool('weather')], { maxSchemaBytes: 10 })
    } catch (e) {
      err = e
    }
    expect(isServerToolsError(err) && err.code).toBe('BUDGET_TOO_SMALL')
    expect((err as Error).message).toContain('maxSchemaBytes')
  })
})

describe('profile fields in the catalog documents', () => {
  it('refuses a misspelt limit with its line and a did-you-mean', () => {
    const issues = checkModelCatalogDocument('models/acme/_provider.yaml', 'wireType: openai\nmaxToolNameLenght: 64\n')
    expect(issues).toEqual([expect.objectContaining({ line: 2, message: expect.stringContaining("did you mean 'maxToolNameLength'") })])
  })

  it('refuses an unknown deferral and an unknown strict cap, each where it is written', () => {
    const issues = checkModelCatalogDocument(
      'models/acme/claude.yaml',
      'deferral: sometimes\nstrict:\n  maxTools: 20\n  maxOptionalParam: 24\n',
    )
    expect(issues.map((i) => [i.pointer, i.line]).sort()).toEqual([
      ['/deferral', 1],
      ['/strict/maxOptionalParam', 4],
    ])
    expect(issues.find((i) => i.pointer === '/strict/maxOptionalParam')?.message).toContain("did you mean 'maxOptionalParams'")
  })
})
